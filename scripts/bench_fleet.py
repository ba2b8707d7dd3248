"""Benchmark: `fleet summarize` over 1,000 node reports of about 300 distributions each, against just `json.load`-ing
the same files, in the same process and run. Target: the summary at most 2x the plain load.

The reports are one real `check --json` (a fixture trn1.32xlarge host and a venv with the 2.31.1 stack plus filler
distributions up to --distributions) copied per node (tests/fleet_reports.py), one file each.

Then the cluster preflight (`fleet check --slurm`; target: 256 reports compared in under 1 s): the same real report
with each node's compared fields laid over it (tests/preflight_reports.py: five planted odd nodes), timed from the JSON
text each srun step printed to the verdict (each text read back, every cross-node comparison, the document and the
text), against the plain `json.loads` of the same texts, in the same run.

Usage: python scripts/bench_fleet.py [--nodes 1000] [--distributions 300] [--runs 5] [--preflight-nodes 256]
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
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neurondoctor.actions.fleet.slurm_steps import node_answer  # noqa: E402
from neurondoctor.actions.fleet.summary import summarize_paths  # noqa: E402
from neurondoctor.report.preflight import Preflight, render_preflight_text  # noqa: E402
from neurondoctor.rules.fleet.consistency import compare_nodes  # noqa: E402
from tests.fleet_reports import Plan, base_report, node_reports  # noqa: E402
from tests.neuron_envs import HEALTHY_STACKS, stack_wheels  # noqa: E402
from tests.preflight_reports import node_document  # noqa: E402
from tests.wheelhouse import VenvFactory, WheelSpec, write_pip_conf  # noqa: E402

PREFLIGHT_PLANTS: dict[int, dict[str, Any]] = {
    7: {"compiler": "2.27.5334.0"}, 50: {"environ": {"NEURON_CC_FLAGS": "--model-type=transformer -O1"}},
    99: {"environ": {"NEURON_RT_ROOT_COMM_ID": None}}, 180: {"efa": 6}, 201: {"devices": 15}}


def preflight_texts(base: dict[str, Any], count: int) -> dict[str, str]:
    """What `count` nodes' srun steps print: the real report with each node's compared fields laid over it."""
    printed = {}
    for number in range(1, count + 1):
        node = node_document(f"trn-{number}", **PREFLIGHT_PLANTS.get(number, {}))
        document = json.loads(json.dumps(base))
        for key in ("node", "health", "release", "environments", "findings"):
            document[key] = node[key]
        document["facts"]["environ"] = node["facts"]["environ"]
        document["facts"]["host"]["snapshot"].update(node["facts"]["host"]["snapshot"])
        printed[f"trn-{number}"] = json.dumps(document)
    return printed


def preflight_once(printed: dict[str, str]) -> tuple[float, Preflight]:
    started = time.perf_counter()
    answers = [node_answer(name, text, "", False, 60, 1.0) for name, text in printed.items()]
    reports = {answer.name: answer.report for answer in answers if answer.report is not None}
    preflight = Preflight(answers, compare_nodes(reports, False, lambda host: True))
    json.dumps(preflight.to_json())
    render_preflight_text(preflight)
    return time.perf_counter() - started, preflight


def bench_preflight(base: dict[str, Any], count: int, runs: int) -> None:
    printed = preflight_texts(base, count)
    ours, loads = [], []
    preflight = None
    for _ in range(runs):
        started = time.perf_counter()
        for text in printed.values():
            json.loads(text)
        loads.append(time.perf_counter() - started)
        seconds, preflight = preflight_once(printed)
        ours.append(seconds)
    assert preflight is not None
    mine, load = statistics.median(ours), statistics.median(loads)
    size = sum(len(text) for text in printed.values())
    print(f"preflight, {count} reports ({size / 1e6:.0f} MB): {mine * 1000:.0f} ms (target < 1000 ms); "
          f"json.loads of the same texts {load * 1000:.0f} ms ({mine / load:.2f}x); median of {runs}")
    print(f"  at fault: {', '.join(preflight.at_fault())} (planted: "
          f"{', '.join(f'trn-{number}' for number in sorted(PREFLIGHT_PLANTS) if number <= count)})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--distributions", type=int, default=300)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--preflight-nodes", type=int, default=256)
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
        bench_preflight(base, args.preflight_nodes, args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
