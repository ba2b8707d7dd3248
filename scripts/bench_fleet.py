"""Benchmark: `fleet summarize` over 1,000 node reports of about 300 distributions each, against just `json.load`-ing
the same files, in the same process and run. Target (issue 17): the summary at most 2x the plain load.

The reports are one real `check --json` (a fixture trn1.32xlarge host and a venv with the 2.31.1 stack plus filler
distributions up to --distributions) copied per node (tests/fleet_reports.py), one file each.

Usage: python scripts/bench_fleet.py [--nodes 1000] [--distributions 300] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neurondoctor.actions.fleet.summary import summarize_paths  # noqa: E402
from tests.fleet_reports import Plan, base_report, node_reports  # noqa: E402
from tests.neuron_envs import HEALTHY_STACKS, stack_wheels  # noqa: E402
from tests.wheelhouse import VenvFactory, WheelSpec, write_pip_conf  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--distributions", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-fleet-") as temporary:
        directory = Path(temporary)
        factory = VenvFactory(base=directory, wheel_dir=directory / "wheels")
        venv = factory.create("fleet-venv")
        stack = stack_wheels(HEALTHY_STACKS["2.31.1"])
        filler = [WheelSpec(f"bench-filler-{index:03d}", "1.0.0") for index in range(args.distributions - len(stack))]
        factory.install(venv, [*stack, *filler])
        write_pip_conf(venv)
        base = base_report(directory, venv)
        distributions = sum(len(site.get("distributions", [])) for env in base["facts"]["environments"]
                            for site in env.get("site_dirs", []))
        reports = directory / "reports"
        reports.mkdir()
        plan = Plan(driver={17: "2.26.10.0", 402: "2.26.10.0", 999: "2.28.3.0"}, torch={555: "2.9.0+cu128"},
                    unknown=(7, 640))
        files = []
        for index, report in enumerate(node_reports(base, args.nodes, plan)):
            path = reports / f"{Plan.name(index)}.json"
            path.write_text(json.dumps(report))
            files.append(path)
        size = sum(path.stat().st_size for path in files)
        loads, summaries = [], []
        for _ in range(args.runs):  # alternate, so both see the same page cache
            started = time.perf_counter()
            for path in files:
                with path.open() as handle:
                    json.load(handle)
            loads.append(time.perf_counter() - started)
            started = time.perf_counter()
            summary = summarize_paths([str(reports)])
            summaries.append(time.perf_counter() - started)
        load, summarize = statistics.median(loads), statistics.median(summaries)
        started = time.perf_counter()
        cli = subprocess.run([sys.executable, "-m", "neurondoctor", "fleet", "summarize", str(reports), "--json"],
                             capture_output=True, text=True, timeout=600)
        cli_s = time.perf_counter() - started
        print(f"{args.nodes} reports, {distributions} distributions each, {size / 1e6:.0f} MB")
        print(f"json.load of every file:  {load * 1000:.0f} ms median of {args.runs}")
        print(f"fleet summarize:          {summarize * 1000:.0f} ms  ({summarize / load:.2f}x the plain load; "
              "target <= 2x)")
        print(f"the CLI, start to end:    {cli_s * 1000:.0f} ms (exit {cli.returncode}); drift in "
              f"{', '.join(entry['component'] for entry in summary.to_json()['drift'])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
