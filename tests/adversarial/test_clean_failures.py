"""Attack class: a place to write that cannot take the file.

`bundle -o /etc/passwd/x.tar.gz` ended in a NotADirectoryError traceback, `venv create` into /proc or a directory
this user cannot write in, `health --status-file` and `--output` under a file, `--save-reports` under a file: each
an OSError from deep in a write. A target the user named is looked at first (neurondoctor/output_targets.py): one
`error:` line and exit 2, nothing written; any other OSError a command meets is one line and exit 3 (cli/main.py)."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import cli_env, run_cli
from tests.host_fixture import HostSpec, build_host

NOBODY = ["setpriv", "--reuid", "65534", "--regid", "65534", "--clear-groups"]


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_host(tmp_path_factory.mktemp("targets") / "root", HostSpec(instance_type="trn1.32xlarge"))


def _one_error_line(done: subprocess.CompletedProcess[str], code: int) -> str:
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert "Traceback" not in done.stderr and len(errors) == 1, done.stderr
    assert done.returncode == code, (done.returncode, done.stderr)
    return errors[0]


def _cases(root: Path, file: Path) -> dict[str, tuple[list[str], str]]:
    """What each command is given, and what its one line says. `file` is a regular file standing where a directory
    belongs."""
    return {
        "bundle -o under a file": (["bundle", "--root", str(root), "-o", f"{file}/x.tar.gz"], "Not a directory"),
        "bundle -o into a missing directory": (["bundle", "--root", str(root), "-o", f"{file}.d/none/x.tar.gz"],
                                               "does not exist"),
        "venv create under a file": (["venv", "create", f"{file}/venv", "--release", "2.31.1"], "not a directory"),
        "venv create in /proc": (["venv", "create", "/proc/neurondoctor-venv", "--release", "2.31.1"],
                                 "cannot create"),
        "health --status-file under a file": (["health", "--root", str(root), "--status-file", f"{file}/h.json"],
                                              "not a directory"),
        "health --status-file into a missing directory": (
            ["health", "--root", str(root), "--status-file", f"{file}.d/none/h.json"], "does not exist"),
        "health --output under a file": (["health", "--root", str(root), "--format", "prometheus", "--output",
                                          f"{file}/h.prom"], "not a directory"),
        "health --output into a missing directory": (["health", "--root", str(root), "--format", "json", "--output",
                                                      f"{file}.d/none/h.json"], "does not exist"),
        "bootstrap --status-file under a file": (["bootstrap", "--release", "2.31.1", "--venv", f"{file}.venv",
                                                  "--root", str(root), "--status-file", f"{file}/b.json"],
                                                 "Not a directory"),
    }


CASES = list(_cases(Path("/r"), Path("/f")))


@pytest.mark.parametrize("name", CASES)
def test_a_target_that_cannot_take_the_file_is_one_line_and_exit_2(tmp_path: Path, root: Path, name: str) -> None:
    file = tmp_path / "a-file"
    file.write_text("someone's file\n")
    arguments, said = _cases(root, file)[name]
    line = _one_error_line(run_cli(arguments), 2)
    assert said in line, line
    assert file.read_text() == "someone's file\n" and sorted(os.listdir(tmp_path)) == ["a-file"]  # nothing written


def test_save_reports_under_a_file_is_one_line_and_exit_2(tmp_path: Path) -> None:
    file = tmp_path / "a-file"
    file.write_text("x\n")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "srun").write_text("#!/bin/sh\nexit 1\n")
    (fake / "srun").chmod(0o755)
    env = cli_env({"PATH": f"{fake}:{os.environ['PATH']}", "SLURM_JOB_NODELIST": "trn-1", "SLURM_JOB_ID": "1"})
    line = _one_error_line(run_cli(["fleet", "check", "--slurm", "--save-reports", f"{file}/reports"], env=env), 2)
    assert "--save-reports" in line and "Not a directory" in line


def _runs_as_nobody() -> bool:
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return False
    return subprocess.run([*NOBODY, sys.executable, "-c", "pass"], capture_output=True, timeout=30).returncode == 0


@pytest.mark.skipif(not _runs_as_nobody(), reason="needs root, setpriv and an interpreter uid 65534 can execute")
@pytest.mark.parametrize("command", ["bundle", "venv", "health", "bootstrap"])
def test_a_directory_this_user_cannot_write_is_one_line_and_exit_2(command: str) -> None:
    base = Path(tempfile.mkdtemp(prefix="nd-targets-"))  # pytest's own folders are root's only (0700)
    try:
        base.chmod(0o755)
        root = build_host(base / "root", HostSpec(instance_type="trn1.32xlarge"))
        for path in [base, *base.rglob("*")]:
            if path.is_dir() and not path.is_symlink():
                path.chmod(0o755)
        closed = base / "root-only"
        closed.mkdir(mode=0o700)
        arguments = {
            "bundle": ["bundle", "--root", str(root), "-o", f"{closed}/b.tar.gz"],
            "venv": ["venv", "create", f"{closed}/venv", "--release", "2.31.1"],
            "health": ["health", "--root", str(root), "--status-file", f"{closed}/h.json"],
            "bootstrap": ["bootstrap", "--release", "2.31.1", "--venv", f"{base}/venv", "--root", str(root),
                          "--status-file", f"{closed}/b.json"],
        }[command]
        line = _one_error_line(run_cli(arguments, env=cli_env({"HOME": str(base)}), prefix=NOBODY), 2)
        assert "ermission denied" in line, line
        assert os.listdir(closed) == [] and stat.S_IMODE(closed.stat().st_mode) == 0o700
    finally:
        shutil.rmtree(base, ignore_errors=True)


def test_any_other_oserror_of_a_command_is_one_line_and_exit_3(monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The net under every command: an OSError none of them turned into its own line (here: the release data that
    cannot be read halfway through a run) is still one line, exit 3 (the doctor could not finish)."""
    from neurondoctor.cli import main
    from neurondoctor.release_data import catalog

    def unreadable() -> None:
        raise PermissionError(13, "Permission denied", "/usr/share/neurondoctor/manifests/sdk.json")

    monkeypatch.setattr(catalog, "load_catalog", unreadable)
    code = main.run(["manifests", "list"])
    err = capsys.readouterr().err
    assert code == 3 and err.splitlines() == [
        "error: /usr/share/neurondoctor/manifests/sdk.json: Permission denied (the command could not finish)"], err
