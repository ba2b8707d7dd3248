"""Benchmark: every reader of untrusted text on crafted inputs of 1 MiB (docs/trust-model.md, "Readers of untrusted
text").

The readers: `explain`'s (error signatures, the runtime's numbers, status codes, compiler codes, import errors), the
canary's classification of a failed stage, the DKMS `make.log` reader of `check`, the kernel log reader of `check
--root`, the bundle's `explained.json`, the reader of a failed bootstrap step's output, and scripts/add_release.py's
page reader. The inputs are the shapes that make a regular expression rescan what it has read: a pattern's opener
repeated without its closer (on one line and a line each), one line of 1 MiB, a MiB of empty lines or of spaces,
nested brackets. Each reader runs on each input (the readers that read a file read it from a fixture root); the
table gives the seconds (median of --runs) and the worst per reader. Target: every one under 2 s.

Usage: python scripts/bench_readers.py [--runs 3] [--reader NAME]... [--size BYTES]
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neurondoctor.actions.bootstrap.step_failure import explain_failure  # noqa: E402
from neurondoctor.actions.bundle.collectors import BundleContext, Member  # noqa: E402
from neurondoctor.actions.bundle.log_explanations import explained_logs  # noqa: E402
from neurondoctor.command_runner import CommandResult  # noqa: E402
from neurondoctor.host.dkms_state import DKMS_DIR, read_dkms_state  # noqa: E402
from neurondoctor.host.kernel_log import KERN_LOG, read_kernel_log  # noqa: E402
from neurondoctor.host.rootfs import RootFS  # noqa: E402
from neurondoctor.redaction import Redactor  # noqa: E402
from neurondoctor.release_data.probe_data import (  # noqa: E402
    load_compiler_fixes,
    load_error_signatures,
    load_op_support,
)
from neurondoctor.rules.probes.canary import classify_failure  # noqa: E402
from neurondoctor.rules.probes.error_explanation import explain_text  # noqa: E402

SIZE = 1 << 20
TARGET_S = 2.0
DKMS_VERSION = "2.29.0.0"

# (name, the line that makes the reader look, the opener repeated without its closer)
OPENERS = (
    ("device memory, no `)`", "TDRV:log_dev_mem\n", "Failed to allocate 4.0GB (alignment: none, usage: tensors "),
    ("device memory table, no row", "TDRV:log_dev_mem Failed to allocate 4.0GB (alignment: none, usage: tensors) on "
                                    "ND 0:NC 4\n", "| TOTAL | Code | Tensors "),
    ("device bytes, no `)`", "TDRV:log_dev_mem\n", "Failed to allocate DEVICE memory (1"),
    ("shared HBM, no end", "TDRV:log_dev_mem Failed to allocate 4.0GB (alignment: none, usage: tensors) on ND 0:NC "
                           "4\n", "Neuron Cores using this HBM: NC 4 "),
    ("RX timeout, no `)`", "Timeout waiting for RX\n", "Timeout waiting for RX (waited 1"),
    ("status, no number", "nrt_execute\n", "nrt status= "),
    ("HLO braces", "The following HLO instructions are not supported by neuronx-cc\n", "%a = {"),
    ("aten:: repeated", "not supported\n", "aten::"),
    ("undefined symbol, no symbol", "", "undefined symbol: "),
    ("site-packages, no end", "libneuronpjrt-path\n", "/lib/python3.1/site-packages/"),
    ("shared library, no end", "walrus_driver: error while loading shared libraries\n",
     "error while loading shared libraries: libx"),
    ("HBM numbers, no end", "NCC_EOOM001\n", "peak HBM usage of 1.5GB exceeds "),
    ("make `*** `, no end", "", "*** "),
    ("make tool, no end", "", " gcc-1: "),
    ("kernel HW error fields", "", "NEURON_HW_ERR=DMA_ERROR a=b "),
    ("release heading, no date", "", "Neuron 2.34.0 — " + " " * 1000 + "x"),
    ("package cells, no version", "Neuron 2.34.0 (01/01/2027)#\nTrn1 packages#\n", "a-1a-"),
    ("bootstrap causes, no end", "", "Kernel headers dkms autoinstall public key "),
)


def _filled(head: str, unit: str, size: int, per_line: bool) -> str:
    unit = unit + "\n" if per_line else unit
    return head + unit * max(1, (size - len(head)) // len(unit))


def crafted_inputs(size: int) -> dict[str, str]:
    inputs = {
        "one line of 1 MiB": "a" * size,
        "empty lines": "\n" * size,
        "spaces": " " * size,
        "nested brackets": "([{<" * (size // 4),
        "quotes never closed": "'\"`" * (size // 3),
        "release heading of spaces, no date": "Neuron 2.34.0 — " + " " * size + "x",
    }
    for name, head, unit in OPENERS:
        inputs[f"{name}, one line"] = _filled(head, unit, size, per_line=False)
        inputs[f"{name}, a line each"] = _filled(head, unit, size, per_line=True)
    return inputs


def _add_release() -> Callable[[str], object]:
    spec = importlib.util.spec_from_file_location("add_release", REPO / "scripts" / "add_release.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return lambda text: module.parse_page(text, "2.34.0")


def readers(scratch: Path) -> dict[str, Callable[[str], object]]:
    """Each reader as `check`, `explain`, `bundle` and the scripts run it, on one text."""
    signatures, op_support, fixes = load_error_signatures(), load_op_support(), load_compiler_fixes()
    root = scratch / "root"
    make_log = root / DKMS_DIR.lstrip("/") / DKMS_VERSION / "build/make.log"
    make_log.parent.mkdir(parents=True)
    kern_log = root / KERN_LOG.lstrip("/")
    kern_log.parent.mkdir(parents=True)
    context = BundleContext(fs=RootFS(str(root)), environ={}, redactor=Redactor())

    def dkms(text: str) -> object:
        make_log.write_text(text)
        return read_dkms_state(RootFS(str(root)), "6.8.0-1015-aws")

    def kernel(text: str) -> object:
        kern_log.write_text(text)
        return read_kernel_log(RootFS(str(root)), {}, None)

    def bundle(text: str) -> object:
        member = Member("compile-logs/tmp/u/neuroncc_compile_workdir/1/log-neuron-cc.txt", text.encode())
        return explained_logs(context, [member])

    def bootstrap(text: str) -> object:
        result = CommandResult(("apt-get", "install"), 100, text, "", 1.0)
        return explain_failure("packages", "apt-get install -y aws-neuronx-dkms", result)

    return {
        "explain": lambda text: explain_text(text, signatures, op_support, fixes),
        "canary failure": lambda text: classify_failure("run", text, signatures),
        "dkms make.log": dkms,
        "kernel log": kernel,
        "bundle explained.json": bundle,
        "bootstrap step output": bootstrap,
        "add_release page": _add_release(),
    }


def seconds(read: Callable[[str], object], text: str, runs: int) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        read(text)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--reader", action="append", help="only this reader (repeatable)")
    parser.add_argument("--size", type=int, default=SIZE, help="bytes of each crafted input")
    args = parser.parse_args()
    inputs = crafted_inputs(args.size)
    with tempfile.TemporaryDirectory(prefix="nd-bench-readers-") as scratch:
        chosen = readers(Path(scratch))
        unknown = set(args.reader or []) - set(chosen)
        if unknown:
            parser.error(f"no reader {', '.join(sorted(unknown))}; the readers: {', '.join(chosen)}")
        worst: dict[str, tuple[float, str]] = {}
        print(f"{'reader':24} {'input':44} {'seconds':>8}")
        for reader, read in chosen.items():
            if args.reader and reader not in args.reader:
                continue
            for name, text in inputs.items():
                took = seconds(read, text, args.runs)
                print(f"{reader:24} {name:44} {took:8.3f}", flush=True)
                if took >= worst.get(reader, (-1.0, ""))[0]:
                    worst[reader] = (took, name)
    print()
    for reader, (took, name) in worst.items():
        print(f"worst for {reader:24} {took:7.3f} s  ({name})")
    overall = max(worst.items(), key=lambda item: item[1][0])
    print(f"worst of all: {overall[0]}, {overall[1][1]}: {overall[1][0]:.3f} s (target < {TARGET_S:g} s)")
    return 0 if overall[1][0] < TARGET_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
