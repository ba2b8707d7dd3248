"""The cluster preflight on a real Slurm of five nodes: Debian's slurm 22.05 is built with
multiple-slurmd, so each node is a `slurmd -N trn-K` with its own port, spool and log, started in a mount namespace
of its own (`unshare -m`) where the node's folder is bound over one shared path. Each node's health.conf, fixture
root and TaskProlog input are then its own at the same paths, as on separate hosts: the TaskProlog reads
NODE/task.env and exports it into the task, `NEURONDOCTOR_CONFIG=NODE/health.conf` names the node's options.

Planted on a trn1.32xlarge cluster: trn-2 sets other NEURON_CC_FLAGS, trn-3 has another neuronx-cc, trn-4 has no
root communicator, trn-5 shows 6 of its 8 EFA interfaces. `fleet check --slurm` inside `salloc -N5` names exactly
those four (exit 1); with `--drain` it drains them with `neurondoctor-preflight:` and leaves a node an operator
drained alone; repaired, exit 0; with one slurmd stopped inside the allocation, that node is `unreachable` (exit 3).
Needs root (slurmd, munged, mount namespaces); every daemon it starts is stopped on every path.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import simple_wheel, stack_venv
from tests.slurm_cluster import common_conf, ensure_packages, free_port, start_munge, stop
from tests.wheelhouse import VenvFactory

NODES = tuple(f"trn-{number}" for number in range(1, 6))
ROOT_COMM = "NEURON_RT_ROOT_COMM_ID=127.0.0.1:62182"  # one host: a loopback root communicator is right here
FLAGS = "NEURON_CC_FLAGS=--model-type=transformer --enable-saturate-infinity"
DOCTOR = Path(sys.executable).parent / "neurondoctor"


@dataclass
class FiveNodes:
    directory: Path
    env: dict[str, str]
    venvs: dict[str, Path]

    def node_folder(self, node: str) -> Path:
        return self.directory / f"node-{node}"

    def configure(self, node: str, task_env: list[str], venv: str = "majority", efa: int = 8) -> None:
        """The node's TaskProlog input, health.conf and fixture root (a trn1.32xlarge with `efa` interfaces)."""
        folder = self.node_folder(node)
        root = folder / "root"
        if root.exists():
            shutil.rmtree(root)
        build_host(root, HostSpec(instance_type="trn1.32xlarge"))
        efa_functions = sorted(path.parent for path in (root / "sys/bus/pci/devices").glob("*/device")
                               if path.read_text().strip() == "0xefa1")
        for path in efa_functions[efa:]:
            shutil.rmtree(path)
        shared = self.directory / "node"  # the path every node sees its own folder at
        (folder / "task.env").write_text("".join(f"{line}\n" for line in task_env))
        (folder / "health.conf").write_text(f"root = {shared / 'root'}\nvenv = {self.venvs[venv]}\n")

    def healthy(self) -> None:
        for node in NODES:
            self.configure(node, [ROOT_COMM, FLAGS])

    def salloc(self, *arguments: str, before: str = "") -> subprocess.CompletedProcess[str]:
        """`salloc -N5 neurondoctor fleet check --slurm ARGS`, after the shell command `before` when given."""
        check = shlex.join([str(DOCTOR), "fleet", "check", "--slurm", "--json", "--remote-command", str(DOCTOR),
                            *arguments])
        return subprocess.run(["salloc", "-N5", "--time=5", "--immediate=60", "sh", "-c",
                               f"{before}{check}"], capture_output=True, text=True, timeout=300, env=self.env)

    def scontrol(self, *arguments: str) -> str:
        return subprocess.run(["scontrol", *arguments], capture_output=True, text=True, timeout=30, env=self.env,
                              check=True).stdout

    def wait_idle(self, timeout: float = 90) -> None:
        deadline = time.monotonic() + timeout
        shown = ""
        while time.monotonic() < deadline:
            shown = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %t"], capture_output=True, text=True, timeout=30,
                                   env=self.env).stdout
            states = [line.split()[1] for line in shown.splitlines()]
            if len(states) == 5 and all(state in ("idle", "drain") for state in states):  # no job left on any
                return
            time.sleep(1)
        raise AssertionError(f"the nodes did not settle:\n{shown}")


def _task_prolog(directory: Path) -> Path:
    """Prints `export NAME=value` for each line of the node's task.env: slurmd exports them into the task."""
    prolog = directory / "taskprolog"
    prolog.write_text("#!/bin/sh\nwhile IFS= read -r line; do printf 'export %s\\n' \"$line\"; "
                      f"done < {directory}/node/task.env\n")
    prolog.chmod(0o755)
    return prolog


def _slurm_conf(directory: Path) -> str:
    host = socket.gethostname().split(".")[0]
    return "\n".join([
        *common_conf(directory), f"SlurmdSpoolDir={directory / 'spool'}/%n",
        f"SlurmdPidFile={directory}/slurmd-%n.pid", f"SlurmdLogFile={directory}/slurmd-%n.log",
        f"TaskProlog={_task_prolog(directory)}",
        # one loopback address per node (127.0.0.2-6, all this machine's): nccom-test's --hosts tell the pairs apart
        *(f"NodeName={node} NodeHostname={host} NodeAddr=127.0.0.{number + 2} Port={free_port()} CPUs=2 "
          "State=UNKNOWN" for number, node in enumerate(NODES)),
        "PartitionName=debug Nodes=trn-[1-5] Default=YES MaxTime=INFINITE State=UP", ""])


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FiveNodes]:
    if os.geteuid() != 0:
        pytest.skip("needs root: munged, slurmctld, five slurmd and their mount namespaces")
    if not DOCTOR.exists():
        pytest.skip(f"{DOCTOR} is not installed (pip install -e .)")
    ensure_packages()
    factory = VenvFactory(base=tmp_path_factory.mktemp("preflight-venvs"),
                          wheel_dir=tmp_path_factory.mktemp("preflight-wheels"))
    venvs = {"majority": stack_venv(factory, "majority", "2.31.1"),
             # one node upgraded neuronx-cc alone: the 2.32 compiler beside 2.31.1's torch-neuronx
             "other-compiler": stack_venv(factory, "other-compiler", "2.31.1",
                                          replace=(simple_wheel("neuronx-cc", "2.27.5334.0", ("protobuf>3",)),))}
    directory = Path(tempfile.mkdtemp(prefix="neurondoctor-preflight-", dir="/tmp"))
    pid_files: list[Path] = []
    env = dict(os.environ, SLURM_CONF=str(directory / "slurm.conf"),
               NEURONDOCTOR_CONFIG=str(directory / "node" / "health.conf"))
    for variable in [key for key in env if key.startswith(("NEURON_RT_", "NEURON_CC", "SLURM_JOB"))]:
        del env[variable]
    try:
        for name in ("state", "spool", "node"):
            (directory / name).mkdir()
        pid_files.append(start_munge(directory))
        (directory / "slurm.conf").write_text(_slurm_conf(directory))
        cluster = FiveNodes(directory, env, venvs)
        cluster.healthy()
        pid_files.insert(0, directory / "slurmctld.pid")
        subprocess.run(["slurmctld", "-i"], check=True, timeout=30, env=env)
        for node in NODES:
            (directory / "spool" / node).mkdir()
            pid_files.insert(0, directory / f"slurmd-{node}.pid")
            bind = shlex.join(["mount", "--bind", str(cluster.node_folder(node)), str(directory / "node")])
            subprocess.run(["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
                            f"{bind} && exec slurmd -N {node}"], check=True, timeout=30, env=env)
        cluster.wait_idle(60)
        yield cluster
    finally:
        subprocess.run(["scancel", "--full", "--partition=debug"], capture_output=True, timeout=30, env=env)
        for pid_file in pid_files:  # the slurmd first, then slurmctld, then munged
            stop(pid_file)
        shutil.rmtree(directory, ignore_errors=True)


def _document(done: subprocess.CompletedProcess[str]) -> dict[str, object]:
    assert done.stdout.strip(), done.stderr
    document = json.loads(done.stdout)
    assert document["schema"] == "neurondoctor.fleet/1", document
    return dict(document)


def test_the_four_planted_nodes_are_named_and_drained(cluster: FiveNodes) -> None:
    cluster.configure("trn-2", [ROOT_COMM, "NEURON_CC_FLAGS=--model-type=transformer -O1"])
    cluster.configure("trn-3", [ROOT_COMM, FLAGS], venv="other-compiler")
    cluster.configure("trn-4", [FLAGS])
    cluster.configure("trn-5", [ROOT_COMM, FLAGS], efa=6)
    started = time.monotonic()
    # inside the allocation, before the preflight, an operator drains trn-2 for a reason of their own
    operator = shlex.join(["scontrol", "update", "nodename=trn-2", "state=drain", "reason=operator: reseating a cable"])
    done = cluster.salloc("--deadline", "60", "--drain", before=f"{operator} && ")
    elapsed = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    document = _document(done)
    preflight = document["preflight"]
    assert isinstance(preflight, dict)
    assert preflight["at_fault"] == ["trn-2", "trn-3", "trn-4", "trn-5"], json.dumps(preflight, indent=1)[:4000]
    assert preflight["nodes"]["trn-1"]["state"] in ("ok", "degraded"), preflight["nodes"]["trn-1"]
    named = {finding["id"]: finding for finding in preflight["findings"]}
    assert named["ND-FLEET-003"]["nodes"] == ["trn-2"]
    assert named["ND-FLEET-003"]["majority"] == "--enable-saturate-infinity --model-type=transformer"
    assert named["ND-FLEET-002"]["nodes"] == ["trn-3"]
    assert named["ND-FLEET-002"]["majority"] == "2.26.6360.0+bd4c5f4b"
    assert named["ND-FLEET-005"]["nodes"] == ["trn-4"] and named["ND-FLEET-005"]["majority"] == "127.0.0.1:62182"
    assert "ND-FLEET-006" not in named  # loopback, but all five nodes are one host here
    # trn-5 reports its 6 of 8 EFA interfaces itself (ND-RES-004): not repeated, but a fault for a multi-node job
    assert "ND-FLEET-010" not in named
    assert preflight["nodes"]["trn-5"]["reasons"][0].startswith("ND-RES-004 6 of 8 EFA interfaces")
    assert set(named) == {"ND-FLEET-002", "ND-FLEET-003", "ND-FLEET-005"}, sorted(named)
    cluster.wait_idle()
    for node, finding_id in (("trn-3", "ND-FLEET-002"), ("trn-4", "ND-FLEET-005"), ("trn-5", "ND-RES-004")):
        shown = cluster.scontrol("show", "node", node)
        assert f"Reason=neurondoctor-preflight: {finding_id}" in shown, shown
    assert "Reason=operator: reseating a cable" in cluster.scontrol("show", "node", "trn-2")
    assert any(line.startswith("trn-2: already drained for another reason") for line in preflight["drained"])
    assert "Reason=" not in cluster.scontrol("show", "node", "trn-1")
    print(f"\nfleet check over 5 nodes in {elapsed:.1f} s (salloc included)")
    for node in NODES[1:]:
        cluster.scontrol("update", f"nodename={node}", "state=resume")
    cluster.wait_idle()


def test_one_odd_node_then_the_repaired_cluster_is_ready(cluster: FiveNodes, tmp_path: Path) -> None:
    cluster.healthy()
    cluster.configure("trn-2", [ROOT_COMM, "NEURON_CC_FLAGS=--model-type=transformer -O1"])
    done = cluster.salloc("--deadline", "60")
    assert done.returncode == 1 and _document(done)["preflight"]["at_fault"] == ["trn-2"], done.stderr

    cluster.healthy()
    saved = tmp_path / "reports"
    done = cluster.salloc("--deadline", "60", "--save-reports", str(saved))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    document = _document(done)
    assert document["preflight"]["findings"] == [] and document["preflight"]["at_fault"] == []
    assert document["drift"] == [] and document["nodes"] == 5
    assert sorted(path.name for path in saved.iterdir()) == [f"{node}.json" for node in NODES]
    report = json.loads((saved / "trn-3.json").read_text())
    assert report["schema"] == "neurondoctor.report/1"
    assert report["facts"]["environ"]["NEURON_RT_ROOT_COMM_ID"] == "127.0.0.1:62182"  # from the TaskProlog

    # outside an allocation, a partition's nodes: each node's step is a job of its own
    done = subprocess.run([str(DOCTOR), "fleet", "check", "--slurm", "--partition", "debug", "--remote-command",
                           str(DOCTOR)], capture_output=True, text=True, timeout=300, env=cluster.env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    assert done.stdout.rstrip().endswith("Ready: 5 node(s) consistent, none at fault"), done.stdout
    assert "] 5 of 5 node(s) answered (" in done.stderr, done.stderr  # progress, as each node answers


# A fake nccom-test (no device here) that prints the user guide's formats: the table, its JSON report, and the
# guide's failure; what each pair gives is the plan's, by the pair's --hosts (trn-3 .4, trn-4 .5, trn-5 .6): trn-4's
# pair with trn-3 is slow, its pair with trn-5 fails, every other run is healthy.
FAKE_NCCOM = """#!/usr/bin/env python3
import json, sys
args = sys.argv[1:]
hosts = ",".join(sorted(args[args.index("--hosts") + 1:args.index("--hosts") + 3])) if "--hosts" in args else ""
plan = {"127.0.0.4,127.0.0.5": "slow", "127.0.0.5,127.0.0.6": "fail"}
outcome = plan.get(hosts, "ok")
print("     size(B)    count(elems)    type    time(us)    algbw(GB/s)    busbw(GB/s)")
if outcome == "fail":
    print("   268435456    Failure running neuron-bench - log file /tmp/nccom_test_log_7pqpdfjf.log")
    print("1 errors found - test failed")
    sys.exit(1)
busbw = 9.5 if outcome == "slow" else 45.2
print(f"   268435456        67108864    fp32        5000          {busbw / 2:.2f}          {busbw:.2f}")
print(f"Avg bus bandwidth:      {busbw:.4f}GB/s")
report = args[args.index("--report-to-json-file") + 1]
json.dump({"results": [{"size(B)": 268435456, "count(elems)": 67108864, "type": "fp32", "algbw(GB/s)": busbw / 2,
                        "busbw(GB/s)": busbw, "time:avg(us)": 5000.0}]}, open(report, "w"))
"""


def test_collectives_bisect_to_the_node_whose_pairs_are_slow_and_failing(cluster: FiveNodes) -> None:
    cluster.healthy()
    fake = cluster.directory / "bin" / "nccom-test"
    fake.parent.mkdir(exist_ok=True)
    fake.write_text(FAKE_NCCOM)
    fake.chmod(0o755)
    before = f"PATH={shlex.quote(str(fake.parent))}:$PATH; export PATH; "
    done = cluster.salloc("--deadline", "60", "--collectives", before=before)
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr
    preflight = _document(done)["preflight"]
    collectives = preflight["collectives"]
    assert collectives["ran"] is True and len(collectives["nodes"]) == 5 and len(collectives["pairs"]) == 5
    assert all(node["busbw_gbs"] == 45.2 for node in collectives["nodes"].values()), collectives["nodes"]
    assert [(finding["id"], finding["nodes"]) for finding in preflight["findings"]] == [("ND-FLEET-012", ["trn-4"])]
    assert preflight["at_fault"] == ["trn-4"]


def test_a_step_past_its_deadline_is_cancelled_not_left_running(cluster: FiveNodes) -> None:
    """A node whose check hangs: at the deadline srun is asked to stop (SIGTERM) and cancels its step, so nothing of
    the preflight is still running in the allocation afterwards; the nodes are unreachable, exit 3."""
    cluster.healthy()
    hang = cluster.directory / "hang"
    hang.write_text("#!/bin/sh\nexec sleep 59.873\n")
    hang.chmod(0o755)
    check = shlex.join([str(DOCTOR), "fleet", "check", "--slurm", "--json", "--remote-command", str(hang),
                        "--nodes", "trn-2,trn-3", "--deadline", "3"])
    steps = "sleep 4; squeue -h -s -o '%j' --jobs=\"$SLURM_JOB_ID\""
    done = subprocess.run(["salloc", "-N5", "--time=5", "--immediate=60", "sh", "-c", f"{check}; echo ==; {steps}"],
                          capture_output=True, text=True, timeout=300, env=cluster.env)
    report, _, left = done.stdout.partition("\n==\n")
    document = json.loads(report.strip().splitlines()[-1])
    assert {node: value["state"] for node, value in document["preflight"]["nodes"].items()} == {
        "trn-2": "unreachable", "trn-3": "unreachable"}, document["preflight"]["nodes"]
    assert "neurondoctor-preflight" not in left, left  # the steps were cancelled, not left running
    cluster.wait_idle()


def test_a_node_whose_slurmd_stopped_is_unreachable(cluster: FiveNodes) -> None:
    """Last: the stopped slurmd does not come back within this module."""
    cluster.healthy()
    pid_file = cluster.directory / "slurmd-trn-1.pid"
    before = shlex.join(["kill", pid_file.read_text().strip()]) + " && sleep 2 && "
    done = cluster.salloc("--deadline", "20", before=before)
    assert done.returncode == 3, done.stdout[-3000:] + done.stderr
    document = _document(done)
    nodes = document["preflight"]["nodes"]
    assert nodes["trn-1"]["state"] == "unreachable", nodes["trn-1"]
    assert all(nodes[node]["state"] in ("ok", "degraded") for node in NODES[1:]), nodes
    assert document["nodes"] == 4 and document["preflight"]["at_fault"] == []
