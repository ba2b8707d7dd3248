"""A real Slurm 22.05 (Debian 12's slurmctld, slurmd, slurm-client and munge) on 127.0.0.1 with
`HealthCheckProgram` set to the installed `neurondoctor-slurm-health`. slurmd runs it as root every
5 s with no arguments and no environment but SLURMD_NODENAME, so its options come from the default
/etc/neurondoctor/health.conf, whose `slurm_conf` tells scontrol where this cluster's slurm.conf is.

What the cluster must show (`scontrol show node`, `sinfo -R`): a failing fixture root drains the node with the
neurondoctor reason; the repaired root resumes it; a node drained by hand for another reason stays drained; a
running job whose processes hold the Neuron device leaves the node ok and allocated; `srun -N1 neurondoctor check
--json` returns a report load_report reads. Needs root (slurmd, munged, /etc); the packages are installed from
Debian when missing. Every daemon it starts is stopped, and /etc/neurondoctor is removed again.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import pytest

from neurondoctor.report.reader import load_report
from tests.host_fixture import HostSpec, build_host
from tests.slurm_cluster import common_conf, ensure_packages, free_port, start_munge, stop

HEALTH_CONF = Path("/etc/neurondoctor/health.conf")
NODE = "trn1-a"
INTERVAL_S = 5


@dataclass
class Cluster:
    directory: Path
    env: dict[str, str]
    status_file: Path

    def scontrol(self, *args: str) -> str:
        return subprocess.run(["scontrol", *args], capture_output=True, text=True, timeout=30, env=self.env,
                              check=True).stdout

    def node(self) -> str:
        return self.scontrol("show", "node", NODE)

    def use_root(self, root: Path) -> None:
        HEALTH_CONF.write_text(f"root = {root}\nslurm_conf = {self.directory / 'slurm.conf'}\n"
                               f"status_file = {self.status_file}\n")

    def wait_for(self, what: str, condition: Callable[[str], bool], timeout: float = 60) -> str:
        deadline = time.monotonic() + timeout
        shown = ""
        while time.monotonic() < deadline:
            shown = self.node()
            if condition(shown):
                return shown
            time.sleep(1)
        raise AssertionError(f"{what} did not happen within {timeout:.0f} s:\n{shown}\n"
                             + (self.directory / "slurmd.log").read_text()[-2000:])

    def runs_after(self, since: float, count: int = 2) -> None:
        """Wait until slurmd has run the health check `count` more times (the status file's mtime moves)."""
        seen = 0
        last = since
        deadline = time.monotonic() + INTERVAL_S * (count + 4)
        while seen < count and time.monotonic() < deadline:
            time.sleep(0.5)
            if self.status_file.exists() and self.status_file.stat().st_mtime > last:
                last = self.status_file.stat().st_mtime
                seen += 1
        assert seen >= count, f"the health check ran {seen} times in {INTERVAL_S * (count + 4)} s"


def _slurm_conf(directory: Path, program: Path) -> str:
    return "\n".join([
        *common_conf(directory), f"SlurmdPort={free_port()}", f"SlurmdSpoolDir={directory / 'spool'}",
        f"SlurmdPidFile={directory / 'slurmd.pid'}", f"SlurmdLogFile={directory / 'slurmd.log'}",
        f"HealthCheckProgram={program}", f"HealthCheckInterval={INTERVAL_S}", "HealthCheckNodeState=ANY",
        f"NodeName={NODE} NodeHostname={socket.gethostname().split('.')[0]} NodeAddr=127.0.0.1 CPUs=2 "
        "State=UNKNOWN",
        f"PartitionName=debug Nodes={NODE} Default=YES MaxTime=INFINITE State=UP", ""])


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    if os.geteuid() != 0:
        pytest.skip("needs root: munged, slurmctld and slurmd, and slurmd runs HealthCheckProgram as root")
    program = Path(sys.executable).parent / "neurondoctor-slurm-health"
    if not program.exists():
        pytest.skip(f"{program} is not installed (pip install -e .)")
    if HEALTH_CONF.exists():
        pytest.skip(f"{HEALTH_CONF} exists on this machine; the test will not replace it")
    ensure_packages()
    started = time.monotonic()
    directory = Path(tempfile.mkdtemp(prefix="neurondoctor-slurm-", dir="/tmp"))
    made_etc = not HEALTH_CONF.parent.exists()
    pid_files: list[Path] = []
    try:
        for name in ("state", "spool"):
            (directory / name).mkdir()
        pid_files.append(start_munge(directory))
        (directory / "slurm.conf").write_text(_slurm_conf(directory, program))
        env = dict(os.environ, SLURM_CONF=str(directory / "slurm.conf"))
        HEALTH_CONF.parent.mkdir(exist_ok=True)
        cluster = Cluster(directory, env, directory / "health.json")
        cluster.use_root(build_host(directory / "healthy", HostSpec()))
        pid_files.insert(0, directory / "slurmctld.pid")
        subprocess.run(["slurmctld", "-i"], check=True, timeout=30, env=env)
        pid_files.insert(0, directory / "slurmd.pid")
        subprocess.run(["slurmd", "-N", NODE], check=True, timeout=30, env=env)
        cluster.wait_for("the node coming up", lambda shown: "State=IDLE" in shown, timeout=60)
        print(f"\nSlurm cluster up in {time.monotonic() - started:.1f} s")
        yield cluster
    finally:
        if (directory / "slurm.conf").exists():
            subprocess.run(["scancel", "--full", "--partition=debug"], capture_output=True, timeout=30,
                           env=dict(os.environ, SLURM_CONF=str(directory / "slurm.conf")))
        for pid_file in pid_files:  # slurmd first: no health check starts while the config goes away
            stop(pid_file)
        HEALTH_CONF.unlink(missing_ok=True)
        if made_etc:
            shutil.rmtree(HEALTH_CONF.parent, ignore_errors=True)
        shutil.rmtree(directory, ignore_errors=True)


def _drained(shown: str) -> bool:
    return "DRAIN" in shown.split("State=", 1)[1].split()[0]


def _reason(shown: str) -> Optional[str]:
    line = next((line.strip() for line in shown.splitlines() if line.strip().startswith("Reason=")), None)
    return line[len("Reason="):] if line else None


def test_drain_resume_and_an_operators_drain(cluster: Cluster) -> None:
    started = time.monotonic()
    cluster.use_root(build_host(cluster.directory / "broken", HostSpec(driver_loaded=False)))
    shown = cluster.wait_for("the drain", _drained)
    reason = _reason(shown)
    assert reason and reason.startswith("neurondoctor: ND-DRV-002 the Neuron driver is installed and built"), shown
    listed = subprocess.run(["sinfo", "-R", "-h", "-o", "%E|%N"], capture_output=True, text=True, timeout=30,
                            env=cluster.env, check=True).stdout
    assert listed.startswith("neurondoctor: ND-DRV-002") and listed.strip().endswith(f"|{NODE}"), listed
    assert json.loads(cluster.status_file.read_text())["state"] == "unhealthy"
    drained_after = time.monotonic() - started

    cluster.use_root(cluster.directory / "healthy")
    cluster.wait_for("the resume", lambda text: not _drained(text))
    resumed_after = time.monotonic() - started

    cluster.scontrol("update", f"nodename={NODE}", "state=drain", "reason=operator: swapping an EFA cable")
    cluster.runs_after(time.time(), count=2)
    shown = cluster.node()
    assert _drained(shown) and (_reason(shown) or "").startswith("operator: swapping an EFA cable"), shown
    cluster.scontrol("update", f"nodename={NODE}", "state=resume")
    cluster.wait_for("the operator's resume", lambda text: not _drained(text))
    print(f"\ndrained after {drained_after:.1f} s, resumed after {resumed_after:.1f} s")


def _copy_process(source_pid: int, root: Path, devices: tuple[int, ...] = ()) -> None:
    """A live process's stat, comm and cmdline as the fixture root's proc shows them, and optionally descriptors on
    /dev/neuronN (this machine has no Neuron device for the job to open)."""
    proc = root / "proc" / str(source_pid)
    proc.mkdir(parents=True, exist_ok=True)
    for name in ("stat", "comm", "cmdline"):
        (proc / name).write_bytes(Path(f"/proc/{source_pid}/{name}").read_bytes())
    fd = proc / "fd"
    fd.mkdir(exist_ok=True)
    for number, device in enumerate(devices, start=10):
        (fd / str(number)).symlink_to(f"/dev/neuron{device}")


def test_a_job_holding_the_cores_does_not_drain_the_node(cluster: Cluster) -> None:
    job = subprocess.run(["sbatch", "--parsable", "-o", "/dev/null", "--wrap", "sleep 300"], capture_output=True,
                         text=True, timeout=30, env=cluster.env, check=True).stdout.strip().split(";")[0]
    try:
        cluster.wait_for("the job starting", lambda text: "ALLOCATED" in text or "MIXED" in text)
        pids: list[int] = []
        deadline = time.monotonic() + 20
        while not pids and time.monotonic() < deadline:
            listed = subprocess.run(["scontrol", "listpids", job], capture_output=True, text=True, timeout=30,
                                    env=cluster.env).stdout
            pids = [int(line.split()[0]) for line in listed.splitlines()[1:] if line.split()[:1] != ["PID"]]
            time.sleep(0.5)
        assert pids, "no job processes"
        root = build_host(cluster.directory / "in-use", HostSpec())
        chain, current = [], max(pids)  # the job's leaf (`sleep`) up to its slurmstepd
        while current > 1 and len(chain) < 10:
            chain.append(current)
            if Path(f"/proc/{current}/comm").read_text().strip() == "slurmstepd":
                break
            current = int(Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()[1])
        assert Path(f"/proc/{chain[-1]}/comm").read_text().strip() == "slurmstepd", chain
        for pid in chain:
            _copy_process(pid, root, devices=(0,) if pid == chain[0] else ())
        cluster.use_root(root)
        cluster.runs_after(time.time(), count=2)
        status = json.loads(cluster.status_file.read_text())
        assert status["state"] == "ok", status  # not even degraded: the job's own processes are expected
        shown = cluster.node()
        assert not _drained(shown) and ("ALLOCATED" in shown or "MIXED" in shown), shown
        check = subprocess.run([sys.executable, "-m", "neurondoctor", "check", "--root", str(root)],
                               capture_output=True, text=True, timeout=60)
        assert f"in use by Slurm job {job}" in check.stdout, check.stdout
    finally:
        subprocess.run(["scancel", job], capture_output=True, timeout=30, env=cluster.env)
        cluster.use_root(cluster.directory / "healthy")


def test_srun_check_json_is_a_report(cluster: Cluster) -> None:
    done = subprocess.run(["srun", "-N1", "-t", "2", sys.executable, "-m", "neurondoctor", "check", "--json"],
                          capture_output=True, text=True, timeout=120, env=cluster.env,
                          cwd=str(Path(__file__).resolve().parent.parent))
    assert done.returncode in (0, 1, 3), done.stderr
    report = load_report(done.stdout)
    assert report.schema == "neurondoctor.report/1" and report.health.state in ("ok", "degraded", "unhealthy",
                                                                                "unknown")
    assert report.node.hostname == socket.gethostname()


def test_run_by_hand_the_node_is_found_by_its_hostname(cluster: Cluster) -> None:
    """An operator's `health --slurm --dry-run` has no SLURMD_NODENAME, and this node's Slurm name (trn1-a) is not
    the host's name: the node whose NodeHostName is this host is the one judged."""
    broken = build_host(cluster.directory / "by-hand", HostSpec(driver_loaded=False))
    env = {key: value for key, value in cluster.env.items() if key != "SLURMD_NODENAME"}
    done = subprocess.run([sys.executable, "-m", "neurondoctor", "health", "--slurm", "--dry-run", "--root",
                           str(broken), "--status-file", str(cluster.directory / "by-hand.json")],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1, done.stderr
    assert f"would run: scontrol update 'nodename={NODE}' 'state=drain'" in done.stderr, done.stderr
    assert not _drained(cluster.node())
