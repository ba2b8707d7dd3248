"""Benchmark: `neurondoctor health --slurm` as Slurm's HealthCheckProgram runs it, on the fixture trn1.32xlarge
host (16 devices, tests/host_fixture.py), against `check --format nhc` on the same root and a bare interpreter
start, in the same run. Target: health under 1 s median.

Then the deadline: `health --slurm --root /` with a `neuron-ls` on PATH that never returns (and a grandchild that
keeps its output open) must end inside `--deadline`, reporting the last verdict marked stale. A recording
`scontrol` stands in for Slurm's.

Usage: python scripts/bench_health.py [--runs 9] [--deadline 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.doubles.slurm import FakeSlurm  # noqa: E402
from tests.host_fixture import HostSpec, build_host  # noqa: E402


def median_seconds(command: list[str], runs: int, env: dict[str, str]) -> tuple[float, int]:
    times, code = [], 0
    for _ in range(runs):
        started = time.perf_counter()
        code = subprocess.run(command, capture_output=True, env=env, timeout=120).returncode
        times.append(time.perf_counter() - started)
    return statistics.median(times), code


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--deadline", type=float, default=5.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-health-") as temporary:
        directory = Path(temporary)
        root = build_host(directory / "trn1.32xlarge", HostSpec(instance_type="trn1.32xlarge"))
        slurm = FakeSlurm(directory, "IDLE")
        bin_dir, env = slurm.bin, slurm.env()
        status = directory / "health.json"
        nd = [sys.executable, "-m", "neurondoctor"]
        health, code = median_seconds([*nd, "health", "--slurm", "--root", str(root), "--status-file", str(status)],
                                      args.runs, env)
        check, _ = median_seconds([*nd, "check", "--root", str(root), "--format", "nhc"], args.runs, env)
        bare, _ = median_seconds([sys.executable, "-c", "pass"], args.runs, env)
        print(f"health --slurm (trn1.32xlarge fixture): {health * 1000:.0f} ms median of {args.runs} "
              f"(exit {code}; target < 1000 ms)")
        print(f"check --format nhc, same root:          {check * 1000:.0f} ms  (health/check {health / check:.2f}x)")
        print(f"python -c pass:                         {bare * 1000:.0f} ms  (health/bare {health / bare:.1f}x)")

        hang = bin_dir / "neuron-ls"  # never answers; its grandchild keeps stdout open after it is killed
        hang.write_text("#!/bin/sh\n(setsid sleep 600 &)\nexec sleep 600\n")
        hang.chmod(0o755)
        live_status = directory / "live.json"
        subprocess.run([*nd, "health", "--root", "/", "--select", "ND-ENV", "--status-file", str(live_status)],
                       capture_output=True, env=dict(os.environ, SLURMD_NODENAME="trn1-a"), timeout=120)
        started = time.perf_counter()
        done = subprocess.run([*nd, "health", "--slurm", "--root", "/", "--deadline", str(args.deadline),
                               "--status-file", str(live_status)], capture_output=True, text=True, env=env,
                              timeout=120)
        elapsed = time.perf_counter() - started
        written = json.loads(live_status.read_text())
        print(f"hanging neuron-ls on the live path: ended after {elapsed:.1f} s with --deadline {args.deadline:g} "
              f"(exit {done.returncode}; status file state {written['state']}, stale {written['stale']})")
        print("  " + done.stderr.strip().splitlines()[-1][:200])
    return 0


if __name__ == "__main__":
    sys.exit(main())
