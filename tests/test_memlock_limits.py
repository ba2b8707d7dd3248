"""EFA hosts: the locked-memory limit is read from etc/security/limits.conf and limits.d/* under a
root, and from the shell's /proc/<pid>/limits on a live host; a finite one on an EFA instance is ND-RES-003."""

from __future__ import annotations

from pathlib import Path

from neurondoctor.host.memlock_limits import UNLIMITED, parse_limits_conf, parse_proc_limits
from tests.conftest import check_json, findings_by_id
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import outside_venv
from tests.wheelhouse import VenvFactory

# aws-efa-installer's file, and what a hand-edited limits.conf often holds.
EFA_CONF = "# EFA settings\n* soft memlock unlimited\n* hard memlock unlimited\n"


def test_limits_files_in_pam_order() -> None:
    assert parse_limits_conf([EFA_CONF]) == UNLIMITED
    assert parse_limits_conf(["*  soft  memlock  65536\n"]) == 64 << 20
    assert parse_limits_conf([EFA_CONF, "* soft memlock 64\n"]) == 64 << 10  # a later file wins
    assert parse_limits_conf(["* soft memlock 64\n", "ubuntu - memlock unlimited\n"], user="ubuntu") == UNLIMITED
    assert parse_limits_conf(["# * soft memlock 64\n@admin soft nofile 4096\n"]) is None
    assert parse_limits_conf(["* hard memlock unlimited\n"]) is None  # the soft limit is what a job gets


def test_proc_limits_of_the_shell() -> None:
    text = ("Limit                     Soft Limit           Hard Limit           Units\n"
            "Max locked memory         8388608              8388608              bytes\n")
    assert parse_proc_limits(text) == 8 << 20
    assert parse_proc_limits(text.replace("8388608              8388608", "unlimited            unlimited")) == (
        UNLIMITED)


def test_an_efa_host_without_the_installers_limits_file_is_warned(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "root", HostSpec(instance_type="trn1.32xlarge"))
    (root / "etc/security/limits.d/01_efa.conf").unlink()
    (root / "etc/security/limits.conf").write_text("# /etc/security/limits.conf\n*  soft  nofile  65536\n")
    code, report, _ = check_json(["--root", str(root), *outside_venv(venvs)])
    finding = findings_by_id(report)["ND-RES-003"][0]
    assert finding["severity"] == "warning" and "8192 KiB" in finding["title"]
    assert "-12" in finding["detail"] and finding["fix"][0].endswith("sudo tee /etc/security/limits.d/01_efa.conf")
    assert code == 0 and report["health"]["state"] == "degraded"


def test_near_miss_the_installers_file_and_a_non_efa_instance(tmp_path: Path, venvs: VenvFactory) -> None:
    efa = build_host(tmp_path / "efa", HostSpec(instance_type="trn1.32xlarge"))
    _, report, _ = check_json(["--root", str(efa), *outside_venv(venvs)])
    assert "ND-RES-003" not in findings_by_id(report) and report["health"]["state"] == "ok"
    small = build_host(tmp_path / "small", HostSpec(instance_type="trn1.2xlarge"))
    (small / "etc/security/limits.conf").parent.mkdir(parents=True, exist_ok=True)
    (small / "etc/security/limits.conf").write_text("* soft memlock 64\n")
    _, small_report, _ = check_json(["--root", str(small), *outside_venv(venvs)])
    assert "ND-RES-003" not in findings_by_id(small_report)  # no EFA here: a finite limit harms nothing
