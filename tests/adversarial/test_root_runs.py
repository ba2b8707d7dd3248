"""Attack class: root runs code another user controls.

As root, the doctor starts interpreters for `--python`, the probes, `venv create --python` and `check --fix`. An
environment owned by another user (uid 65534 here), or one whose site-packages another user can write (a `.pth`
file there runs at interpreter start), is refused with one line that names the path and its owner, and nothing
of it runs. `--fix` with no environment named acts only on the activated one, never on those it discovered.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from neurondoctor.actions.check.check_run import CheckOptions, run_check
from neurondoctor.actions.check.fix_apply import SKIP, plan_fixes
from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.run_trust import refusal_to_run
from tests.conftest import cli_env, run_cli
from tests.host_fixture import HostSpec, build_host

NOBODY = 65534
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="root refusing another user's files needs root (CI is)")


def _venv(base: Path, name: str, neuron: bool = True) -> Path:
    """A real venv with a `.pth` file that would leave a mark if the interpreter ever started, and a Neuron
    package record so that its pip configuration is judged (ND-PIP-002 has a `pip config` fix)."""
    venv = base / name
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    site = next(venv.glob("lib/python*/site-packages"))
    (site / "mark.pth").write_text(f"import pathlib; pathlib.Path({str(base / (name + '.ran'))!r}).touch()\n")
    if neuron:
        info = site / "neuronx_cc-2.21.18209.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: neuronx-cc\nVersion: 2.21.18209.0\n")
    return venv


def _give_away(path: Path) -> None:
    for folder, dirs, files in os.walk(path):
        for name in [folder, *(os.path.join(folder, entry) for entry in dirs + files)]:
            os.lchown(name, NOBODY, NOBODY)


def test_check_refuses_to_run_another_users_interpreter(tmp_path: Path) -> None:
    venv = _venv(tmp_path, "theirs")
    _give_away(venv)
    result = run_cli(["check", "--root", str(build_host(tmp_path / "root", HostSpec())), "--python",
                      str(venv / "bin/python")])
    assert result.returncode == 2 and "refusing to run" in result.stderr and "uid 65534" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "theirs.ran").exists()


def test_a_site_packages_others_can_write_is_refused(tmp_path: Path) -> None:
    venv = _venv(tmp_path, "open")
    site = next(venv.glob("lib/python*/site-packages"))
    site.chmod(0o777)
    python = str(venv / "bin/python")
    assert refusal_to_run(python) == f"refusing to run {python} as root: {site} is writable by every user"
    for arguments in (["probe", "ops", "builtin:mlp", "--python", python],
                      ["venv", "create", str(tmp_path / "new"), "--release", "2.31.1", "--python", python]):
        result = run_cli(arguments)
        assert result.returncode == 2 and "is writable by every user" in result.stderr, (arguments, result.stderr)
    assert not (tmp_path / "open.ran").exists() and not (tmp_path / "new").exists()


def test_fix_applies_nothing_in_another_users_environment(tmp_path: Path) -> None:
    venv = _venv(tmp_path, "theirs")
    _give_away(venv)
    result = run_cli(["check", "--fix", "--yes", "--venv", str(venv)], env=cli_env())
    assert "refusing to run" in result.stderr and "uid 65534" in result.stderr, result.stderr
    assert not (venv / "pip.conf").exists() and not (tmp_path / "theirs.ran").exists()


def test_fix_with_no_environment_named_acts_only_on_the_activated_one(tmp_path: Path,
                                                                     catalog: ReleaseCatalog) -> None:
    venv = _venv(tmp_path, "discovered")
    report = run_check(CheckOptions(root=str(build_host(tmp_path / "root", HostSpec())), venvs=[str(venv)],
                                    environ={}), catalog=catalog)
    assert any(summary.fix_plan for summary in report.environments)  # a plan exists for it
    assert plan_fixes(report, {}, named=False) == []
    planned = plan_fixes(report, {"VIRTUAL_ENV": str(venv)}, named=False)
    assert [fix.path for fix in planned] == [str(venv)] and any(step.action != SKIP for step in planned[0].steps)
