"""What the real-Slurm tests share: Debian's slurm 22.05 and munge on 127.0.0.1, started by the test as root and
stopped on every path (tests/test_slurm_integration.py: one node running the health check;
tests/test_fleet_preflight_slurm.py: five nodes, one slurmd each, for the cluster preflight)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

import pytest

PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def ensure_packages() -> None:
    if all(shutil.which(tool) for tool in ("slurmd", "slurmctld", "scontrol", "munged")):
        return
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    install = ["apt-get", "install", "-y", "--no-install-recommends", *PACKAGES]
    done = subprocess.run(install, capture_output=True, text=True, timeout=900, env=env)
    if done.returncode != 0:
        subprocess.run(["apt-get", "update"], capture_output=True, timeout=600, env=env)
        done = subprocess.run(install, capture_output=True, text=True, timeout=900, env=env)
    if done.returncode != 0:
        pytest.fail(f"could not install {' '.join(PACKAGES)}: {done.stderr.strip()[-500:]}")


def start_munge(directory: Path) -> Path:
    """A munged of the test's own (its socket under `directory`); returns its pid file."""
    directory.chmod(0o755)  # munged checks every directory above its socket
    munge = directory / "munge"
    munge.mkdir(mode=0o755)
    key = munge / "key"
    shutil.copy("/etc/munge/munge.key", key)
    shutil.chown(munge, "munge", "munge")
    shutil.chown(key, "munge", "munge")
    key.chmod(0o600)
    subprocess.run(["runuser", "-u", "munge", "--", "munged", f"--socket={munge / 'socket'}",
                    f"--key-file={key}", f"--pid-file={munge / 'pid'}", f"--log-file={munge / 'log'}",
                    f"--seed-file={munge / 'seed'}"], check=True, timeout=30)
    return munge / "pid"


def common_conf(directory: Path) -> list[str]:
    """The slurm.conf lines every test cluster has: root daemons, munge, state and logs under `directory`."""
    return ["ClusterName=neurondoctor-test", "SlurmctldHost=localhost(127.0.0.1)", "SlurmUser=root",
            "SlurmdUser=root", f"SlurmctldPort={free_port()}", "AuthType=auth/munge",
            f"AuthInfo=socket={directory / 'munge' / 'socket'}", "CredType=cred/munge",
            f"StateSaveLocation={directory / 'state'}", f"SlurmctldPidFile={directory / 'slurmctld.pid'}",
            f"SlurmctldLogFile={directory / 'slurmctld.log'}", "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none", "JobAcctGatherType=jobacct_gather/none", "ReturnToService=2",
            "SchedulerType=sched/builtin", "SelectType=select/linear", "MpiDefault=none",
            "SlurmdParameters=config_overrides"]


def stop(pid_file: Path) -> None:
    try:
        pid = int(pid_file.read_text().strip())
    except (OSError, ValueError):
        return
    for sig, wait in ((15, 10.0), (9, 5.0)):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.2)
