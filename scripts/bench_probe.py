"""Benchmark: the op-inventory probe's overhead against the same training step without it, in one run.

Runs the probe script in a venv with real torch 2.13.0 (CPU) in its bench mode: after a warm-up step it
alternates a plain step and a recorded step (TorchDispatchMode) N times and reports both medians, for the
built-in transformer and MLP. Target: the recorded step at most 3x the plain one.

Usage: python scripts/bench_probe.py [--venv DIR] [--repeats 20]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neurondoctor.actions.probe.probe_runner import SCRIPTS  # noqa: E402
from tests.conftest import local_torch_wheel_dir  # noqa: E402


def torch_venv(scratch: Path) -> Path:
    wheels = local_torch_wheel_dir()
    if wheels is None:
        raise SystemExit("needs the local torch 2.13.0 CPU wheel (see docs/measured.md)")
    venv = scratch / "torch-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet",
                    "--find-links", str(wheels), "torch==2.13.0"], check=True, timeout=900)
    return venv


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--venv", type=Path)
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nd-bench-probe-") as scratch:
        venv = args.venv or torch_venv(Path(scratch))
        for model in ("builtin:transformer", "builtin:mlp"):
            result = subprocess.run([str(venv / "bin" / "python"), str(SCRIPTS / "op_inventory.py"), model,
                                     "--bench", str(args.repeats)], capture_output=True, text=True, timeout=900)
            document = json.loads(result.stdout.strip().splitlines()[-1])
            plain, recorded = document["plain_s"], document["recorded_s"]
            print(f"{model:<20} plain step {plain * 1000:7.2f} ms, with the inventory {recorded * 1000:7.2f} ms: "
                  f"{recorded / plain:4.2f}x (target <= 3x; median of {args.repeats})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
