"""Attack class: the marks an environment's Python version is read from are data its owner controls. A conda-meta
record name, a standard library folder beside the interpreter, a live interpreter's answer: a forged or ambiguous
mark makes the version not known (nothing judged on it), a link never reads the machine's folders instead of the
root's, and no fix line carries a word the environment wrote."""

from __future__ import annotations

import json
from pathlib import Path

from neurondoctor.host.rootfs import RootFS
from neurondoctor.pyenv.layouts import conda_python_version, stdlib_version
from tests.conftest import check_json, cli_env
from tests.layouts import install_into
from tests.neuron_envs import HEALTHY_STACKS, stack_wheels
from tests.wheelhouse import VenvFactory


def test_forged_or_ambiguous_conda_records_name_no_version(tmp_path: Path) -> None:
    meta = tmp_path / "conda/conda-meta"
    meta.mkdir(parents=True)
    (meta / "python-\u0663.\u0661\u0662.0-h1_0.json").write_text("{}")  # Arabic-Indic digits: no Python version
    (meta / "python-dateutil-2.9.0-pyhd8ed1ab_0.json").write_text("{}")
    assert conda_python_version(RootFS(str(tmp_path)), "/conda") is None
    (meta / "python-3.10.14-h955ad1f_0.json").write_text("{}")
    assert conda_python_version(RootFS(str(tmp_path)), "/conda") == "3.10.14"
    (meta / "python-3.12.7-hc5c86c4_0.json").write_text("{}")  # two records: which one runs is not known
    assert conda_python_version(RootFS(str(tmp_path)), "/conda") is None


def test_a_standard_library_link_reads_the_roots_folder_never_the_machines(tmp_path: Path) -> None:
    """`/usr/lib/python3.9 -> /usr/lib/python3.11` inside a root means the root's python3.11, which is not there;
    the machine running the doctor has one, and it must not decide the root's interpreter's version."""
    root = tmp_path / "root"
    (root / "usr/bin").mkdir(parents=True)
    (root / "usr/bin/python3").write_bytes(b"\x7fELF")
    (root / "usr/lib").mkdir(parents=True)
    machine_stdlib = next(Path("/usr/lib").glob("python3.*/os.py")).parent
    (root / "usr/lib/python3.9").symlink_to(machine_stdlib)
    assert stdlib_version(RootFS(str(root)), "/usr/bin/python3") is None
    (root / "usr/lib/python3.12").mkdir()
    (root / "usr/lib/python3.12/os.py").write_text("")
    assert stdlib_version(RootFS(str(root)), "/usr/bin/python3") == "3.12"


def test_a_live_interpreter_that_answers_a_forged_version(tmp_path: Path, venvs: VenvFactory) -> None:
    """An `--python` that prints the probe's shape with `version` = `3.12; touch …`: its X.Y is not known, so no
    ND-VENV-005 is raised on it and no fix line carries its words, although a lib/python3.10 holds packages."""
    prefix = tmp_path / "env"
    install_into(venvs, prefix / "lib/python3.10/site-packages", stack_wheels(HEALTHY_STACKS["2.29.1"]))
    (prefix / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.10.12\n")
    answer = {"executable": str(prefix / "bin/python"), "version": "3.12; touch /tmp/nd-owned", "prefix": str(prefix),
              "base_prefix": "/usr", "in_venv": True, "include_system_site_packages": False, "sys_path": [],
              "stdlib": [], "site_packages": [], "user_site": None, "user_site_enabled": False, "pythonpath": []}
    interpreter = prefix / "bin/python"
    interpreter.parent.mkdir(parents=True)

    def answering(version: str) -> list[str]:
        interpreter.write_text(f"#!/bin/sh\necho '{json.dumps({**answer, 'version': version})}'\n")
        interpreter.chmod(0o700)
        _, report, _ = check_json(["--python", str(interpreter)], env=cli_env({"HOME": str(tmp_path)}))
        assert not any("touch" in line for finding in report["findings"] for line in finding["fix"])
        return [finding["id"] for finding in report["findings"]]

    assert "ND-VENV-005" in answering("3.12.0")  # the same answer with a real version is judged
    assert "ND-VENV-005" not in answering("3.12; touch /tmp/nd-owned")
