"""`check` and `health` run through the one command line to the interpreter's normal exit: what they
print into a regular file or a pipe, the status file they write and their exit codes are whole all the same."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, cli_env
from tests.host_fixture import HostSpec, build_host


def _run_into_file(args: list[str], out: Path) -> int:
    """`python -m neurondoctor ARGS > out` through a shell: stdout a regular file, not the test's pipe."""
    command = " ".join([sys.executable, "-m", "neurondoctor", *args]) + f" > {out}"
    return subprocess.run(["sh", "-c", command], env=cli_env(), cwd=str(REPO), timeout=120).returncode


def test_the_report_reaches_a_file_whole_and_the_exit_code_is_kept(tmp_path: Path) -> None:
    healthy = build_host(tmp_path / "healthy", HostSpec())
    broken = build_host(tmp_path / "broken", HostSpec(driver_loaded=False))
    assert _run_into_file(["check", "--json", "--root", str(healthy)], tmp_path / "ok.json") == 0
    assert json.loads((tmp_path / "ok.json").read_text())["health"]["state"] == "ok"
    assert _run_into_file(["check", "--json", "--root", str(broken)], tmp_path / "bad.json") == 1
    assert json.loads((tmp_path / "bad.json").read_text())["health"]["state"] == "unhealthy"


def test_health_writes_its_status_file_whole_before_it_ends(tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec())
    status = tmp_path / "health.json"
    code = _run_into_file(["health", "--root", str(root), "--format", "json", "--status-file", str(status)],
                          tmp_path / "out.json")
    assert code == 0
    assert json.loads((tmp_path / "out.json").read_text())["health"]["state"] == "ok"
    assert json.loads(status.read_text())["state"] == "ok"
