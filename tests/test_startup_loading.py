"""What `check` loads for what it judges: a reader, a table or a record class that only some facts need is loaded
when those facts are there, never on a run without them (start-up is `check`'s budget: docs/measured.md).

Each lazy load has its near miss beside it: the run whose facts need the reader loads it and reports what it always
reported. The modules a run loaded are read from a real `check` in a subprocess, as a user runs it."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

from neurondoctor.release_data.catalog import ReleaseCatalog, load_catalog
from neurondoctor.release_data.env_var_table import EnvVarTable
from tests.conftest import REPO, make_host_root, validated_report
from tests.host_fixture import HostSpec, build_host
from tests.wheelhouse import VenvFactory, WheelSpec

# Runs one command line in this interpreter, its report into a file, then prints the modules it loaded and the
# secret patterns it compiled (redaction compiles each when a text first may hold its secret).
_LOADED = """
import contextlib, json, sys
from neurondoctor import redaction
compiled = []
def compiling(source, flags=0, compile=redaction._compiled):
    compiled.append(source)
    return compile(source, flags)
redaction._compiled = compiling
from neurondoctor.cli.main import run
with open(sys.argv[1], "w") as report, contextlib.redirect_stdout(report):
    code = run(sys.argv[2:])
names = sorted({secret.name for secret in redaction.SECRET_PATTERNS if secret.source in compiled})
print(json.dumps({"code": code, "modules": sorted(sys.modules), "secret_patterns": names}))
"""

# Loaded only for the facts that need them: the OS tables (Neuron hardware or packages), the environment-variable
# table (a variable the data lists is set), the kernel log's reader and its record (Neuron hardware), the
# device-holder walk and its record (device nodes) and discovery (no environment named).
NEEDS_FACTS = ("neurondoctor.release_data.os_support", "neurondoctor.release_data.env_var_table",
               "neurondoctor.host.kernel_log", "neurondoctor.facts.kernel_errors", "neurondoctor.host.device_holders",
               "neurondoctor.facts.device_holders", "neurondoctor.pyenv.discovery")


class Loaded(NamedTuple):
    """What one `check` loaded: its modules, the secret patterns it compiled (by name), and its report."""

    modules: set[str]
    secret_patterns: list[str]
    report: dict[str, Any]


def loaded_by_check(tmp_path: Path, args: list[str], environ: dict[str, str]) -> Loaded:
    """What `check --json ARGS` loaded, and its report (validated as every test reads one)."""
    report = tmp_path / "report.json"
    done = subprocess.run([sys.executable, "-c", _LOADED, str(report), "check", "--json", *args], capture_output=True,
                          text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), **environ}, cwd=str(REPO),
                          timeout=120)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout.splitlines()[-1])
    return Loaded(set(answer["modules"]), answer["secret_patterns"], validated_report(report.read_text()))


def test_a_machine_without_neuron_loads_none_of_the_neuron_readers(tmp_path: Path, venvs: VenvFactory) -> None:
    """A CPU machine where someone ports a model (the start-up bench's shape, docs/measured.md): no Neuron device,
    driver or package, no Neuron variable set, one environment named. None of the readers and tables that only
    Neuron facts need is loaded, and torch never is."""
    root = make_host_root(tmp_path / "cpu-host", instance_type=None)
    venv = venvs.create("porting")
    venvs.install(venv, [WheelSpec("numpy", "2.1.3"), WheelSpec("pandas", "2.2.3", requires=("numpy>=1.26.0",))])
    modules, _, report = loaded_by_check(tmp_path, ["--root", str(root), "--venv", str(venv)], {"LANG": "C.UTF-8"})
    assert [module for module in NEEDS_FACTS if module in modules] == []
    assert "torch" not in modules
    assert report["findings"] == [] and report["facts"]["host"]["snapshot"]["device_nodes"] == []


def test_a_neuron_host_loads_them_and_judges_as_before(tmp_path: Path) -> None:
    """The near miss: a trn1.32xlarge of release 2.31.1 (tests/host_fixture.py, from AWS's release data) whose
    user still sets NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS, which only warns from Neuron 2.32.0
    (release-notes/components/runtime.rst), no environment named. Every reader is loaded because its facts are
    there, and the retired variable is still an info on this 2.31.1 host. Its cores and compiler flags hold no
    secret's name: `NEURON_RT_VISIBLE_CORES=0-31`, every core of a trn1.32xlarge in the range form
    nrt-configurable-parameters.rst gives ("Integer range (like 1-3)"), and `--model-type=transformer`, the flag
    the compile_flags.txt of Hugging Face's aws-neuron/optimum-neuron-cache record for neuronx-cc 2.11 modules. No
    pattern keyed on a secret's name is compiled (only the 40-character key's, for the longer texts redacted)."""
    root = build_host(tmp_path / "trn1", HostSpec(instance_type="trn1.32xlarge"))
    modules, secret_patterns, report = loaded_by_check(tmp_path, ["--root", str(root)], {
        "NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS": "3", "NEURON_RT_VISIBLE_CORES": "0-31",
        "NEURON_CC_FLAGS": "--model-type=transformer"})
    assert [module for module in NEEDS_FACTS if module not in modules] == []
    assert secret_patterns == ["AWS secret access key"]
    assert report["facts"]["host"]["snapshot"]["device_nodes"] != []
    retired = [finding for finding in report["findings"] if finding["id"] == "ND-ENV-005"]
    assert [(finding["severity"], finding["evidence"]["variable"]) for finding in retired] == [
        ("info", "NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS")]


def test_the_variables_a_report_keeps_are_the_tables_names(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    """Which variables a report keeps is read from env-vars.json itself on every run; the table is built only when a
    rule asks. Both give the same names, for the bundled data and for a file that could not be used (then none)."""
    assert catalog.env_var_names == EnvVarTable(catalog.env_vars).names
    assert "NEURONCORE_GROUP_SIZES" in catalog.env_var_names and "NEURON_RT_VISIBLE_CORES" in catalog.env_var_names
    manifests = tmp_path / "manifests"
    shutil.copytree(catalog.source_dir, manifests)
    (manifests / "env-vars.json").write_text("{not json")
    broken = load_catalog(manifests)
    assert [problem.path for problem in broken.problems] == [str(manifests / "env-vars.json")]
    assert broken.env_var_names == EnvVarTable(broken.env_vars).names == frozenset()


def test_every_record_class_check_creates_says_what_it_holds(tmp_path: Path) -> None:
    """A dataclass without a docstring gets one built with inspect.signature when its class is created: on every
    run, for every such class `check` imports. Each one a check loads has its own."""
    root = build_host(tmp_path / "trn1", HostSpec(instance_type="trn1.32xlarge"))
    modules = loaded_by_check(tmp_path, ["--root", str(root)], {}).modules
    undocumented = []
    for module in sorted(name for name in modules if name.startswith("neurondoctor")):
        relative = Path(*module.split("."))
        path = REPO / relative.with_suffix(".py") if (REPO / relative.with_suffix(".py")).is_file() else (
            REPO / relative / "__init__.py")
        for node in ast.walk(ast.parse(path.read_text())):
            if (isinstance(node, ast.ClassDef) and ast.get_docstring(node) is None
                    and any("dataclass" in ast.unparse(decorator) for decorator in node.decorator_list)):
                undocumented.append(f"{module}.{node.name}")
    assert undocumented == []
