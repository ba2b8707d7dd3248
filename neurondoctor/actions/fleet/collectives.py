"""`fleet check --collectives`: nccom-test all-reduce within each node and between node pairs, through srun.

Each run is a step of its own on the node (`neurondoctor fleet nccom-step`, which runs nccom-test there with
`--report-to-json-file` in a private temporary folder and prints one JSON document: the table it printed and the
report it wrote; no shared filesystem is assumed). A node's own run uses all its NeuronCores; a pair's run is two
nodes over EFA in nccom-test's multi-node mode (`-N 2 --hosts A B`, the root communicator on the first). Pairs go
round a ring in rounds where no node runs twice at once. Only nodes whose report shows devices take part; with no
device anywhere nothing runs and the document says so. rules/fleet/collectives.py judges the results.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Optional

from neurondoctor import json_data
from neurondoctor.actions.fleet.slurm_steps import SRUN_STOP_GRACE_S, srun_argv
from neurondoctor.command_runner import run_command
from neurondoctor.host.nccom_test import NccomResult, parse_report, parse_table
from neurondoctor.regular_files import read_regular_file
from neurondoctor.report.preflight import Preflight
from neurondoctor.rules.fleet import node_values
from neurondoctor.rules.fleet.collectives import Pair, judge_collectives, pair_rounds, ring_pairs
from neurondoctor.rules.fleet.node_values import as_dict
from neurondoctor.strict_numbers import json_count

STEP_SCHEMA = "neurondoctor.nccom-step/1"
NCCOM_PATHS = ("/opt/aws/neuron/bin/nccom-test",)  # aws-neuronx-tools (docs/neuron-facts.md §1)
# Sizes large enough to measure the links, not their latency; fp32 as the guide's examples. (ASSUMED: a run of these
# sizes, NEFF generation included, ends within NCCOM_TIMEOUT_S.)
SIZES = ("-b", "32MB", "-e", "256MB", "-f", "2", "-d", "fp32")
NCCOM_TIMEOUT_S = 300.0
ROOT_COMM_PORT = 45654  # the guide's example port (ASSUMED free on the first node of a pair)
OUTPUT_KEPT = 64 << 10
MAX_CORES_PER_DEVICE = 1024  # a device has 2 to 8 NeuronCores: a larger count from a node's report is no count


def nccom_step(arguments: Sequence[str], root_comm: Optional[str],
               timeout_s: float = NCCOM_TIMEOUT_S) -> dict[str, Any]:
    """Runs on the node: nccom-test ARGUMENTS, its JSON report in a private temporary folder; the document to print."""
    nccom = shutil.which("nccom-test") or next((path for path in NCCOM_PATHS if os.access(path, os.X_OK)), None)
    if nccom is None:
        return {"schema": STEP_SCHEMA, "error": "nccom-test is not installed here (aws-neuronx-tools)"}
    env = dict(os.environ)
    if root_comm:
        env["NEURON_RT_ROOT_COMM_ID"] = root_comm
    with tempfile.TemporaryDirectory(prefix="neurondoctor-nccom-") as scratch:
        report = Path(scratch) / "report.json"
        result = run_command([nccom, *arguments, "--non-interactive", "--report-to-json-file", str(report)],
                             timeout=timeout_s, env=env, cwd=scratch)
        try:
            written: Optional[str] = read_regular_file(report, 1 << 20, follow_links=False).decode("utf-8", "replace")
        except OSError:
            written = None
    return {"schema": STEP_SCHEMA, "returncode": result.returncode, "timed_out": result.timed_out,
            "stdout": result.stdout[-OUTPUT_KEPT:], "stderr": result.stderr[-4096:], "report": written}


def step_result(stdout: str, why_not: str) -> NccomResult:
    """A step's printed document as a result: the table and the JSON report both read, the report's rows preferred
    (full precision); `why_not` when the step printed no document (it did not start, or timed out)."""
    try:
        document = json_data.loads(stdout.strip() or "null")
    except (ValueError, RecursionError):
        document = None
    if not isinstance(document, dict) or document.get("schema") != STEP_SCHEMA:
        return NccomResult(failures=[why_not or "the step printed no result"])
    if document.get("error"):
        return NccomResult(failures=[str(document["error"])[:200]])
    result = parse_table(str(document.get("stdout") or ""))
    if document.get("timed_out"):
        result.failures.append(f"nccom-test did not finish within {NCCOM_TIMEOUT_S:.0f} s")
    written = document.get("report")
    if isinstance(written, str) and written.strip():
        from_json = parse_report(written)
        if from_json.rows:
            result.rows, result.average_busbw_gbs = from_json.rows, from_json.average_busbw_gbs
    return result


def neuron_cores(report_facts: Any, environ: Mapping[str, str]) -> int:
    """The NeuronCores a node's run uses: sysfs core counts, divided by the logical core config on Trn2/Trn3
    (2 unless NEURON_LOGICAL_NC_CONFIG says 1; ASSUMED from the guide's environment variable table)."""
    snapshot = as_dict(as_dict(as_dict(report_facts).get("host")).get("snapshot"))
    listed = snapshot.get("sysfs_devices")
    devices = [device for device in listed if isinstance(device, dict)] if isinstance(listed, list) else []
    # another node's numbers: a count that is not one (`"2x"`, NaN, a bool) counts no core, never a crash
    cores = sum(json_count(device.get("core_count"), maximum=MAX_CORES_PER_DEVICE) or 0 for device in devices)
    logical = any(str(device.get("device_name", "")).startswith(("Trainium2", "Trainium3")) for device in devices)
    lnc = 1 if environ.get("NEURON_LOGICAL_NC_CONFIG") == "1" else 2
    return cores // lnc if logical else cores


def run_collectives(preflight: Preflight, env: Mapping[str, str], remote: str, in_allocation: bool,
                    addresses: Mapping[str, tuple[str, str]]) -> dict[str, Any]:
    """Runs what the nodes can run, adds the findings to `preflight`, and returns the `collectives` document."""
    ranks: dict[str, int] = {}
    for answer in preflight.answers:
        if answer.report is not None:
            cores = neuron_cores(answer.report.facts, node_values.environ(answer.report))
            if cores:
                ranks[answer.name] = cores
    if not ranks:
        return {"ran": False, "summary": "no Neuron device on any node: nothing was run"}
    nodes = [answer.name for answer in preflight.answers if answer.name in ranks]

    def run(node: str, arguments: list[str], root_comm: Optional[str]) -> NccomResult:
        step = [remote, "fleet", "nccom-step", *(["--root-comm", root_comm] if root_comm else []), "--", *arguments]
        done = run_command(srun_argv(node, step, in_allocation), timeout=NCCOM_TIMEOUT_S + 60, env=env,
                           stop_grace_s=SRUN_STOP_GRACE_S)
        why = "no answer in time" if done.timed_out else done.describe_failure()
        return step_result(done.stdout, "" if done.ok else why)

    def address(node: str) -> str:
        return addresses.get(node, (node, node))[0]

    with ThreadPoolExecutor(max_workers=min(64, len(nodes))) as pool:
        within = dict(zip(nodes, pool.map(lambda node: run(node, ["allr", "-r", str(ranks[node]), *SIZES], None),
                                          nodes)))
        pairs: dict[Pair, NccomResult] = {}
        for group in pair_rounds(ring_pairs(nodes)):
            results = pool.map(lambda pair: run(pair[0], [
                "allr", "-r", str(ranks[pair[0]] + ranks[pair[1]]), "-N", "2", *SIZES, "--hosts", address(pair[0]),
                address(pair[1])], f"{address(pair[0])}:{ROOT_COMM_PORT}"), group)
            pairs.update(zip(group, results))
    found = judge_collectives(within, pairs, nodes)
    preflight.findings.extend(found)

    def shown(result: NccomResult) -> dict[str, Any]:
        return {"busbw_gbs": result.largest_busbw_gbs, "average_busbw_gbs": result.average_busbw_gbs,
                "failures": result.failures}

    bad = sum(1 for result in [*within.values(), *pairs.values()] if not result.ok)
    return {"ran": True, "nodes": {node: shown(result) for node, result in within.items()},
            "pairs": [{"nodes": list(pair), **shown(result)} for pair, result in pairs.items()],
            "summary": f"{len(within)} node run(s), {len(pairs)} pair run(s), {bad} failed; "
                       f"{len(found)} finding(s)"}
