"""Benchmark: `cache status` on a compile cache of 100,000 entries, and what a large cache costs `check`.

The cache is built in the layout of neuronx-cc 2.15 (tests/cache_fixture.py), every file sparse or empty (the
count reads names and `lstat` sizes, never contents), so 100,000 entries take inodes, not gigabytes. Prints:
- `cache status --json` over it: median wall time and the peak resident memory of the process (target: under 2 s
  and 200 MiB);
- `check --venv V --json` with NEURON_CC_FLAGS pointing at that cache against the same check with an empty cache,
  interleaved, median of N (check counts at most 10,000 entries or 6 ms: the ratio shows what is left of that);
- with `--venv V` (the 300-distribution venv `scripts/bench_check.py` builds), also the check budget:
  that check with the large cache against the floor, V's own interpreter listing its distributions with
  `importlib.metadata`, interleaved (target: within 2x, the check budget).

Usage: python scripts/bench_cache.py [--entries 100000] [--runs 7] [--keep DIR] [--venv DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# The check budget's floor (the venv's own interpreter listing its distributions), as scripts/bench_check.py times it.
FLOOR_SCRIPT = ("import importlib.metadata as m\n"
                "rows = [(d.metadata['Name'], d.version) for d in m.distributions()]\n")
COMPILERS = ("neuronxcc-2.15.141.0+d3cfc8ca", "neuronxcc-2.19.8089.0+8ab9f450")


def build_cache(cache: Path, entries: int) -> None:
    """`entries` MODULE_ folders split over two compiler versions; 1 in 50 failed, 1 in 200 locked."""
    for number in range(entries):
        folder = cache / COMPILERS[number % 2] / f"MODULE_{number:020d}+39f12043"
        folder.mkdir(parents=True)
        (folder / "compile_flags.json").touch()
        for name, size in (("model.hlo_module.pb", 2048), ("model.neff", 40960)):
            with open(folder / name, "wb") as handle:
                handle.truncate(size)
        if number % 50 == 7:
            (folder / "model.log").touch()
            (folder / "model.neff").unlink()
        else:
            (folder / "model.done").touch()
        if number % 200 == 11:
            (folder / "model.hlo_module.pb.lock").touch()


def timed(command: list[str], env: dict[str, str]) -> tuple[float, int]:
    """(wall seconds, peak resident KiB) of one run, the peak from wait4's rusage of that child alone."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - started, usage.ru_maxrss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--keep", type=Path, help="build the cache here and keep it (reused when present)")
    parser.add_argument("--venv", type=Path, help="check this venv, and time it against its metadata-scan floor")
    args = parser.parse_args()
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV")}
    with tempfile.TemporaryDirectory(prefix="nd-bench-cache-") as scratch:
        cache = args.keep or Path(scratch) / "cache"
        if not cache.exists():
            started = time.perf_counter()
            build_cache(cache, args.entries)
            print(f"built {args.entries:,} entries in {time.perf_counter() - started:.0f} s")
        empty = Path(scratch) / "empty-cache"
        empty.mkdir()
        venv = args.venv or Path(scratch) / "venv"
        if args.venv is None:
            subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
        status = [timed([sys.executable, "-m", "neurondoctor", "cache", "status", str(cache), "--json"], env)
                  for _ in range(args.runs)]
        walls = {"large": [], "empty": [], "floor": []}  # type: dict[str, list[float]]
        for _ in range(max(args.runs, 20) if args.venv else args.runs):
            for name, path in (("large", cache), ("empty", empty)):
                run_env = {**env, "NEURON_CC_FLAGS": f"--cache_dir={path}"}
                walls[name].append(timed([sys.executable, "-m", "neurondoctor", "check", "--venv", str(venv),
                                          "--json"], run_env)[0])
            if args.venv:
                walls["floor"].append(timed([str(venv / "bin" / "python"), "-c", FLOOR_SCRIPT], env)[0])
    wall = statistics.median(item[0] for item in status)
    peak = max(item[1] for item in status) / 1024
    print(f"cache status --json, {args.entries:,} entries: {wall:.2f} s median wall, {peak:.0f} MiB peak resident "
          f"(targets: < 2 s, < 200 MiB; {args.runs} runs)")
    large, small = statistics.median(walls["large"]), statistics.median(walls["empty"])
    print(f"check --venv V --json: {large * 1000:.0f} ms with that cache, {small * 1000:.0f} ms with an empty one "
          f"(ratio {large / small:.2f}; median of {len(walls['large'])} interleaved runs)")
    if walls["floor"]:
        floor = statistics.median(walls["floor"])
        print(f"check budget: the metadata-scan floor of V {floor * 1000:.0f} ms; check with the large cache "
              f"{large / floor:.2f}x of it, with an empty one {small / floor:.2f}x (target <= 2x; median of "
              f"{len(walls['floor'])} interleaved runs)")
    print(f"this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB peak resident")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
