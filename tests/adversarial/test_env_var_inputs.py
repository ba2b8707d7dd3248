"""Attack class: environment variables and their data as input. A value someone else set (shell syntax, a
megabyte, a non-number where a size is carried over) never becomes a runnable word of a fix line, and a corrupt
manifests/env-vars.json is one error line while the rest of the report still comes out."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

from neurondoctor.actions.check.check_run import CheckOptions, run_check
from neurondoctor.release_data.catalog import ReleaseCatalog, bundled_manifest_dir
from tests.conftest import check_json, cli_env, findings_by_id
from tests.host_fixture import HostSpec, build_host


def _findings(catalog: ReleaseCatalog, root: Path, environ: dict[str, str]) -> list[tuple[str, str, list[str]]]:
    report = run_check(CheckOptions(root=str(root), environ=environ, select=["host-env"]), catalog=catalog)
    return [(finding.id, finding.title, finding.fix_lines) for finding in report.findings]


def test_a_value_with_shell_syntax_is_one_quoted_word(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge"))
    hostile = "yes'; touch /tmp/pwned #"
    ((finding_id, _, fix),) = _findings(catalog, root, {"NEURON_RT_VALIDATE_HASH": hostile})
    assert (finding_id, fix) == ("ND-ENV-006", ["unset NEURON_RT_VALIDATE_HASH"])
    # a retired variable's value is not carried to its equivalent unless it is the number the equivalent takes
    ((_, _, carried),) = _findings(catalog, root, {"BUCKET_CAP_MB": "512; rm -rf ~"})
    assert carried == []
    ((_, _, plain),) = _findings(catalog, root, {"BUCKET_CAP_MB": "512"})
    assert [shlex.split(line) for line in plain] == [["export", "ALLREDUCE_GRADIENTS_BUCKET_SIZE_MB=512"],
                                                     ["unset", "BUCKET_CAP_MB"]]


def test_a_megabyte_value_gives_a_short_title(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec())
    ((finding_id, title, _),) = _findings(catalog, root, {"NEURON_RT_LOG_LEVEL": "X" * (1 << 20)})
    assert finding_id == "ND-ENV-006" and len(title) < 200


def test_a_corrupt_env_vars_file_is_one_error_line_and_the_report_goes_on(tmp_path: Path) -> None:
    manifests = tmp_path / "manifests"
    shutil.copytree(bundled_manifest_dir(), manifests)
    broken = manifests / "env-vars.json"
    broken.write_text('{"schema": "neurondoctor.env-vars/1", "variables": {"NEURON_RT_X": {"owner": "runtime", '
                      '"kind": "colour", "values": "not stated", "closed": false, "source": "x"}}, "retired": {}}')
    root = build_host(tmp_path / "trn2", HostSpec(instance_type="trn2.48xlarge"))
    env = cli_env({"NEURONDOCTOR_MANIFESTS": str(manifests), "NEURONCORE_GROUP_SIZES": "4",
                   "NEURON_RT_VISIBLE_CORES": "0-63"})
    code, report, stderr = check_json(["--root", str(root), "--select", "host-env"], env=env)
    assert code == 2 and "Traceback" not in stderr
    assert stderr.strip().splitlines() == [
        f"error: {broken}: unexpected shape: env-vars.variables.NEURON_RT_X.kind: expected one of "
        "['address', 'bool', 'core-list', 'count-list', 'enum', 'flags', 'integer', 'path', 'text', 'unstated']"]
    # no data, no verdict on retired names; the logical-core families fall back to instances.json, so 64 logical
    # cores on a trn2.48xlarge are still right
    assert findings_by_id(report) == {}
