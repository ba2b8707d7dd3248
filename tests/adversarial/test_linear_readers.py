"""Attack class: quadratic readers. A log, a build log or a pasted page is whatever its writer made it: a pattern's
opener repeated without its closer, or one line of megabytes, must cost each reader time in proportion to its bytes,
never their square (a device-memory line without its `)` took `explain` minutes for 1 MiB; a make.log of one line of
`*** ` stalled `check --root`; a heading without its date stalled scripts/add_release.py). Every reader cuts lines at
log_text.MAX_LINE and its patterns stay on one line with bounded repeats (neurondoctor/log_text.py).

Each test runs the real command on a crafted input of 1 MiB in a subprocess with a generous timeout, so a
regression fails instead of hanging; the seconds are scripts/bench_readers.py's to print, never asserted here."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
import time
from pathlib import Path

import pytest

from neurondoctor.actions.bundle.collectors import BundleContext, Member
from neurondoctor.actions.bundle.log_explanations import BUDGET_SPENT, explained_logs
from neurondoctor.host.rootfs import RootFS
from neurondoctor.log_text import MAX_LINE
from neurondoctor.redaction import Redactor
from tests.conftest import REPO, cli_env, run_cli
from tests.host_fixture import HostSpec, build_host

MIB = 1 << 20
TIMEOUT_S = 60  # a linear reader takes well under a second here (scripts/bench_readers.py); a quadratic one, hours
# The runtime's out-of-memory line (neuron-runtime/explore/device-memory.rst) cut before its `)`, once a line.
OPENED_ALLOCATION = "Failed to allocate 4.000GB (alignment: none, usage: tensors \n"


def _crafted_runtime_log() -> str:
    return "TDRV:log_dev_mem\n" + OPENED_ALLOCATION * (MIB // len(OPENED_ALLOCATION))


def test_explain_reads_an_allocation_line_repeated_without_its_parenthesis(tmp_path: Path) -> None:
    log = tmp_path / "runtime.log"
    log.write_text(_crafted_runtime_log())
    result = run_cli(["explain", str(log), "--json"], timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["category"] == "resource" and document["detail"] is None  # no allocation line closes


def test_check_reads_a_make_log_of_one_long_line(tmp_path: Path) -> None:
    """A make.log of one line of `*** ` (make's error marker without its `Error N`): the build failure is still
    judged, and the lines the report quotes are cut at MAX_LINE."""
    make_log = "make[1]: " + "*** " * (MIB // 4 - 64) + "\nmake: *** [Makefile:12: all] Error 2\n"  # within 1 MiB
    root = build_host(tmp_path / "root", HostSpec(module_built=False, driver_loaded=False, make_log=make_log,
                                                  dpkg_states={"aws-neuronx-dkms": "install ok half-configured"}))
    result = run_cli(["check", "--json", "--root", str(root)], timeout=TIMEOUT_S)
    document = json.loads(result.stdout)
    [finding] = [finding for finding in document["findings"] if finding["id"] == "ND-DKMS-001"]
    tail = finding["evidence"]["make_log_tail"]
    assert tail and all(len(line) <= MAX_LINE for line in tail)
    assert finding["evidence"]["make_log_error"] == "make: *** [Makefile:12: all] Error 2"


def test_add_release_reads_a_heading_without_its_date(tmp_path: Path) -> None:
    page = tmp_path / "page.txt"
    page.write_text("Neuron 2.34.0 \u2014 " + " " * MIB + "x\nTrn1 packages#\n")
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "add_release.py"), str(page), "--release",
                             "2.34.0", "--source", "https://example.com/release-content.html"],
                            capture_output=True, text=True, timeout=TIMEOUT_S, cwd=str(REPO), env=cli_env())
    assert result.returncode == 1
    assert result.stderr.strip() == "error: the page shows no package list for Neuron 2.34.0"


def test_the_bundle_explains_a_crafted_compile_log(tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge"))
    workdir = root / "tmp/ubuntu/neuroncc_compile_workdir/50f29840-cfac-49a2-8d40-8b0369b8618f"
    workdir.mkdir(parents=True)
    (workdir / "log-neuron-cc.txt").write_text(_crafted_runtime_log())
    archive = tmp_path / "support.tar.gz"
    result = run_cli(["bundle", "-o", str(archive), "--root", str(root), "--max-time", "120"], timeout=TIMEOUT_S)
    assert result.returncode == 0, result.stderr
    with tarfile.open(archive) as bundle:
        [name] = [name for name in bundle.getnames() if name.endswith("/explained.json")]
        document = json.loads(bundle.extractfile(name).read())  # type: ignore[union-attr]
    assert [entry["category"] for entry in document["explained"]] == ["resource"]
    assert document["not_explained"] == []


def test_explained_json_names_the_logs_a_spent_budget_left(tmp_path: Path) -> None:
    """The bundle's time budget is looked at before each log: once spent, the logs left are listed with the reason,
    not explained past it (a budget that ended a second ago stands for one spent during an earlier log)."""
    logs = [Member(f"compile-logs/tmp/u/neuroncc_compile_workdir/{number}/log-neuron-cc.txt",
                   _crafted_runtime_log().encode()) for number in range(2)]
    context = BundleContext(fs=RootFS(str(tmp_path)), environ={}, redactor=Redactor(),
                            deadline=time.monotonic() - 1)
    [member] = explained_logs(context, logs)
    document = json.loads(member.data)
    assert document["logs_read"] == 0 and document["explained"] == []
    assert document["not_explained"] == [{"member": log.name, "why": BUDGET_SPENT} for log in logs]


@pytest.mark.parametrize("reader", ["explain", "canary failure", "dkms make.log", "kernel log", "bundle explained.json",
                                    "bootstrap step output", "add_release page"])
def test_every_reader_finishes_every_crafted_input(reader: str) -> None:
    """scripts/bench_readers.py runs the reader on each of its crafted inputs of 1 MiB (openers without closers,
    one line of 1 MiB, empty lines, nested brackets): it must finish, whatever the seconds it prints."""
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "bench_readers.py"), "--runs", "1", "--reader",
                             reader], capture_output=True, text=True, timeout=120, cwd=str(REPO), env=cli_env())
    assert f"worst for {reader}" in result.stdout, result.stdout + result.stderr


# The readers per kind of message (rules/explain_readers/): each one's needle repeated without the rest of its line,
# on one line and on many, and the normaliser's openers (a colour code, a pod prefix never closed).
EXPLAIN_READER_UNITS = {
    "traceback frames": 'File "/a/lib/python3.1/site-packages/' + "b" * 100 + "\n",
    "exception lines": "RuntimeError: x\n",
    "pip requirement": "could not find a version that satisfies the requirement ",
    "pip conflict": "a 1 requires b, but you have a which is incompatible ",
    "apt package": "E: Unable to locate package ",
    "loader": "x: cannot open shared object file",
    "dkms compile error": "/var/lib/dkms/aws-neuronx/2.0/a.c:1: error: ",
    "shell": "a: command not found ",
    "runtime cores": "NeuronCore(s) not available - Requested: ",
    "runtime device": "Failed to open /dev/neuron",
    "kubernetes": "Insufficient aws.amazon.com/neuron",
    "compiler": "neuronx-cc ",
    "ansi": "\x1b[",
    "pod prefix": "[pod/" + "a" * 200 + "\n",
}


@pytest.mark.parametrize("name", sorted(EXPLAIN_READER_UNITS))
def test_explain_readers_read_a_crafted_mib_in_time(tmp_path: Path, name: str) -> None:
    unit = EXPLAIN_READER_UNITS[name]
    log = tmp_path / "crafted.log"
    log.write_text(unit * (MIB // len(unit)))
    result = run_cli(["explain", str(log), "--json", "--no-host"], timeout=TIMEOUT_S)
    assert result.returncode in (0, 3), result.stderr
    document = json.loads(result.stdout)
    assert len(json.dumps(document)) < 64 << 10  # what it quotes is bounded, however long the input
