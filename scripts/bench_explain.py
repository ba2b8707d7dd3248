"""Benchmark: `neurondoctor explain` on crafted inputs of its whole 8 MiB window against a real log of the same size.

The real log is the error texts users posted (tests/test_explain.py's REPORTS, compiler logs and tracebacks from
the Neuron issue trackers) repeated to 8 MiB, each ending in its error as logs do. The crafted inputs are the
shapes that make regular expressions backtrack or skip slowly: runs of one character, a pattern's prefix repeated
without its end (`%a = {{{…`, `aten::aten::…`, `NCC_NCC_…`, the runtime's out-of-memory line without its `)`), an
HLO layout that never closes, eight million newlines, lines far past the line bound. Each is explained in process
(the matching alone) and through the command (`explain FILE --no-host`: the reading, without the check areas
that answer it on this host, which `scripts/bench_check.py` measures), and the worst is printed with its ratio to
the real log. Every reader of rules/explain_readers/ has its crafted inputs here. scripts/bench_readers.py runs
every other reader of untrusted text on crafted inputs of 1 MiB.
Target: the worst crafted input under 2 s.

Usage: python scripts/bench_explain.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neurondoctor.cli.explain_command import INPUT_LIMIT  # noqa: E402
from neurondoctor.log_text import MAX_LINE  # noqa: E402
from neurondoctor.release_data.probe_data import (  # noqa: E402
    load_compiler_fixes,
    load_error_signatures,
    load_op_support,
)
from neurondoctor.rules.probes.error_explanation import explain_text  # noqa: E402
from tests.test_explain import REPORTS  # noqa: E402


def _filled(unit: str) -> str:
    return unit * (INPUT_LIMIT // len(unit))


def crafted_inputs() -> dict[str, str]:
    return {
        "one character": "a" * INPUT_LIMIT,
        "spaces": " " * INPUT_LIMIT,
        "newlines": "\n" * INPUT_LIMIT,
        "HLO type then braces": "%a = " + "{" * (INPUT_LIMIT - 5),
        "HLO braces per line": _filled("%a = " + "{" * 200 + "\n"),
        "HLO layout never closed": _filled("%a = f32[2]{" + "1," * 3000 + "\n"),
        "HLO instruction per line": _filled("%a = b c(\n"),
        "percent and a word": "%" + "a" * (INPUT_LIMIT - 1),
        "aten:: repeated": _filled("aten::"),
        "aten op inside words": _filled("xaten::a"),
        "NCC_ repeated": _filled("NCC_"),
        "NCC code inside words": _filled("xNCC_ABCD123"),
        "compiler version prefix": _filled("neuronx-cc=="),
        "mask and bool": _filled("mask bool "),
        "line past the bound": ("b" * (MAX_LINE * 4) + "\n") * (INPUT_LIMIT // (MAX_LINE * 4 + 1)),
        # the runtime's status codes (rules/probes/runtime_status.py): a known code on lines that name no runtime,
        # a code in every line of a runtime line, enum-like names that are no status
        "status codes, no runtime": _filled(("status=4 " * 900)[:-1] + "\n"),
        "status codes, one runtime line": "nrt " + _filled("status=3 ")[4:],
        "NRT_ names repeated": _filled("NRT_AAAA "),
        # the import-time readers (rules/probes/import_errors.py): the loader's phrase and a site-packages path
        # repeated, on one line and on many, behind the signature that calls the reader
        "undefined symbol repeated": _filled("undefined symbol: "),
        "undefined symbol after a long path": _filled("/" + "a/" * 2000 + "x.so: undefined symbol: _ZN3c10\n"),
        "site-packages repeated, helper named": "libneuronpjrt-path " + _filled("/lib/python3.1/site-packages/")[19:],
        # the compiler's code table (rules/probes/compiler_codes.py): codes no table explains, and the HBM line's
        # numbers repeated without their end behind a documented out-of-memory code
        "NCC codes, none documented": _filled("NCC_ABCD123 "),
        "HBM numbers never closed": "NCC_EOOM001 " + _filled("peak HBM usage of 1.5GB exceeds ")[12:],
        # the runtime's numbers (rules/probes/runtime_log.py): the out-of-memory line without its `)`, once a line
        # (its usage field once ran on over every line after it) and all on one
        "allocation never closed, per line": "TDRV:log_dev_mem\n" + _filled(
            "Failed to allocate 4.0GB (alignment: none, usage: tensors \n")[17:],
        "allocation never closed, one line": "TDRV:log_dev_mem\n" + _filled(
            "Failed to allocate 4.0GB (alignment: none, usage: tensors ")[17:],
        # the readers per kind of message (rules/explain_readers/): each one's needle repeated without the rest of its
        # line, on many lines and on one, so that every reader runs its bounded window as often as it may
        "normaliser: ANSI openers": _filled("\x1b["),
        "normaliser: pod prefix never closed": _filled("[pod/" + "a" * 200 + "\n"),
        "normaliser: timestamps": _filled("2024-Jan-19 05:03:34.343999 31898:32693 \n"),
        "traceback: exception lines": _filled("RuntimeError: x\n"),
        "traceback: frames": _filled('File "/a/lib/python3.1/site-packages/' + "b" * 100 + "\n"),
        "traceback: error on one line": _filled("Error "),
        "pip: not found, one line": _filled("could not find a version that satisfies the requirement "),
        "pip: depends on, one line": _filled("a 1 depends on "),
        "pip: incompatible, one line": _filled("a 1 requires b, but you have a which is incompatible "),
        "apt: unable to locate, one line": _filled("unable to locate package "),
        "loader: cannot open, one line": _filled("x: cannot open shared object file"),
        "loader: version not found, one line": _filled("version `GLIBC_2. not found "),
        "dkms: compile errors, one line": _filled("/var/lib/dkms/aws-neuronx/2.0/a.c:1: error: "),
        "shell: command not found, one line": _filled("a: command not found "),
        "runtime: cores, one line": _filled("neuroncore(s) not available - requested: "),
        "runtime: open device, one line": _filled("failed to open /dev/neuron"),
        "runtime: no device, per line": _filled("no neuron device found\n"),
        "kubernetes: insufficient, one line": _filled("insufficient aws.amazon.com/neuron"),
        "compiler: names, one line": _filled("neuronx-cc "),
        "compiler: killed lines": "neuronx-cc\n" + _filled("killed\n")[11:],
        "rendezvous: one line": "torch.distributed " + _filled("client socket has timed out (a")[18:],
        "memory: one line": _filled("resource_exhausted nd 0 "),
        "memory: peak HBM never ending, one line": _filled("peak hbm usage (1.5 "),
        "memory: pages requested, one line": _filled("pages requested exceeded the max number of pages allowed (r "),
        "loader: ld.so assertion, one line": _filled("inconsistency detected by ld.so: a"),
        "shell: go exec, one line": _filled('exec: "a": executable file not found '),
        "shell: prompt lines": _filled("$ a\n"),
        "shell: not set up, per line": _filled("influxdb not setup correctly\n"),
        "runtime: not contiguous, one line": _filled("cores are not contiguous "),
        "runtime: core group, one line": _filled("neuroncore group grpc connect failed "),
        "compiler: subgraph count, one line": _filled("partitioner found 3 subgraphs max subgraph count "),
        "compiler: artifacts, per line": "neuronx-cc\n" + _filled("artifacts stored in:\n")[11:],
        "compiler: decode error, one line": _filled("decodeerror graphdef "),
        "runtime: out-of-bound, one line": _filled("nd0:nc0 [nd 1][nc 2] out-of-bound access "),
        "runtime: reset, per line": _filled("nd0 nc0 failed to stop neuron core\n"),
        "collectives: retrying, one line": _filled("connect to a:1 failed sec) timed out - retrying "),
        "collectives: connect to without retry, per line": _filled("connect to " + "a" * 190 + " retrying\n"),
        "collectives: peer gone, per line": _filled("error received from peer socket closed\n"),
        "warnings: deprecations, per line": _filled("DeprecationWarning: a.b() is deprecated. Use c instead\n"),
        "warnings: deprecations, few lines": _filled(("warning use " + "a" * 119 + " " * 5) * 80 + "\n"),
        "warnings: one line": _filled("warning will be removed `a` "),
        "framework: not supported on tpu, one line": _filled("a b c d e is not supported on tpu "),
        "framework: cuda, per line": _filled("no cuda gpus are available\n"),
        "kubernetes: placement, per line": _filled("0/4 nodes are available: 4 node(s) didn't match pod affinity\n"),
        "collectives: no interface, one line": _filled("no interface found in the same subnet as remote address "),
        "compiler: instructions, one line": _filled("number of instructions (1 too many instructions "),
        "torchscript: unknown op, one line": _filled("unknown builtin op: neuron::"),
    }


def real_log() -> str:
    texts = [text for text, _, _ in REPORTS.values()]
    log = "".join(texts)
    return (log * (INPUT_LIMIT // len(log) + 1))[-INPUT_LIMIT:]


def in_process_s(text: str, runs: int) -> float:
    signatures, op_support, fixes = load_error_signatures(), load_op_support(), load_compiler_fixes()
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        explain_text(text, signatures, op_support, fixes)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def command_s(path: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "neurondoctor", "explain", str(path), "--no-host"], capture_output=True,
                       timeout=600, env={**os.environ, "PYTHONPATH": str(REPO)})
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    inputs = {"real log (tracker excerpts)": real_log(), **crafted_inputs()}
    results: dict[str, tuple[float, float]] = {}
    with tempfile.TemporaryDirectory(prefix="nd-bench-explain-") as scratch:
        for name, text in inputs.items():
            path = Path(scratch) / "input.log"
            path.write_text(text)
            results[name] = (in_process_s(text, args.runs), command_s(path, args.runs))
            print(f"{name:30} {len(text.encode()) / (1 << 20):4.1f} MiB: matching {results[name][0] * 1000:7.1f} ms, "
                  f"explain FILE {results[name][1] * 1000:7.1f} ms")
    real = results["real log (tracker excerpts)"]
    worst = max((name for name in results if not name.startswith("real")), key=lambda name: results[name][1])
    print(f"worst crafted input: {worst}: explain FILE {results[worst][1] * 1000:.1f} ms, "
          f"{results[worst][1] / real[1]:.2f}x the real log's {real[1] * 1000:.1f} ms (target < 2 s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
