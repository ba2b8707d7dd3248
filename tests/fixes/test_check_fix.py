"""`check --fix [--yes]` on this live host, against the local indexes: a stock CUDA torch over
torch-neuronx and the four PyPI placeholders are fixed and the re-check is clean; the user's pip configuration
is kept and backed up under a new name; off a terminal it needs --yes; under --root it refuses; a symlinked
pip.conf and a removal outside the environment are not touched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from neurondoctor.actions.check.fix_apply import back_up
from neurondoctor.actions.held_directories import hold_folder_of
from tests.conftest import check_json, findings_by_id, run_cli
from tests.fixes.conftest import FixIndexes, broken_venv, fix_setting, placeholder_venv
from tests.fixes.harness import bad_findings, pip_config
from tests.neuron_envs import cuda_torch_wheels
from tests.wheelhouse import VenvFactory


def fix_cli(venv: Path, env: dict[str, str], *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli(["check", "--venv", str(venv), "--fix", *extra, "--json"], env=env)


def test_fix_yes_replaces_a_cuda_torch_over_torch_neuronx(tmp_path: Path, venvs: VenvFactory,
                                                           indexes: FixIndexes) -> None:
    _, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "check-fix-cuda", indexes, {"torch": cuda_torch_wheels("2.10.0")})
    assert "ND-TORCH-001" in findings_by_id(check_json(["--venv", str(venv)], env=env)[1])
    done = fix_cli(venv, env, "--yes")
    after = json.loads(done.stdout)  # exactly one document: the check after the fixes
    assert done.returncode == 0, done.stderr
    assert bad_findings(after) == set(), (bad_findings(after), done.stderr)
    assert after["environments"][0]["torch"] == "2.9.0+cpu"
    assert "ok " in done.stderr and "--fix: checking again" in done.stderr
    assert not list(next(venv.glob("lib/python*/site-packages")).glob("nvidia_*"))


def test_fix_yes_replaces_four_placeholders_and_keeps_the_team_indexes(tmp_path: Path, venvs: VenvFactory,
                                                                       indexes: FixIndexes) -> None:
    _, env = fix_setting(tmp_path, indexes)
    venv = placeholder_venv(venvs, "check-fix-placeholders", indexes)
    original = (venv / "pip.conf").read_text()
    done = fix_cli(venv, env, "--yes")
    after = json.loads(done.stdout)
    assert done.returncode == 0 and bad_findings(after) == set(), done.stderr
    assert after["environments"][0]["release"] == "2.33.1"  # no host release: the newest with wheels for 3.11
    config = pip_config(venv, env)
    assert indexes.team[0] in config and indexes.team[1] in config and indexes.neuron in config
    backups = list(venv.glob("pip.conf.neurondoctor-*"))
    assert len(backups) == 1 and backups[0].read_text() == original
    assert f"backed up {venv / 'pip.conf'} to {backups[0]}" in done.stderr


def test_fix_off_a_terminal_without_yes_changes_nothing(tmp_path: Path, venvs: VenvFactory,
                                                        indexes: FixIndexes) -> None:
    _, env = fix_setting(tmp_path, indexes)
    venv = placeholder_venv(venvs, "check-fix-no-yes", indexes)
    before = sorted(path.name for path in next(venv.glob("lib/python*/site-packages")).iterdir())
    done = fix_cli(venv, env)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == "error: --fix without a terminal needs --yes (it would apply the plan unasked)"
    assert sorted(path.name for path in next(venv.glob("lib/python*/site-packages")).iterdir()) == before
    refused = run_cli(["check", "--root", str(tmp_path / "host"), "--venv", str(venv), "--fix", "--yes"], env=env)
    assert refused.returncode == 2 and "--fix applies fixes on the live host only" in refused.stderr
    assert not list(venv.glob("pip.conf.neurondoctor-*"))


def test_a_backup_never_replaces_an_earlier_one(tmp_path: Path) -> None:
    conf = tmp_path / "pip.conf"
    conf.write_text("first\n")
    folder, name = hold_folder_of(str(conf))
    with folder:
        first = Path(back_up(folder, name, "20261201T120000Z"))
        conf.write_text("second\n")
        second = Path(back_up(folder, name, "20261201T120000Z"))
    assert (first.name, second.name) == ("pip.conf.neurondoctor-20261201T120000Z",
                                         "pip.conf.neurondoctor-20261201T120000Z-2")
    assert (first.read_text(), second.read_text()) == ("first\n", "second\n")


def on_a_terminal(args: list[str], env: dict[str, str], answer: str) -> subprocess.CompletedProcess[str]:
    """The CLI with a pseudo-terminal as stdin (as a user at a shell), answering the question with `answer`."""
    controller, terminal = os.openpty()
    try:
        os.write(controller, answer.encode() + b"\n")
        return subprocess.run([sys.executable, "-m", "neurondoctor", *args], stdin=terminal, capture_output=True,
                              text=True, env=env, timeout=600)
    finally:
        os.close(terminal)
        os.close(controller)


def test_fix_on_a_terminal_asks_and_a_no_changes_nothing(tmp_path: Path, venvs: VenvFactory,
                                                         indexes: FixIndexes) -> None:
    _, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "check-fix-ask", indexes, {"torch": cuda_torch_wheels("2.10.0")})
    declined = on_a_terminal(["check", "--venv", str(venv), "--fix", "--json"], env, "n")
    assert "Apply 3 step(s)? [y/N] " in declined.stderr and "--fix: nothing changed" in declined.stderr
    assert declined.returncode == 1 and "ND-TORCH-001" in findings_by_id(json.loads(declined.stdout))
    accepted = on_a_terminal(["check", "--venv", str(venv), "--fix", "--json"], env, "y")
    assert accepted.returncode == 0 and bad_findings(json.loads(accepted.stdout)) == set(), accepted.stderr
