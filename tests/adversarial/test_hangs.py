"""Attack class: hangs and unbounded work. FIFOs, sockets and devices where files belong, commands whose
grandchildren keep the output open, a gigabyte of output, ranges that would expand into billions of cores,
environments with tens of thousands of records: every run ends in bounded time and memory, with a report."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neurondoctor.command_runner import run_command
from neurondoctor.command_timeouts import duration_from_environ
from tests.conftest import REPO, check_json, cli_env, findings_by_id, run_cli
from tests.host_fixture import Holder, HostSpec, build_host
from tests.neuron_envs import HEALTHY_STACKS, stack_wheels
from tests.wheelhouse import VenvFactory, write_pip_conf

HOST_READ_PATHS = ("etc/os-release", "var/lib/dpkg/status", "proc/modules", "sys/module/neuron/version",
                   "proc/sys/kernel/osrelease", "sys/devices/virtual/dmi/id/product_name", "etc/pip.conf",
                   "etc/hostname", "proc/uptime", "etc/apt/sources.list.d/neuron.list",
                   "var/lib/cloud/data/instance-id", "sys/devices/virtual/dmi/id/sys_vendor",
                   "usr/lib/x86_64-linux-gnu/libc.so.6")
VENV_READ_PATHS = ("pyvenv.cfg", "pip.conf", "neurondoctor.json")
SITE_READ_PATHS = ("torch/version.py",)
DIST_INFO_FILES = ("METADATA", "INSTALLER", "top_level.txt", "direct_url.json")


def _fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    os.mkfifo(path)


@pytest.fixture
def healthy_venv(venvs: VenvFactory, tmp_path: Path) -> Path:
    venv = venvs.create(f"hang-{tmp_path.name}", parent=tmp_path)
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.31.1"]))
    write_pip_conf(venv)
    return venv


def test_fifos_at_every_read_path_never_block_check_or_bundle(tmp_path: Path, healthy_venv: Path) -> None:
    root = build_host(tmp_path / "root", HostSpec(make_log="make: *** [neuron.ko] Error 1\n", module_built=False))
    for relative in HOST_READ_PATHS:
        _fifo(root / relative)
    for relative in VENV_READ_PATHS:
        _fifo(healthy_venv / relative)
    site = next(healthy_venv.glob("lib/python*/site-packages"))
    for relative in SITE_READ_PATHS:
        _fifo(site / relative)
    dist_info = next(site.glob("torch_neuronx-*.dist-info"))
    for name in DIST_INFO_FILES:
        _fifo(dist_info / name)
    make_log = next(root.glob("var/lib/dkms/aws-neuronx/*/build/make.log"))
    _fifo(make_log)
    cache_log = root / "tmp/ubuntu/neuroncc_compile_workdir/50f29840-cfac-49a2-8d40-8b0369b8618f/log-neuron-cc.txt"
    _fifo(cache_log)
    planted = len(HOST_READ_PATHS) + len(VENV_READ_PATHS) + len(SITE_READ_PATHS) + len(DIST_INFO_FILES) + 2
    assert planted >= 10
    started = time.monotonic()
    code, report, stderr = check_json(["--root", str(root), "--venv", str(healthy_venv)])
    assert time.monotonic() - started < 60 and "Traceback" not in stderr
    assert code in (1, 3)  # the unreadable files make areas unknown or broken, never a silent pass
    assert report["health"]["state"] in ("unhealthy", "unknown")
    damaged = findings_by_id(report).get("ND-VENV-003", [])
    assert any("not a regular file" in problem or "unreadable" in problem
               for finding in damaged for problem in finding["evidence"].get("problems", []))
    bundle = run_cli(["bundle", "--root", str(root), "--venv", str(healthy_venv), "-o", str(tmp_path / "b.tar.gz"),
                      "--max-time", "40"], timeout=120)
    assert bundle.returncode == 0 and "Traceback" not in bundle.stderr
    assert time.monotonic() - started < 120


def test_a_socket_where_the_dpkg_status_belongs(tmp_path: Path) -> None:
    root = build_host(tmp_path / "r", HostSpec())
    status = root / "var/lib/dpkg/status"
    status.unlink()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(status))
    try:
        code, report, _ = check_json(["--root", str(root)])
    finally:
        server.close()
    driver = next(check for check in report["checks"] if check["id"] == "driver")
    assert code == 3 and driver["status"] == "unknown" and "not a regular file" in driver["error"]


def test_a_grandchild_that_escapes_with_setsid_does_not_stretch_the_timeout(tmp_path: Path) -> None:
    started = time.monotonic()
    result = run_command(["sh", "-c", "setsid sh -c 'sleep 59.876' & sleep 59.876"], timeout=1)
    assert result.timed_out and time.monotonic() - started < 4
    exited = run_command(["sh", "-c", "echo answer; setsid sh -c 'sleep 59.876' &"], timeout=20)
    assert exited.ok and exited.stdout == "answer\n" and time.monotonic() - started < 10
    time.sleep(0.3)
    leftover = subprocess.run(["pgrep", "-f", "sleep 59.876"], capture_output=True, text=True)  # a unique duration
    assert leftover.stdout.strip() == ""  # what still held the pipe was killed


def test_a_command_past_its_deadline_may_be_asked_to_stop_before_it_is_killed(tmp_path: Path) -> None:
    """With a grace (srun: it then cancels its step on the node), SIGTERM comes first and the command ends by itself
    within it; without one, and for a command that ignores SIGTERM, the kill still comes, bounded."""
    marker = tmp_path / "stopped"
    script = f"trap 'echo stopped > {marker}; exit 0' TERM; sleep 59.871 & wait"
    started = time.monotonic()
    asked = run_command(["sh", "-c", script], timeout=1, stop_grace_s=5)
    assert asked.timed_out and marker.read_text() == "stopped\n" and time.monotonic() - started < 4
    marker.unlink()
    killed = run_command(["sh", "-c", script], timeout=1)
    assert killed.timed_out and not marker.exists()
    started = time.monotonic()
    deaf = run_command(["sh", "-c", "trap '' TERM; sleep 59.872 & wait"], timeout=1, stop_grace_s=2)
    assert deaf.timed_out and 2.5 < time.monotonic() - started < 6
    time.sleep(0.3)
    leftover = subprocess.run(["pgrep", "-f", "sleep 59.87"], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""


def _check_with_neuron_ls(tmp_path: Path, script: str, command_timeout: str,
                          timeout: float) -> tuple[subprocess.CompletedProcess[str], float]:
    """`check --json` on the live host with `neuron-ls` replaced by `script` (first on PATH) and the given
    NEURONDOCTOR_COMMAND_TIMEOUT: the result and the seconds it took."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "neuron-ls").write_text(f"#!/bin/sh\n{script}\n")
    (tools / "neuron-ls").chmod(0o755)
    started = time.monotonic()
    result = run_cli(["check", "--json"], env=cli_env({"PATH": f"{tools}:{os.environ['PATH']}",
                                                         "NEURONDOCTOR_COMMAND_TIMEOUT": command_timeout}),
                     timeout=timeout)
    return result, time.monotonic() - started


def test_a_hanging_neuron_ls_with_a_daemonised_grandchild_on_the_live_host(tmp_path: Path) -> None:
    result, elapsed = _check_with_neuron_ls(tmp_path, "setsid sh -c 'sleep 120' &\nsleep 120", "2", 60)
    assert elapsed < 20 and "Traceback" not in result.stderr
    assert subprocess.run(["pgrep", "-f", "sleep 120"], capture_output=True).stdout.strip() == b""


@pytest.mark.parametrize(("value", "seconds"), [("5", 5.0), ("3600", 3600.0), ("inf", 10.0), ("-inf", 10.0),
                                               ("nan", 10.0), ("1e9", 10.0), ("0", 10.0), ("-3", 10.0),
                                               ("9" * 400, 10.0), ("soon", 10.0)])
def test_durations_from_the_environment_are_finite_and_bounded(value: str, seconds: float) -> None:
    found, problem = duration_from_environ({"NEURONDOCTOR_COMMAND_TIMEOUT": value}, "NEURONDOCTOR_COMMAND_TIMEOUT",
                                           10.0)
    assert found == seconds and (problem is None) == (seconds != 10.0)
    assert problem is None or len(problem) < 160  # one line, however long the value


def test_a_timeout_from_the_environment_never_removes_the_deadline(tmp_path: Path) -> None:
    """`NEURONDOCTOR_COMMAND_TIMEOUT=inf` falls back to the default, with a warning."""
    value = "inf"
    result, elapsed = _check_with_neuron_ls(tmp_path, "sleep 117.345", value, 90)
    assert elapsed < 45 and "Traceback" not in result.stderr
    assert f"warning: NEURONDOCTOR_COMMAND_TIMEOUT='{value}' is not a number of seconds" in result.stderr
    assert subprocess.run(["pgrep", "-f", "sleep 117.345"], capture_output=True).stdout.strip() == b""


def test_a_python_that_prints_a_gigabyte_costs_no_gigabyte(tmp_path: Path) -> None:
    fake = tmp_path / "python3"
    fake.write_text("#!/bin/sh\nexec head -c 1000000000 /dev/zero\n")
    fake.chmod(0o755)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    result = subprocess.run([sys.executable, "-m", "neurondoctor", "check", "--json", "--root", str(tmp_path),
                             "--python", str(fake)], capture_output=True, text=True, env=cli_env(), cwd=str(REPO),
                            timeout=120)
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert max(before, peak_kib) < 400 * 1024  # KiB: the doctor never held the gigabyte
    assert result.returncode == 1 and "ND-VENV-002" in result.stdout


def test_redacting_a_long_value_is_linear(tmp_path: Path) -> None:
    from neurondoctor.redaction import redact_secrets

    started = time.monotonic()
    for text in ("9" * 4096, "a" * 65536, "x=" * 32768, "--token " * 4096, "'" * 65536, "a.b-" * 16384,
                 "password" * 8192, "http://" * 8192, "_token" * 10000):
        redact_secrets(text)
    assert time.monotonic() - started < 5


def test_a_core_range_of_a_trillion_is_judged_without_expanding_it(tmp_path: Path) -> None:
    root = build_host(tmp_path / "r", HostSpec(instance_type="trn1.32xlarge"))
    started = time.monotonic()
    for value in ("0-999999999999", "0-3," * 20000 + "4", "9" * 5000):
        code, report, _ = check_json(["--root", str(root)],
                                     env=cli_env({"NEURON_RT_VISIBLE_CORES": value,
                                                  "NEURON_RT_NUM_CORES": "9" * 5000}))
        finding = findings_by_id(report)["ND-ENV-001"][0] if value != "0-3," * 20000 + "4" else None
        assert code == 1 and report["health"]["state"] == "unhealthy"
        assert finding is None or len(finding["title"]) < 200
        assert "ND-ENV-002" in findings_by_id(report)
    assert time.monotonic() - started < 30


def test_an_environment_with_more_records_than_any_real_one_is_bounded(tmp_path: Path) -> None:
    venv = tmp_path / "huge"
    site = venv / "lib/python3.11/site-packages"
    site.mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n")
    for index in range(10_500):
        info = site / f"pkg{index}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: pkg{index}\nVersion: 1.0\n")
    (tmp_path / "empty-root").mkdir()
    started = time.monotonic()
    code, report, _ = check_json(["--root", str(tmp_path / "empty-root"), "--venv", str(venv)])
    elapsed = time.monotonic() - started
    sites = report["facts"]["environments"][0]["site_dirs"]
    assert elapsed < 45 and sites[0]["error"].startswith("partial: 10500 install records")
    assert len(sites[0]["distributions"]) == 10_000
    assert code in (0, 1, 3)


def test_a_process_with_more_descriptors_than_the_cap_is_read_up_to_it(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from neurondoctor.host import device_holders
    from neurondoctor.host.rootfs import RootFS

    monkeypatch.setattr(device_holders, "MAX_FDS_PER_PROCESS", 2_000)
    root = build_host(tmp_path / "r", HostSpec(holders=[Holder(4242, "python", "python train.py", (0,))]))
    fd_dir = root / "proc/4242/fd"
    for number in range(1000, 6_000):
        (fd_dir / str(number)).symlink_to("/dev/null")
    (fd_dir / "5999").unlink()
    (fd_dir / "5999").symlink_to("/dev/neuron0")  # beyond the cap: not read
    holders = device_holders.read_device_holders(RootFS(root))
    assert [holder.pid for holder in holders] == [4242]  # the low-numbered device descriptor is still found
    assert holders[0].devices == ["/dev/neuron0"]


def test_the_bundle_time_budget_bounds_file_collectors_too(tmp_path: Path) -> None:
    """Compile workdirs of many directories: once `--max-time` is spent the search stops and says so."""
    from neurondoctor.actions.bundle.collectors import BundleContext, PartialCollection, compile_logs
    from neurondoctor.host.rootfs import RootFS
    from neurondoctor.redaction import Redactor

    workdirs = tmp_path / "root/tmp/ubuntu/neuroncc_compile_workdir"
    for index in range(50):
        (workdirs / f"{index:08x}-cfac-49a2-8d40-8b0369b8618f").mkdir(parents=True)
    ctx = BundleContext(fs=RootFS(tmp_path / "root"), environ={}, redactor=Redactor(),
                        deadline=time.monotonic() - 1)
    with pytest.raises(PartialCollection, match="stopped: the total time budget was spent"):
        compile_logs(ctx)
    started = time.monotonic()
    result = run_cli(["bundle", "--root", str(tmp_path / "root"), "-o", str(tmp_path / "b.tar.gz"),
                      "--max-time", "0.01"], timeout=60)
    assert result.returncode == 0 and time.monotonic() - started < 20
    from neurondoctor.actions.bundle.bundle_command import manifest_of

    skipped = [record for record in manifest_of(tmp_path / "b.tar.gz")["collectors"] if record["status"] == "skipped"]
    assert any("time budget" in (record["error"] or "") for record in skipped)


def test_an_unreadable_module_list_is_never_a_driver_that_is_not_loaded(tmp_path: Path) -> None:
    """A FIFO at proc/modules used to read as "no modules loaded": ND-DRV-002, an error, and a health check that
    drains a healthy node. Unreadable is unknown: the driver check cannot judge, nothing is drained."""
    root = build_host(tmp_path / "root", HostSpec())
    _fifo(root / "proc/modules")
    started = time.monotonic()
    code, report, _ = check_json(["--root", str(root)])
    assert time.monotonic() - started < 30
    assert code == 3 and report["health"]["state"] == "unknown", report["health"]
    assert "ND-DRV-002" not in findings_by_id(report)
    driver = next(check for check in report["checks"] if check["id"] == "driver")
    assert driver["status"] == "unknown" and "could not read /proc/modules" in str(report["health"]["reasons"])


@pytest.mark.parametrize("crafted", ["%a = " + "{" * (8 << 20), ("%a = f32[2]{" + "1," * 3000 + "\n") * 1400,
                                     "\n" * (8 << 20), "xaten::a" * (1 << 20)])
def test_explain_of_a_crafted_window_ends(tmp_path: Path, crafted: str) -> None:
    """Every pattern explain runs is linear (`%a = {{{…` took minutes for 2 MiB, hours for 8 MiB);
    scripts/bench_explain.py measures the worst against a real log."""
    log = tmp_path / "crafted.log"
    log.write_text(crafted)
    result = run_cli(["explain", str(log)], timeout=60)
    assert result.returncode == 3 and "Not recognised" in result.stdout, result.stderr
