"""Attack class: output and exit codes that lie. An interpreter that answers the probe with the wrong JSON, an
unreadable package database, a variable that cannot be judged: each is an error or unknown, never a pass."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import check_json, findings_by_id, without_read_privileges
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
    import os

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
    from tests.conftest import cli_env

    root = build_host(tmp_path / "root", HostSpec(instance_type="trn1.32xlarge"))
    code, report, _ = check_json(["--root", str(root)], env=cli_env({"NEURON_RT_VISIBLE_CORES": "0-" + "9" * 50}))
    assert code == 1 and findings_by_id(report)["ND-ENV-001"][0]["severity"] == "error"
