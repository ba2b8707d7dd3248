"""Attack class: output and exit codes that lie. An interpreter that answers the probe with the wrong JSON, an
unreadable package database, a variable that cannot be judged: each is an error or unknown, never a pass."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.conftest import check_json, cli_env, findings_by_id, without_read_privileges
from tests.host_fixture import HostSpec, build_host


@pytest.mark.parametrize("printed", ['{"executable": 5}', "[1, 2, 3]", '{"sys_path": "not a list"}',
                                     '"just a string"', "[" * 5000 + "]" * 5000,
                                     '{"executable": "/x", "version": "3.11.7", "prefix": "/x", "in_venv": true, '
                                     '"include_system_site_packages": false, "sys_path": [1], "stdlib": [], '
                                     '"site_packages": [], "user_site": null, "user_site_enabled": false, '
                                     '"pythonpath": []}'])
def test_a_python_that_prints_json_of_the_wrong_shape_is_broken(tmp_path: Path, printed: str) -> None:
    fake = tmp_path / "python3"
    (tmp_path / "answer.json").write_text(printed + "\n")
    fake.write_text(f"#!/bin/sh\ncat '{tmp_path / 'answer.json'}'\n")
    fake.chmod(0o755)
    (tmp_path / "root").mkdir()
    code, report, stderr = check_json(["--root", str(tmp_path / "root"), "--python", str(fake)])
    finding = findings_by_id(report)["ND-VENV-002"][0]
    assert code == 1 and finding["category"] == "broken-venv" and finding["severity"] == "error"
    assert report["health"]["state"] == "unhealthy" and "Traceback" not in stderr


@pytest.mark.parametrize("breakage", ["directory", "unreadable", "fifo"])
def test_an_unreadable_package_database_is_never_no_driver(tmp_path: Path, breakage: str) -> None:
    root = build_host(tmp_path / "root", HostSpec())
    status = root / "var/lib/dpkg/status"
    prefix: list[str] = []
    if breakage == "directory":
        status.unlink()
        status.mkdir()
    elif breakage == "fifo":
        status.unlink()
        os.mkfifo(status)
    else:
        status.chmod(0)
        prefix = without_read_privileges()
    code, report, _ = check_json(["--root", str(root)], prefix=prefix)
    assert code == 3 and report["health"]["state"] == "unknown"
    assert "ND-DRV-001" not in findings_by_id(report)
    assert any("could not read the package database" in reason for reason in report["health"]["reasons"])


def test_a_variable_that_cannot_be_judged_is_never_a_silent_pass(tmp_path: Path) -> None:
    root = build_host(tmp_path / "root", HostSpec(instance_type="trn1.32xlarge"))
    code, report, _ = check_json(["--root", str(root)], env=cli_env({"NEURON_RT_VISIBLE_CORES": "0-" + "9" * 50}))
    assert code == 1 and findings_by_id(report)["ND-ENV-001"][0]["severity"] == "error"


AS_UID_1000 = ["setpriv", "--reuid", "1000", "--regid", "1000", "--clear-groups"]


def _runs_as_another_user() -> bool:
    """Root with setpriv, and an interpreter uid 1000 may execute (a Python under /root is not)."""
    if os.geteuid() != 0 or shutil.which("setpriv") is None:
        return False
    probe = subprocess.run([*AS_UID_1000, sys.executable, "-c", "pass"], capture_output=True, timeout=30)
    return probe.returncode == 0


@pytest.mark.skipif(not _runs_as_another_user(),
                    reason="needs root, setpriv and an interpreter uid 1000 can execute (this one is under a 0700 "
                           "home); the same files are tested unreadable as root without CAP_DAC_OVERRIDE above")
def test_files_another_user_cannot_read_are_could_not_read(tmp_path: Path) -> None:
    """As an ordinary user (uid 1000), a root-only dpkg status and a root-only dist-info: unknown and damaged,
    never "no driver" or a healthy environment."""
    base = Path(tempfile.mkdtemp(prefix="nd-other-user-"))
    try:
        base.chmod(0o755)
        root = build_host(base / "root", HostSpec())
        (root / "var/lib/dpkg/status").chmod(0o600)
        venv = base / "venv"
        site = venv / "lib/python3.11/site-packages"
        (site / "secret_pkg-1.0.dist-info").mkdir(parents=True)
        (venv / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n")
        (venv / "bin").mkdir()
        (venv / "bin/python").symlink_to(sys.executable)
        (site / "secret_pkg-1.0.dist-info/METADATA").write_text("Name: secret-pkg\nVersion: 1.0\n")
        (site / "secret_pkg-1.0.dist-info/METADATA").chmod(0o600)
        for path in [base, *base.rglob("*")]:
            if path.is_dir():
                path.chmod(0o755)
        code, report, stderr = check_json(["--root", str(root), "--venv", str(venv)],
                                          env=cli_env({"HOME": str(base), "PYTHONDONTWRITEBYTECODE": "1"}),
                                          prefix=AS_UID_1000)
        assert "Traceback" not in stderr
        assert code == 3 and report["health"]["state"] == "unknown", report["health"]
        assert "ND-DRV-001" not in findings_by_id(report)
        assert "ND-VENV-003" in findings_by_id(report), report["health"]
        damaged = findings_by_id(report)["ND-VENV-003"][0]
        assert any("METADATA missing or unreadable" in problem for problem in damaged["evidence"]["problems"])
    finally:
        shutil.rmtree(base, ignore_errors=True)
