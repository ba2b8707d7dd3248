"""Benchmark: `neurondoctor venv create` with uv against pip, on the same local index served on 127.0.0.1.

The index holds the Neuron 2.31.1 package set as small test wheels (real names, versions and pins) plus
pip's own wheel; both builds include creating the venv, the single resolver run, the guard and the
verifying `check`. Prints each median over N runs and the ratio. Target: uv at least 5x faster.

Usage: python scripts/bench_venv.py [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.local_index import build_index, serve  # noqa: E402
from tests.test_venv_create import bundled_pip, release_wheels  # noqa: E402


def median_build_seconds(installer: str, index_url: str, scratch: Path, runs: int, env: dict[str, str]) -> float:
    times = []
    for run in range(runs):
        target = scratch / f"{installer}-{run}"
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "neurondoctor", "venv", "create", str(target), "--release",
                                 "2.31.1", "--python", sys.executable, "--installer", installer, "--index-url",
                                 index_url], capture_output=True, text=True, env=env, timeout=900)
        times.append(time.perf_counter() - started)
        if result.returncode != 0:
            raise SystemExit(f"{installer} build failed:\n{result.stderr}")
        shutil.rmtree(target)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nd-bench-venv-") as scratch_dir:
        scratch = Path(scratch_dir)
        build_index(scratch, release_wheels(), [bundled_pip()])
        env = {key: value for key, value in os.environ.items() if not key.startswith(("PIP_", "UV_"))}
        env.update(HOME=str(scratch / "home"), XDG_CONFIG_DIRS=str(scratch / "xdg"),
                   UV_CACHE_DIR=str(scratch / "uv-cache"))
        with serve(scratch / "index") as base:
            index_url = f"{base}/simple"
            median_build_seconds("uv", index_url, scratch, 1, env)  # warm uv's cache, as on a second build
            uv_s = median_build_seconds("uv", index_url, scratch, args.runs, env)
            pip_s = median_build_seconds("pip", index_url, scratch, args.runs, env)
    print(f"venv create --release 2.31.1 against a local index, {args.runs} runs each (median wall time)")
    print(f"  --installer uv : {uv_s * 1000:8.0f} ms")
    print(f"  --installer pip: {pip_s * 1000:8.0f} ms")
    print(f"  ratio pip / uv : {pip_s / uv_s:8.1f}x (target >= 5x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
