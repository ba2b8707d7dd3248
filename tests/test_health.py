"""`neurondoctor health` on fixture hosts: NHC's drain semantics against a recording `scontrol` double
(the real slurmd/slurmctld run in tests/test_slurm_integration.py), health.conf, the node-problem-detector exit
codes, the Prometheus textfile read back by prometheus_client's parser, the deadline with a stale verdict, and a
job's own processes holding the cores."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
import time
from pathlib import Path
from typing import Optional

import psutil
import pytest
from prometheus_client.parser import text_string_to_metric_families

from neurondoctor.actions.health.config import parse_health_config
from neurondoctor.actions.health.slurm_decision import REASON_LIMIT, decide, drain_reason, parse_scontrol_node
from neurondoctor.report.health import Health
from tests.conftest import run_cli
from tests.doubles.slurm import FakeSlurm, node_text
from tests.host_fixture import Holder, HostSpec, build_host

UNHEALTHY = Health("unhealthy", ["ND-DRV-002 the Neuron driver is installed and built but the `neuron` module is not "
                                 "loaded", "ND-DEV-001 fewer device nodes than Neuron devices"])


@pytest.mark.parametrize(("health", "state", "reason", "action"), [
    (UNHEALTHY, "IDLE", None, "drain"),
    (UNHEALTHY, "IDLE+DRAIN", "maintenance: swapping an EFA cable", "none"),  # an operator's drain stays
    (UNHEALTHY, "DOWN", "Not responding", "none"),
    (UNHEALTHY, "IDLE+DRAIN", "neurondoctor: ND-PIN-001 old title", "drain"),  # ours: the new reason
    (Health("ok"), "IDLE+DRAIN", "neurondoctor: ND-DRV-002 module not loaded", "resume"),
    (Health("degraded", ["ND-DEV-003 held"]), "MIXED+DRAIN", "neurondoctor: ND-DRV-002 x", "resume"),
    (Health("ok"), "IDLE+DRAIN", "hardware check by the operator", "none"),
    (Health("ok"), "IDLE+DRAIN+REBOOT_REQUESTED", "neurondoctor: ND-DRV-002 x", "none"),
    (Health("ok"), "ALLOCATED+DRAIN+MAINT", "neurondoctor: ND-DRV-002 x", "none"),
    (Health("ok"), "IDLE", None, "none"),
    (Health("unknown", ["Driver: could not read /proc/modules"]), "IDLE", None, "none"),
    (Health("unknown", ["Driver: could not read /proc/modules"]), "IDLE+DRAIN", "neurondoctor: ND-DRV-002 x", "none"),
])
def test_nhc_drain_semantics(health: Health, state: str, reason: Optional[str], action: str) -> None:
    node = parse_scontrol_node("trn1-a", node_text(state, reason))
    assert node is not None and node.reason == reason
    decision = decide(health, node)
    assert decision.action == action, decision.why
    if action == "drain":
        assert decision.argv[:4] == ("scontrol", "update", "nodename=trn1-a", "state=drain")
        assert decision.argv[4] == f"reason={drain_reason(health)}"
    if action == "resume":
        assert decision.argv == ("scontrol", "update", "nodename=trn1-a", "state=resume")


def test_the_drain_reason() -> None:
    reason = drain_reason(UNHEALTHY)
    assert reason.startswith("neurondoctor: ND-DRV-002 the Neuron driver") and reason.endswith("... (+1 more)")
    assert len(reason) == REASON_LIMIT
    assert drain_reason(Health("unhealthy", ["ND-X-001 short"])) == "neurondoctor: ND-X-001 short"
    assert parse_scontrol_node("x", "Node x not found\n") is None


def test_health_conf_grammar() -> None:
    config = parse_health_config(textwrap.dedent("""\
        # /etc/neurondoctor/health.conf
        venv = /opt/aws_neuronx_venv_pytorch_2_9
        venv = /home/ubuntu/train   # a second environment
        deadline = 20
        status_file = /run/neurondoctor/health.json
        slurm_conf = /etc/slurm/slurm.conf
        compile_cache = /fsx/neuron-compile-cache
        skip = ND-DEV-003
        """), "health.conf")
    assert config.problems == []
    assert config.venvs == ["/opt/aws_neuronx_venv_pytorch_2_9", "/home/ubuntu/train"]
    assert (config.deadline_s, config.status_file, config.slurm_conf, config.compile_cache, config.skip) == (
        20.0, "/run/neurondoctor/health.json", "/etc/slurm/slurm.conf", "/fsx/neuron-compile-cache", ["ND-DEV-003"])
    relative = parse_health_config("compile_cache = neuron-cache\n", "h.conf")
    assert relative.problems == ["h.conf:1: compile_cache: not an absolute path or a URL"]  # never its text
    broken = parse_health_config("venvs = /opt/x\ndeadline = 75\nrelease = 2.31.1\nrelease = 2.32.0\njunk\n", "h.conf")
    assert [problem.split(":")[1] for problem in broken.problems] == ["1", "2", "4", "5"]
    assert "h.conf:1: an unknown key" in broken.problems[0] and "below Slurm's 60 s" in broken.problems[1]
    assert not any("venvs" in problem or "junk" in problem for problem in broken.problems)  # line numbers, no text


def test_slurm_drains_an_unhealthy_root_and_resumes_it_when_repaired(tmp_path: Path) -> None:
    broken = build_host(tmp_path / "broken", HostSpec(driver_loaded=False))
    status = tmp_path / "health.json"
    slurm = FakeSlurm(tmp_path, "IDLE")
    result = run_cli(["health", "--slurm", "--root", str(broken), "--status-file", str(status)], env=slurm.env())
    assert result.returncode == 1, result.stderr
    assert slurm.calls()[-1].startswith("update nodename=trn1-a state=drain reason=neurondoctor: ND-DRV-002 the "
                                        "Neuron driver is installed and built but the `neuron` module")
    assert "slurm: drain" in result.stderr and len(result.stderr.splitlines()) == 1  # one log line per run
    written = json.loads(status.read_text())
    assert (written["schema"], written["state"], written["stale"]) == ("neurondoctor.status/1", "unhealthy", False)
    assert [step["name"] for step in written["steps"]] == ["check", "slurm-drain"]
    slurm.node.write_text(node_text("IDLE+DRAIN", slurm.calls()[-1].split("reason=", 1)[1]))
    repaired = build_host(tmp_path / "repaired", HostSpec())
    result = run_cli(["health", "--slurm", "--root", str(repaired), "--status-file", str(status)], env=slurm.env())
    assert result.returncode == 0, result.stderr
    assert slurm.calls()[-1] == "update nodename=trn1-a state=resume"
    assert json.loads(status.read_text())["state"] == "ok"


def test_dry_run_and_an_operators_drain(tmp_path: Path) -> None:
    broken = build_host(tmp_path / "broken", HostSpec(driver_loaded=False))
    slurm = FakeSlurm(tmp_path, "IDLE")
    result = run_cli(["health", "--slurm", "--dry-run", "--root", str(broken), "--status-file",
                      str(tmp_path / "s.json")], env=slurm.env())
    assert result.returncode == 1
    assert ("would run: scontrol update 'nodename=trn1-a' 'state=drain' 'reason=neurondoctor: ND-DRV-002"
            in result.stderr)
    assert [call.split()[0] for call in slurm.calls()] == ["show"]  # nothing changed
    assert not (tmp_path / "s.json").exists()  # --dry-run writes nothing anywhere
    result = run_cli(["health", "--slurm", "--dry-run", "--root", str(broken), "--format", "prometheus", "--output",
                      str(tmp_path / "neurondoctor.prom")], env=slurm.env())
    assert not (tmp_path / "neurondoctor.prom").exists() and "neurondoctor_health" in result.stdout
    healthy = build_host(tmp_path / "healthy", HostSpec())
    slurm.node.write_text(node_text("IDLE+DRAIN", "maintenance: swapping an EFA cable"))
    result = run_cli(["health", "--slurm", "--root", str(healthy), "--status-file", str(tmp_path / "s.json")],
                     env=slurm.env())
    assert result.returncode == 0 and "drained for another reason" in result.stderr
    assert not any(call.startswith("update") for call in slurm.calls())


def test_a_check_that_cannot_judge_changes_nothing(tmp_path: Path) -> None:
    """An unreadable module list makes the driver check unknown: no drain, no resume, unknown in the status file."""
    root = build_host(tmp_path / "root", HostSpec())
    (root / "proc/modules").unlink()
    os.mkfifo(root / "proc/modules")
    slurm = FakeSlurm(tmp_path, "IDLE+DRAIN", "neurondoctor: ND-DRV-002 module not loaded")
    status = tmp_path / "health.json"
    result = run_cli(["health", "--slurm", "--root", str(root), "--status-file", str(status)], env=slurm.env(),
                     timeout=60)
    assert result.returncode == 3, result.stderr
    assert not any(call.startswith("update") for call in slurm.calls())
    assert "the verdict is unknown, nothing changed" in result.stderr
    assert json.loads(status.read_text())["state"] == "unknown"


def test_a_typo_in_health_conf_changes_nothing(tmp_path: Path) -> None:
    broken = build_host(tmp_path / "broken", HostSpec(driver_loaded=False))
    conf = tmp_path / "health.conf"
    conf.write_text(f"root = {broken}\nstatus_fiel = /tmp/x\n")
    slurm = FakeSlurm(tmp_path, "IDLE")
    result = run_cli(["health", "--slurm", "--status-file", str(tmp_path / "s.json")],
                     env=slurm.env(NEURONDOCTOR_CONFIG=str(conf)))
    assert result.returncode == 3
    assert "health.conf:2: an unknown key" in result.stderr and "status_fiel" not in result.stderr
    assert not any(call.startswith("update") for call in slurm.calls())


def test_the_slurm_console_script_reads_its_config(tmp_path: Path) -> None:
    """Slurm runs `neurondoctor-slurm-health` with no arguments; root, status file and slurm.conf come from the
    file, and scontrol sees SLURM_CONF."""
    broken = build_host(tmp_path / "broken", HostSpec(driver_loaded=False))
    status = tmp_path / "health.json"
    conf = tmp_path / "health.conf"
    conf.write_text(f"root = {broken}\nstatus_file = {status}\nslurm_conf = {tmp_path / 'slurm.conf'}\n")
    slurm = FakeSlurm(tmp_path, "IDLE")
    (slurm.bin / "scontrol").write_text(f'#!/bin/sh\necho "$SLURM_CONF $@" >> {slurm.log}\n'
                                        f'[ "$1" = show ] && cat {slurm.node}\nexit 0\n')
    script = Path(os.environ.get("VIRTUAL_ENV", Path(__file__).resolve().parent.parent / ".venv")) / "bin" / \
        "neurondoctor-slurm-health"
    if not script.exists():
        pytest.skip(f"{script} is not installed (pip install -e .)")
    import subprocess

    done = subprocess.run([str(script)], capture_output=True, text=True, timeout=60,
                          env=slurm.env(NEURONDOCTOR_CONFIG=str(conf)))
    assert done.returncode == 1, done.stderr
    assert slurm.calls()[-1].startswith(f"{tmp_path / 'slurm.conf'} update nodename=trn1-a state=drain")
    assert json.loads(status.read_text())["state"] == "unhealthy"


def test_npd_exit_codes_and_message(tmp_path: Path) -> None:
    healthy = build_host(tmp_path / "healthy", HostSpec())
    broken = build_host(tmp_path / "broken", HostSpec(driver_loaded=False))
    unknown = build_host(tmp_path / "unknown", HostSpec())
    (unknown / "proc/modules").unlink()
    os.mkfifo(unknown / "proc/modules")
    for root, code in ((healthy, 0), (broken, 1), (unknown, 3)):
        result = run_cli(["health", "--root", str(root), "--format", "npd"], timeout=60)
        assert result.returncode == code, (root, result.stderr)
        lines = result.stdout.splitlines()
        assert len(lines) == 1 and len(lines[0].encode()) <= 80, lines
    assert run_cli(["health", "--root", str(broken), "--format", "npd"]).stdout.startswith("ND-DRV-002 ")


def test_prometheus_textfile(tmp_path: Path) -> None:
    root = build_host(tmp_path / "root", HostSpec(instance_type="trn1.32xlarge", holders=[
        Holder(4121, "python", "python -m ipykernel_launcher -f kernel-1.json", (0,))]))
    out = tmp_path / "textfile" / "neurondoctor.prom"
    out.parent.mkdir()
    for _ in range(2):  # the second run replaces the file it wrote
        result = run_cli(["health", "--root", str(root), "--format", "prometheus", "--output", str(out)])
        assert result.returncode == 0, result.stderr
    assert result.stdout == "" and not [name for name in os.listdir(out.parent) if name != out.name]
    samples = {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
               for family in text_string_to_metric_families(out.read_text()) for sample in family.samples}
    assert samples[("neurondoctor_health_state", ())] == 1  # degraded
    assert samples[("neurondoctor_findings", (("category", "cores-busy"), ("severity", "warning")))] == 1
    assert samples[("neurondoctor_check_duration_seconds", ())] > 0
    assert [labels for name, labels in samples if name == "neurondoctor_release_info"] == [
        (("host", "2.31.1"), ("path", ""), ("venv", ""))]
    foreign = tmp_path / "textfile" / "node.prom"
    foreign.write_text("node_custom_metric 1\n")
    refused = run_cli(["health", "--root", str(root), "--format", "prometheus", "--output", str(foreign)])
    assert refused.returncode == 2 and "was not written by neurondoctor" in refused.stderr
    assert foreign.read_text() == "node_custom_metric 1\n"


def test_the_deadline_reports_the_last_verdict_stale(tmp_path: Path) -> None:
    """An interpreter that hangs keeps the check from finishing: after --deadline the run says so, keeps the last
    verdict marked stale, asks nothing of Slurm, and the hanging process is gone."""
    root = build_host(tmp_path / "root", HostSpec())
    status = tmp_path / "health.json"
    slurm = FakeSlurm(tmp_path, "IDLE")
    assert run_cli(["health", "--slurm", "--root", str(root), "--status-file", str(status)],
                   env=slurm.env()).returncode == 0
    hang = tmp_path / "hang" / "bin" / "python"
    hang.parent.mkdir(parents=True)
    hang.write_text("#!/bin/sh\nexec sleep 307\n")  # a duration no other test uses (tests run side by side)
    hang.chmod(0o755)
    started = time.monotonic()
    result = run_cli(["health", "--slurm", "--root", str(root), "--python", str(hang), "--deadline", "3",
                      "--status-file", str(status)], env=slurm.env(), timeout=60)
    assert result.returncode == 3, result.stderr
    assert time.monotonic() - started < 20
    assert "did not finish within 3 s (the last verdict, ok, is from" in result.stderr
    assert "(stale)" in result.stderr and "nothing changed" in result.stderr
    written = json.loads(status.read_text())
    assert (written["state"], written["stale"]) == ("ok", True)
    assert [call.split()[0] for call in slurm.calls()] == ["show"]  # only the first, healthy run asked Slurm
    leftovers = [process for process in psutil.process_iter(["cmdline"])
                 if process.info["cmdline"] == ["sleep", "307"]]
    assert leftovers == []


def test_a_jobs_own_processes_hold_the_cores(tmp_path: Path) -> None:
    """A process under a job's slurmstepd holds the device: expected, the node stays ok; the same process outside
    a job is cores-busy."""
    in_job = build_host(tmp_path / "job", HostSpec(holders=[
        Holder(900, "slurmstepd", "slurmstepd: [4242.0]"),
        Holder(901, "python", "python train.py", (0,), parent=900)]))
    result = run_cli(["health", "--root", str(in_job), "--format", "nhc"])
    assert result.returncode == 0 and result.stdout.startswith("OK: neurondoctor:"), result.stdout
    check = run_cli(["check", "--root", str(in_job)])
    assert "in use by Slurm job 4242" in check.stdout
    outside = build_host(tmp_path / "outside", HostSpec(holders=[Holder(901, "python", "python train.py", (0,))]))
    result = run_cli(["health", "--root", str(outside), "--format", "nhc"])
    assert result.returncode == 0 and result.stdout.startswith("WARNING: neurondoctor: ND-DEV-003"), result.stdout


KERN_LOG = """\
2026-11-28T06:01:12.000101+00:00 ip-172-31-61-252 kernel: Linux version 6.8.0-1015-aws (buildd@lcy02-amd64-051) \
(x86_64-linux-gnu-gcc-13 (Ubuntu 13.2.0-23ubuntu4) 13.2.0) #16-Ubuntu SMP Mon Aug 19 19:38:17 UTC 2024
2026-11-30T02:13:44.481207+00:00 ip-172-31-61-252 kernel: NEURON_HW_ERR=HBM_UNCORRECTABLE_ERROR \
instance-id=i-0592464924bd45322 hostname=ip-172-31-61-252 nd-id=3 nc-id=6 serial-num=19fcda00f5ff6eb9 \
action=TERMINATE_INSTANCE
2026-11-30T02:20:01.000001+00:00 ip-172-31-61-252 kernel: Linux version 6.8.0-1015-aws (buildd@lcy02-amd64-051) \
(x86_64-linux-gnu-gcc-13 (Ubuntu 13.2.0-23ubuntu4) 13.2.0) #16-Ubuntu SMP Mon Aug 19 19:38:17 UTC 2024
2026-11-30T02:20:09.117420+00:00 ip-172-31-61-252 kernel: neuron: loading out-of-tree module taints kernel.
"""
SRAM_NOW = ("2026-12-01T09:42:10.220314+00:00 ip-172-31-61-252 kernel: NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR "
            "instance-id=i-0592464924bd45322 hostname=ip-172-31-61-252 nd-id=0 nc-id=1 serial-num=19fcda00f5ff6eb9 "
            "action=TERMINATE_INSTANCE\n")


def test_kernel_hardware_errors_are_judged_in_this_boot(tmp_path: Path) -> None:
    """The HBM error of the previous boot (before the instance was stopped and started) is gone; an SRAM error of
    this boot is ND-HW-002; `--since` after it clears it."""
    rebooted = build_host(tmp_path / "rebooted", HostSpec(instance_type="trn1.32xlarge", kern_log=KERN_LOG))
    result = run_cli(["health", "--root", str(rebooted), "--format", "nhc"])
    assert result.returncode == 0 and result.stdout.startswith("OK:"), result.stdout
    failing = build_host(tmp_path / "failing", HostSpec(instance_type="trn1.32xlarge", kern_log=KERN_LOG + SRAM_NOW))
    result = run_cli(["health", "--root", str(failing), "--format", "npd"])
    assert result.returncode == 1
    assert result.stdout.startswith("ND-HW-002 NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR on nd0 in the kernel log")
    report = json.loads(run_cli(["health", "--root", str(failing), "--json"]).stdout)
    [finding] = [finding for finding in report["findings"] if finding["id"] == "ND-HW-002"]
    assert "SRAM_UNCORRECTABLE_ERROR on nd0" in finding["title"] and "HBM" not in finding["title"]
    assert "action=TERMINATE_INSTANCE" in finding["title"] and finding["evidence"]["count"] == 1
    later = run_cli(["health", "--root", str(failing), "--since", "2026-12-01 10:00", "--format", "nhc"])
    assert later.returncode == 0, later.stdout
    bad = run_cli(["health", "--root", str(failing), "--since", "yesterday"])
    assert bad.returncode == 2 and "YYYY-MM-DD" in bad.stderr


def test_the_live_kernel_log_comes_from_journalctl_else_dmesg(tmp_path: Path) -> None:
    """On the live host the window is journalctl's `-k -b` (this boot); without a journal, dmesg's ring buffer."""
    from neurondoctor.host.kernel_log import read_kernel_log
    from neurondoctor.host.rootfs import RootFS

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    journal = bin_dir / "journalctl"
    journal.write_text(f"#!/bin/sh\necho \"$@\" > {tmp_path / 'args'}\ncat <<'EOF'\n{SRAM_NOW}EOF\n")
    journal.chmod(0o755)
    dmesg = bin_dir / "dmesg"
    dmesg.write_text("#!/bin/sh\necho '[ 12.5] neuron 0000:10:1c.0: NEURON_HW_ERR=DMA_ERROR nd-id=2'\n")
    dmesg.chmod(0o755)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin"}
    found = read_kernel_log(RootFS("/"), env, None)
    assert found.source == "journalctl -k -b" and [(e.kind, e.device) for e in found.errors] == [
        ("SRAM_UNCORRECTABLE_ERROR", "0")]
    found = read_kernel_log(RootFS("/"), env, "2 hours ago")
    assert (tmp_path / "args").read_text().split()[-4:] == ["--since", "2", "hours", "ago"]
    journal.write_text("#!/bin/sh\necho 'No journal files were found.' >&2\nexit 1\n")
    found = read_kernel_log(RootFS("/"), env, None)
    assert found.source == "dmesg" and [(e.kind, e.device) for e in found.errors] == [("DMA_ERROR", "2")]


def test_the_instance_inventory_is_counted(tmp_path: Path) -> None:
    """manifests/instances.json: a trn1.32xlarge has 16 devices of 2 NeuronCores and 8 EFA interfaces. Missing
    devices are an error, missing EFA interfaces a warning; the full count is clean."""
    full = build_host(tmp_path / "full", HostSpec(instance_type="trn1.32xlarge"))
    assert run_cli(["health", "--root", str(full), "--format", "nhc"]).stdout.startswith("OK:")
    short = build_host(tmp_path / "short", HostSpec(instance_type="trn1.32xlarge"))
    for index in (14, 15):  # two devices fell off the bus: their PCI functions and driver entries are gone
        shutil.rmtree(short / f"sys/bus/pci/devices/0000:{0x10 + index:02x}:1e.0")
    for index in (2, 3):  # two EFA interfaces missing
        shutil.rmtree(short / f"sys/bus/pci/devices/0000:{0x80 + index:02x}:00.0")
    report = json.loads(run_cli(["health", "--root", str(short), "--json"]).stdout)
    found = {finding["id"]: finding for finding in report["findings"]}
    assert found["ND-DEV-005"]["title"] == "this trn1.32xlarge shows 14 of 16 Neuron devices on PCI", found
    assert found["ND-DEV-005"]["severity"] == "error" and report["health"]["state"] == "unhealthy"
    assert found["ND-RES-004"]["title"] == "6 of 8 EFA interfaces on this trn1.32xlarge"
    unbound = build_host(tmp_path / "unbound", HostSpec(instance_type="trn1.32xlarge"))
    entry = unbound / "sys/class/neuron_device/neuron15"  # the driver did not bind the last device
    if entry.is_symlink():
        shutil.rmtree(unbound / os.readlink(entry).lstrip("/"))
        entry.unlink()
    else:
        shutil.rmtree(entry)
    report = json.loads(run_cli(["health", "--root", str(unbound), "--json"]).stdout)
    titles = [finding["title"] for finding in report["findings"] if finding["id"] == "ND-DEV-005"]
    assert titles == ["this trn1.32xlarge shows 15 of 16 PCI devices bound by the driver"], report["findings"]


def test_a_crashing_check_drains_nothing_and_resumes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    """A bug in a rule (here the driver check raises while it builds its finding) is a crashed check: the verdict is
    unknown, Slurm is asked nothing beyond `show node`, and the status file says unknown — on a drained node and
    on an idle one."""
    from neurondoctor.cli import main as cli
    from neurondoctor.rules.host_stack import driver

    def broken(*_: object, **__: object) -> None:
        raise RuntimeError("a rule bug")

    monkeypatch.setattr(driver, "Finding", broken)
    broken_root = build_host(tmp_path / "broken", HostSpec(driver_loaded=False))
    for state, reason in (("IDLE", None), ("IDLE+DRAIN", "neurondoctor: ND-DRV-002 module not loaded")):
        slurm = FakeSlurm(tmp_path, state, reason)
        status = tmp_path / f"{state}.json"
        code = cli.run(["health", "--slurm", "--root", str(broken_root), "--status-file", str(status)],
                       environ=slurm.env())
        assert code == 3
        assert [call.split()[0] for call in slurm.calls()] == ["show"], slurm.calls()
        slurm.log.unlink()
        written = json.loads(status.read_text())
        assert written["state"] == "unknown" and any("a rule bug" in reason for reason in written["reasons"])
    assert "the verdict is unknown, nothing changed" in capsys.readouterr().err


def test_a_hanging_neuron_ls_on_the_live_path_ends_inside_the_deadline(tmp_path: Path) -> None:
    """`--root /` with a neuron-ls on PATH that never answers (its grandchild keeps the pipe open): the run ends
    at its deadline with the last verdict marked stale, and nothing it started is left running."""
    status = tmp_path / "health.json"
    first = run_cli(["health", "--root", "/", "--select", "ND-ENV", "--status-file", str(status)], timeout=120)
    assert first.returncode in (0, 1, 3), first.stderr
    before = json.loads(status.read_text())["state"]
    slurm = FakeSlurm(tmp_path, "IDLE")
    hang = slurm.bin / "neuron-ls"
    hang.write_text("#!/bin/sh\n(setsid sleep 611 &)\nexec sleep 611\n")
    hang.chmod(0o755)
    started = time.monotonic()
    result = run_cli(["health", "--slurm", "--root", "/", "--deadline", "4", "--status-file", str(status)],
                     env=slurm.env(), timeout=60)
    assert time.monotonic() - started < 15, result.stderr
    assert result.returncode == 3 and "(stale)" in result.stderr and "did not finish within 4 s" in result.stderr
    written = json.loads(status.read_text())
    assert (written["state"], written["stale"]) == (before, True)
    assert not any(call.startswith("update") for call in slurm.calls())
    time.sleep(0.5)
    assert not [process for process in psutil.process_iter(["cmdline"]) if process.info["cmdline"] == ["sleep", "611"]]


def test_a_node_is_found_by_its_hostname() -> None:
    from neurondoctor.actions.health.slurm_decision import node_for_host

    listed = ("NodeName=trn1-a Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 NodeAddr=10.0.3.17 NodeHostName=ip-10-0-3-17 "
              "Version=22.05.8 State=IDLE\n"
              "NodeName=trn1-b Arch=x86_64 CoresPerSocket=1 CPUAlloc=0 NodeAddr=10.0.3.18 NodeHostName=ip-10-0-3-18 "
              "Version=22.05.8 State=IDLE+DRAIN\n")
    assert node_for_host(listed, "ip-10-0-3-18") == "trn1-b"
    assert node_for_host(listed, "ip-10-0-3-99") is None


def test_a_long_kern_log_is_read_from_its_end(tmp_path: Path) -> None:
    """kern.log past the 16 MiB read limit: the current boot is at its end, so that is the part read."""
    filler = "2026-11-29T03:00:00.000000+00:00 ip-172-31-61-252 kernel: eth0: link up " + "." * 440 + "\n"
    log = KERN_LOG + filler * (18 * 2048) + SRAM_NOW
    root = build_host(tmp_path / "long", HostSpec(instance_type="trn1.32xlarge", kern_log=log))
    assert (root / "var/log/kern.log").stat().st_size > 17 << 20
    result = run_cli(["health", "--root", str(root), "--format", "npd"])
    assert result.returncode == 1 and result.stdout.startswith("ND-HW-002 NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR")


def test_nhc_prints_only_unknown_lines_while_the_verdict_is_unknown(tmp_path: Path) -> None:
    """An unreadable module list makes the verdict unknown; a trn1.32xlarge without its EFA interfaces
    is a warning beside it. A drain script that drains on `ERROR:` or `WARNING:` must not act on a node it could
    not judge. (An error beside an unreadable check is certain: that node is unhealthy, its lines `ERROR:`.)"""
    root = build_host(tmp_path / "root", HostSpec(instance_type="trn1.32xlarge", efa=False))
    (root / "proc/modules").unlink()
    os.mkfifo(root / "proc/modules")
    result = run_cli(["health", "--root", str(root), "--format", "nhc"], timeout=60)
    lines = result.stdout.splitlines()
    assert result.returncode == 3 and lines
    assert all(line.startswith("UNKNOWN: neurondoctor: ") for line in lines), lines
    assert any("also found warning ND-" in line for line in lines), lines
    judged = build_host(tmp_path / "judged", HostSpec(node_mode=0o600))  # near miss: the same error, judged
    assert run_cli(["health", "--root", str(judged), "--format", "nhc"]).stdout.startswith("ERROR: neurondoctor: ")
