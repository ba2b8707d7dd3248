"""Bad input gets a clear one-line error and the rest of the report still comes out."""

from __future__ import annotations

import json
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurondoctor.host.rootfs import RootFS
from neurondoctor.pyenv.dist_metadata import parse_metadata_headers, read_distribution
from neurondoctor.pyenv.pip_config import parse_pip_config
from neurondoctor.pyenv.static_venv import parse_pyvenv_cfg
from neurondoctor.release_data.catalog import bundled_manifest_dir
from tests.conftest import check_json, cli_env, findings_by_id, without_read_privileges
from tests.neuron_envs import HEALTHY_STACKS, stack_wheels
from tests.wheelhouse import VenvFactory, write_pip_conf


def test_truncated_manifest_names_the_file_and_the_report_goes_on(venvs: VenvFactory, host_root: Path,
                                                                   tmp_path: Path) -> None:
    manifests = tmp_path / "manifests"
    shutil.copytree(bundled_manifest_dir(), manifests)
    broken = manifests / "releases" / "2.30.0.json"
    broken.write_bytes(broken.read_bytes()[:500])
    venv = venvs.create("truncated-manifest")
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.31.1"]))
    write_pip_conf(venv)
    code, report, stderr = check_json(["--root", str(host_root), "--venv", str(venv)],
                                      env=cli_env({"NEURONDOCTOR_MANIFESTS": str(manifests)}))
    assert code == 2
    assert stderr.strip().splitlines() == [f"error: {broken}: corrupt or truncated JSON "
                                           f"({stderr.split('JSON (', 1)[1].split(')', 1)[0]})"]
    assert "Traceback" not in stderr
    assert report["errors"][0]["source"] == str(broken)
    assert report["release"]["environments"][str(venv)] == "2.31.1"
    assert {check["id"] for check in report["checks"]} == {
        "hardware", "driver", "runtime", "devices", "host-env", "python-env", "neuron-release", "pytorch-stack",
        "pip-index"}


def test_garbage_metadata_is_a_finding_not_a_traceback(venvs: VenvFactory, host_root: Path) -> None:
    venv = venvs.create("garbage-metadata")
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.31.1"]))
    write_pip_conf(venv)
    site = next(venv.glob("lib/python*/site-packages"))
    metadata = next(site.glob("numpy-*.dist-info")) / "METADATA"
    metadata.write_bytes(b"\xff\xfe\x00garbage without headers\n\x80\x81: :\n")
    (site / "broken-0.1.dist-info").mkdir()
    code, report, stderr = check_json(["--root", str(host_root), "--venv", str(venv)])
    finding = findings_by_id(report)["ND-VENV-003"][0]
    assert (finding["category"], finding["severity"]) == ("broken-venv", "warning")
    assert any("numpy" in problem for problem in finding["evidence"]["problems"])
    assert any("broken-0.1.dist-info" in problem for problem in finding["evidence"]["problems"])
    assert "Traceback" not in stderr
    assert code == 0


def test_unreadable_site_packages(venvs: VenvFactory, host_root: Path) -> None:
    base = Path(tempfile.mkdtemp(prefix="nd-unreadable-"))
    try:
        venv = venvs.create("unreadable", parent=base)
        venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.31.1"]))
        site = next(venv.glob("lib/python*/site-packages"))
        site.chmod(0)
        code, report, stderr = check_json(["--root", str(host_root), "--venv", str(venv)],
                                          prefix=without_read_privileges())
        finding = findings_by_id(report)["ND-VENV-003"][0]
        assert any("Permission denied" in problem or "unreadable" in problem
                   for problem in finding["evidence"]["problems"])
        assert "Traceback" not in stderr
        assert code == 0
    finally:
        for path in base.rglob("*"):
            if path.is_dir():
                path.chmod(stat.S_IRWXU)
        shutil.rmtree(base)


def test_unknown_format_and_selector_are_usage_errors() -> None:
    from tests.conftest import run_cli

    bad_format = run_cli(["check", "--format", "yaml"])
    assert bad_format.returncode == 2
    assert "--format yaml: expected text, json, markdown, nhc or npd" in bad_format.stderr
    bad_select = run_cli(["check", "--select", "nonsense"])
    assert bad_select.returncode == 2 and "not a check" in bad_select.stderr
    bad_root = run_cli(["check", "--root", "/does/not/exist"])
    assert bad_root.returncode == 2


def test_a_missing_python_is_a_usage_error_not_a_finding(tmp_path: Path) -> None:
    """A typo is no node verdict (tests/test_typed_paths.py has every command)."""
    from tests.conftest import run_cli

    result = run_cli(["check", "--json", "--python", str(tmp_path / "no-python")])
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == f"error: --python {tmp_path / 'no-python'}: no such file\n"


def test_python_that_hangs_or_fails_is_reported(tmp_path: Path) -> None:
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\necho 'not json'\nexit 3\n")
    fake.chmod(0o755)
    code, report, _ = check_json(["--python", str(fake)])
    finding = findings_by_id(report)["ND-VENV-002"][0]
    assert "exited with status 3" in finding["detail"]
    assert code == 1


def test_json_output_is_one_document_even_with_non_utf8_paths(venvs: VenvFactory, host_root: Path) -> None:
    venv = venvs.create("latin")
    site = next(venv.glob("lib/python*/site-packages"))
    odd = site / "odd-1.0.dist-info"
    odd.mkdir()
    (odd / "METADATA").write_bytes(b"Metadata-Version: 2.1\nName: odd\nVersion: 1.0\nSummary: caf\xe9\n\n")
    result = subprocess.run(["python3", "-c", "pass"], capture_output=True)  # PATH sanity for the CLI runner
    assert result.returncode == 0
    code, report, _ = check_json(["--root", str(host_root), "--venv", str(venv)])
    assert json.dumps(report)
    assert code == 0


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600))
def test_metadata_parser_survives_any_bytes(data: bytes) -> None:
    headers, requires, problems = parse_metadata_headers(data)
    assert isinstance(headers, dict) and isinstance(requires, list) and isinstance(problems, list)


@settings(max_examples=50, deadline=None)
@given(st.binary(max_size=400))
def test_dist_info_reader_survives_any_metadata(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    site = tmp_path_factory.mktemp("site")
    info = site / "pkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_bytes(data)
    (info / "top_level.txt").write_bytes(data[:50])
    dist = read_distribution(RootFS("/"), str(site), info.name)
    assert dist is not None and dist.name


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_config_parsers_survive_any_text(text: str) -> None:
    parse_pyvenv_cfg(text)
    source = parse_pip_config("pip.conf", text)
    assert source.origin == "pip.conf"
