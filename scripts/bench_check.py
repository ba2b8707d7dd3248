"""Benchmark: `neurondoctor check --venv V --json` against `V/bin/python -m torch.utils.collect_env`.

Both run on the same venv: real torch 2.13.0 (CPU wheel) plus small distributions up to about 300, the
size of a working ML environment. Prints the median wall time of each over N runs and their ratio.
Target: check at least 10x faster than collect_env.

It also times `check --root R --json` on a fixture trn1.32xlarge host with 16 devices (tests/host_fixture.py)
and reports the host part (the host collectors' own timings from the JSON). Target: under 0.3 s.

It times the floor, the venv's own interpreter listing every distribution's name and version with importlib.metadata,
against `check` and `health` on the same venv, interleaved. Target: `check` within 2x of the floor, `health` under
1 s.

It times a DLAMI host with five venvs side by side against one with a single venv, both found by discovery
(target: within 2x).

With `--against REV` it also times this tree's `check --root R` (text, and `--json`) against the same command of the
tree at git revision REV (checked out into a temporary worktree), the two interleaved run by run, and prints the
medians and their ratio: a change must not make `check` slower.

Usage: python scripts/bench_check.py [--runs 7] [--venv DIR (reuse)] [--distributions 300]
                                     [--against REV [--compare-runs 20]]
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
from typing import Optional

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.conftest import local_torch_wheel_dir  # noqa: E402
from tests.host_fixture import HostSpec, build_host  # noqa: E402
from tests.wheelhouse import VenvFactory, WheelSpec  # noqa: E402


def build_venv(directory: Path, distributions: int) -> Path:
    """A venv with pip (collect_env lists packages with it), torch 2.13.0 CPU and filler distributions."""
    wheels = local_torch_wheel_dir()
    if wheels is None:
        raise SystemExit("needs the local torch 2.13.0 CPU wheel (see docs/measured.md)")
    venv = directory / "bench-venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "--find-links", str(wheels), "torch==2.13.0"], check=True, timeout=900)
    existing = sum(1 for _ in next(venv.glob("lib/python*/site-packages")).glob("*.dist-info"))
    filler = [WheelSpec(f"bench-filler-{index:03d}", "1.0.0", requires=("numpy>=1.20",))
              for index in range(max(0, distributions - existing))]
    factory = VenvFactory(base=directory, wheel_dir=directory / "wheels")
    factory.install(venv, filler)
    return venv


def median_seconds(command: list[str], runs: int, env: dict[str, str]) -> tuple[float, int]:
    times = []
    code = 0
    for _ in range(runs):
        started = time.perf_counter()
        result = subprocess.run(command, capture_output=True, env=env, timeout=300)
        times.append(time.perf_counter() - started)
        code = result.returncode
    return statistics.median(times), code


def host_part_ms(root: Path, runs: int, env: dict[str, str]) -> tuple[float, float]:
    """(median wall time of `check --root R --json`, median of the host collectors' own total) in ms."""
    walls, host_parts = [], []
    for _ in range(runs):
        started = time.perf_counter()
        result = subprocess.run([sys.executable, "-m", "neurondoctor", "check", "--root", str(root), "--json"],
                                capture_output=True, env=env, timeout=300)
        walls.append((time.perf_counter() - started) * 1000)
        timings = json.loads(result.stdout)["timings_ms"]
        host_parts.append(sum(value for key, value in timings.items() if key.startswith("host:")))
    return statistics.median(walls), statistics.median(host_parts)


def interleaved_ms(trees: dict[str, Path], args: list[str], runs: int, env: dict[str, str]) -> dict[str, float]:
    """Median wall time (ms) of `python -m neurondoctor ARGS` from each tree, the trees taking turns each run so
    that a machine growing busier or quieter weighs on both alike."""
    times: dict[str, list[float]] = {name: [] for name in trees}
    for _ in range(runs):
        for name, tree in trees.items():
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "neurondoctor", *args], capture_output=True, timeout=300,
                           env={**env, "PYTHONPATH": str(tree)}, cwd=str(tree))
            times[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


def interleaved_roots(roots: dict[str, Path], runs: int, env: dict[str, str]) -> dict[str, float]:
    """Median wall time (ms) of `check --json --root R` for each root, the roots taking turns each run (a machine
    growing busier weighs on both alike)."""
    times: dict[str, list[float]] = {name: [] for name in roots}
    for _ in range(runs):
        for name, root in roots.items():
            started = time.perf_counter()
            subprocess.run([sys.executable, "-m", "neurondoctor", "check", "--json", "--root", str(root)],
                           capture_output=True, timeout=300, env=env)
            times[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


# The floor: the venv's own interpreter listing every distribution's name and version, which any
# environment doctor must at least do.
FLOOR_SCRIPT = ("import importlib.metadata as m\n"
                "rows = [(d.metadata['Name'], d.version) for d in m.distributions()]\n")


def interleaved_commands(commands: dict[str, list[str]], runs: int, env: dict[str, str],
                         trees: Optional[dict[str, Path]] = None) -> dict[str, float]:
    """Median wall time (ms) of each command, the commands taking turns each run. A command named in `trees` runs
    from that tree (`python -m neurondoctor` in it imports its modules, not the installed ones)."""
    trees = trees or {}
    times: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, command in commands.items():
            tree = trees.get(name)
            started = time.perf_counter()
            subprocess.run(command, capture_output=True, timeout=300,
                           env={**env, "PYTHONPATH": str(tree)} if tree else env, cwd=str(tree) if tree else None)
            times[name].append((time.perf_counter() - started) * 1000)
    return {name: statistics.median(values) for name, values in times.items()}


def compare_with(revision: str, worktree: Path, root: Path, runs: int, env: dict[str, str]) -> None:
    trees = {"this tree": REPO, revision: worktree}
    for args in (["check", "--root", str(root)], ["check", "--root", str(root), "--json"]):
        medians = interleaved_ms(trees, args, runs, env)
        shown = " ".join(args).replace(str(root), "<trn1.32xlarge>")
        print(f"{shown}: this tree {medians['this tree']:6.1f} ms, {revision} {medians[revision]:6.1f} ms "
              f"(ratio {medians['this tree'] / medians[revision]:.3f}, median of {runs} interleaved runs)")


def dlami_hosts(scratch: Path, distributions: int) -> tuple[Path, Path]:
    """Two trn1.32xlarge trees: one with one DLAMI venv, one with five side by side (a DLAMI holds
    several), each venv the 2.31.1 stack plus filler distributions up to `distributions`, on the image's
    interpreter, all found by discovery."""
    import shutil

    from tests.neuron_envs import HEALTHY_STACKS, stack_wheels
    from tests.wheelhouse import install_image_interpreter, repoint_to_image_interpreter, write_pip_conf

    factory = VenvFactory(base=scratch / "dlami-venvs", wheel_dir=scratch / "wheels")
    model = factory.create("model")
    stack = stack_wheels(HEALTHY_STACKS["2.31.1"])
    factory.install(model, stack + [WheelSpec(f"bench-filler-{index:03d}", "1.0.0", requires=("numpy>=1.20",))
                                    for index in range(max(0, distributions - len(stack)))])
    write_pip_conf(model)
    roots = []
    for count in (1, 5):
        root = build_host(scratch / f"dlami-{count}", HostSpec(instance_type="trn1.32xlarge", release="2.31.1"))
        interpreter = install_image_interpreter(root, f"{sys.version_info[0]}.{sys.version_info[1]}")
        for index in range(count):
            venv = root / "opt" / f"aws_neuronx_venv_pytorch_{index}"
            shutil.copytree(model, venv, symlinks=True)
            repoint_to_image_interpreter(venv, interpreter)
        roots.append(root)
    return roots[0], roots[1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--venv", type=Path, help="reuse this venv instead of building one")
    parser.add_argument("--distributions", type=int, default=300)
    parser.add_argument("--against", help="also compare check with the tree at this git revision")
    parser.add_argument("--compare-runs", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="nd-bench-") as scratch:
        venv = args.venv or build_venv(Path(scratch), args.distributions)
        site = next(venv.glob("lib/python*/site-packages"))
        count = sum(1 for _ in site.glob("*.dist-info"))
        # Installed tools run from byte-compiled modules (pip compiles on install); a machine-wide
        # PYTHONDONTWRITEBYTECODE would make both sides recompile their sources on every run.
        env = {key: value for key, value in os.environ.items()
               if key not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE")}
        check_cmd = [sys.executable, "-m", "neurondoctor", "check", "--venv", str(venv), "--json"]
        collect_cmd = [str(venv / "bin" / "python"), "-m", "torch.utils.collect_env"]
        subprocess.run(check_cmd, capture_output=True, env=env, timeout=300)  # warm the page cache
        subprocess.run(collect_cmd, capture_output=True, env=env, timeout=300)
        check_s, check_code = median_seconds(check_cmd, args.runs, env)
        collect_s, _ = median_seconds(collect_cmd, args.runs, env)
        health_cmd = [sys.executable, "-m", "neurondoctor", "health", "--venv", str(venv), "--format", "json"]
        floor_commands = {"floor": [str(venv / "bin" / "python"), "-c", FLOOR_SCRIPT], "check": check_cmd,
                          "health": health_cmd}
        worktree = Path(scratch) / "against"
        if args.against:  # the same commands from the other revision, in the same interleaved run
            subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(worktree), args.against],
                           check=True, capture_output=True, timeout=120)
            floor_commands.update({f"check@{args.against}": check_cmd, f"health@{args.against}": health_cmd})
        try:
            floor = interleaved_commands(floor_commands, 20, env, {f"check@{args.against}": worktree,
                                                                    f"health@{args.against}": worktree})
            host = build_host(Path(scratch) / "trn1-32xlarge", HostSpec(instance_type="trn1.32xlarge",
                                                                         release="2.31.1"))
            host_wall_ms, host_ms = host_part_ms(host, args.runs, env)
            one, five = dlami_hosts(Path(scratch), args.distributions)
            dlami = interleaved_roots({"one": one, "five": five}, max(args.runs, 11), env)
            if args.against:
                compare_with(args.against, worktree, host, args.compare_runs, env)
        finally:
            if args.against:
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(worktree)],
                               capture_output=True, timeout=120)
    print(f"venv: {count} distributions, torch 2.13.0 CPU; {args.runs} runs each (median wall time)")
    print(f"neurondoctor check --venv V --json : {check_s * 1000:8.1f} ms (exit {check_code})")
    print(f"python -m torch.utils.collect_env  : {collect_s * 1000:8.1f} ms")
    print(f"ratio collect_env / check          : {collect_s / check_s:8.1f}x (target >= 10x)")
    print(f"metadata-scan floor (the venv's python, importlib.metadata names and versions): {floor['floor']:6.1f} ms; "
          f"check {floor['check']:6.1f} ms ({floor['check'] / floor['floor']:.2f}x), health {floor['health']:6.1f} ms "
          f"({floor['health'] / floor['floor']:.2f}x); median of 20 interleaved runs, target: check <= 2x, "
          "health < 1 s")
    if args.against:
        before_check, before_health = floor[f"check@{args.against}"], floor[f"health@{args.against}"]
        print(f"  the same run at {args.against}: check {before_check:6.1f} ms ({before_check / floor['floor']:.2f}x), "
              f"health {before_health:6.1f} ms ({before_health / floor['floor']:.2f}x)")
    print(f"check --root <trn1.32xlarge, 16 devices> --json: {host_wall_ms:6.1f} ms wall, host part "
          f"{host_ms:5.1f} ms (target < 300 ms)")
    print(f"DLAMI host, {args.distributions} distributions per venv: 1 venv {dlami['one']:6.1f} ms, 5 venvs "
          f"{dlami['five']:6.1f} ms (ratio {dlami['five'] / dlami['one']:.2f}, target <= 2)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
