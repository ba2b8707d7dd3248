"""What every fix-execution test does: the user's own pip world, a fix line pasted into a shell, the
check again, and the rule that nothing new may be wrong afterwards."""

from __future__ import annotations

import glob
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import check_json, cli_env, findings_by_id
from tests.wheelhouse import venv_python


def user_env(tmp_path: Path) -> dict[str, str]:
    """This user's pip world only: their HOME, no machine-wide XDG pip config, no PIP_* variables; `neurondoctor`
    (and uv beside it) on PATH, as for the user who ran the check."""
    env = cli_env({"HOME": str(tmp_path / "home"), "XDG_CONFIG_DIRS": str(tmp_path / "xdg")})
    env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '')}"
    for variable in [name for name in env if name.startswith("PIP_")]:
        env.pop(variable)
    return env


def run_verbatim(line: str, env: dict[str, str]) -> None:
    """A fix line as the user pastes it into a shell."""
    done = subprocess.run(["sh", "-c", line], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, f"{line}\n{done.stdout}{done.stderr}"


def pip_config(venv: Path, env: dict[str, str]) -> str:
    """`pip config list` as the environment's own pip sees it: what a fix must leave of the user's settings."""
    return subprocess.run([str(venv_python(venv)), "-m", "pip", "config", "list"], check=True, capture_output=True,
                          text=True, timeout=120, env=env).stdout


def bad_findings(report: dict[str, object]) -> set[tuple[str, str]]:
    return {(str(item["id"]), str(item["title"])) for item in report["findings"]  # type: ignore[union-attr]
            if item["severity"] in ("error", "warning")}


def fix_and_check(args: list[str], env: dict[str, str], finding_id: str) -> dict[str, object]:
    """Run the finding's printed lines verbatim; the check after them has no warning or error left. Returns it."""
    before = check_json(args, env=env)[1]
    found = findings_by_id(before)
    assert finding_id in found, sorted(found)
    finding: dict[str, object] = found[finding_id][0]
    for line in finding["fix"]:  # type: ignore[attr-defined]
        run_verbatim(str(line), env)
    after = check_json(args, env=env)[1]
    assert bad_findings(after) == set(), (finding["fix"], bad_findings(after))
    return finding


def working_python(folder: Path, version: str) -> Path:
    """A `pythonX.Y` that runs, linked into `folder` (a pyenv shim on PATH may name a version that is not enabled):
    the one on PATH, else one pyenv installed; the test skips without one."""
    candidates = [shutil.which(f"python{version}"), *sorted(glob.glob(
        str(Path.home() / f".pyenv/versions/{version}*/bin/python{version}")))]
    for candidate in filter(None, candidates):
        if subprocess.run([candidate, "-c", "pass"], capture_output=True, timeout=60).returncode == 0:
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"python{version}").symlink_to(candidate)
            return folder / f"python{version}"
    pytest.skip(f"needs a python{version} that runs (the Inf1 lines' wheels are for Python 3.8-3.10)")
