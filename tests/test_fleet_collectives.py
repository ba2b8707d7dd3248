"""`fleet check --collectives` without devices: nccom-test's tables and JSON report as
the NCCOM-TEST user guide prints them (tests/recorded/nccom-test/, SOURCES.md naming each example, a failing run
included; every column the parser leaves is listed, so a new one is noticed), the ring of pairs and its bisection,
and the step document the node prints. The run through a real Slurm with a fake nccom-test is in
tests/test_fleet_preflight_slurm.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from neurondoctor.actions.fleet.collectives import STEP_SCHEMA, neuron_cores, step_result
from neurondoctor.host.nccom_test import NccomResult, NccomRow, parse_report, parse_table
from neurondoctor.report.preflight import NodeAnswer, Preflight
from neurondoctor.rules.fleet.collectives import judge_collectives, pair_rounds, ring_pairs
from tests.preflight_reports import node_report

RECORDED = Path(__file__).parent / "recorded" / "nccom-test"  # the user guide's examples, SOURCES.md names each


def _recorded(name: str) -> str:
    return (RECORDED / name).read_text()


# What parse_table reads of a table and what it leaves (a new column in a recording fails the test below).
READ_COLUMNS = {"size(B)", "busbw(GB/s)", "algbw(GB/s)", "time(us)", "time:avg(us)"}
UNREAD_COLUMNS = {"count(elems)", "type", "total_input_size(B)", "total_output_size(B)", "time:p25(us)",
                  "time:p50(us)", "time:p90(us)", "time:p99(us)", "algorithm"}
TABLES = {  # file -> (rows, bus bandwidth at the largest size, the average line)
    "allreduce-2-ranks.txt": (1, 40.69, 40.6901),
    "allgather-stats.txt": (4, 30.92, 9.1966),
    "allgather-input-output-size.txt": (4, 21.93, 7.7715),
    "allreduce-algorithm.txt": (8, 103.89, 16.6181),
    "allgather-report-table.txt": (4, 21.98, 7.7775),
    "allreduce-2-instances-64-ranks.txt": (28, 47.09, 9.3924),
}


def test_every_recording_is_sourced_and_read() -> None:
    sources = _recorded("SOURCES.md")
    files = sorted(path.name for path in RECORDED.iterdir() if path.name != "SOURCES.md")
    assert files and all(f"| {name} |" in sources for name in files)
    assert sorted([*TABLES, "failed-run.txt", "driver-not-running.txt", "allgather-report.json"]) == files


@pytest.mark.parametrize("name", sorted(TABLES))
def test_each_recorded_table(name: str) -> None:
    text = _recorded(name)
    rows, largest, average = TABLES[name]
    result = parse_table(text)
    assert result.ok and len(result.rows) == rows
    assert result.largest_busbw_gbs == largest and result.average_busbw_gbs == average
    header = next(line.split() for line in text.splitlines() if line.split()[:1] == ["size(B)"])
    assert set(header) <= READ_COLUMNS | UNREAD_COLUMNS, set(header) - READ_COLUMNS - UNREAD_COLUMNS
    first = text.splitlines()[1].split()
    assert result.rows[0].size_bytes == int(first[0])
    time_column = "time:avg(us)" if "time:avg(us)" in header else "time(us)"
    assert result.rows[0].time_us == float(first[header.index(time_column)])


def test_the_guides_failures() -> None:
    failed = parse_table(_recorded("failed-run.txt"))
    assert not failed.ok and failed.failures == [
        "Failure running neuron-bench - log file /tmp/nccom_test_log_7pqpdfjf.log"]
    no_driver = parse_table(_recorded("driver-not-running.txt"))
    assert not no_driver.ok and no_driver.failures[0].startswith("Neuron DKMS Driver is not running!")
    assert parse_table("").failures == ["no output"]


def test_the_guides_json_report_and_bad_ones() -> None:
    result = parse_report(_recorded("allgather-report.json"))
    table = parse_table(_recorded("allgather-report-table.txt"))
    assert result.ok and [row.size_bytes for row in result.rows] == [row.size_bytes for row in table.rows]
    assert result.largest_busbw_gbs == pytest.approx(21.97975251876395)
    assert [round(row.busbw_gbs, 2) for row in result.rows] == [row.busbw_gbs for row in table.rows]
    assert parse_report("{").failures[0].startswith("the JSON report is not JSON")
    assert parse_report('{"results": "none"}').failures == ["the JSON report has no results"]
    assert parse_report('{"results": [{"size(B)": "big"}]}').failures == ["the JSON report has no result rows"]


def test_a_step_document_reads_both_and_prefers_the_reports_precision() -> None:
    printed = json.dumps({"schema": STEP_SCHEMA, "returncode": 0, "timed_out": False,
                          "stdout": _recorded("allgather-report-table.txt"), "stderr": "",
                          "report": _recorded("allgather-report.json")})
    result = step_result(printed, "")
    assert result.ok and result.largest_busbw_gbs == pytest.approx(21.97975251876395)
    table_only = step_result(json.dumps({"schema": STEP_SCHEMA, "stdout": _recorded("allreduce-2-ranks.txt"),
                                         "report": None}), "")
    assert table_only.largest_busbw_gbs == 40.69
    assert step_result("", "`srun …` exited with status 1: launch failed").failures == [
        "`srun …` exited with status 1: launch failed"]
    missing = step_result(json.dumps({"schema": STEP_SCHEMA, "error": "nccom-test is not installed here"}), "")
    assert missing.failures == ["nccom-test is not installed here"]


def _run(busbw: float) -> NccomResult:
    return NccomResult(rows=[NccomRow(268435456, busbw)], average_busbw_gbs=busbw)


FAIL = NccomResult(failures=["Failure running neuron-bench - log file /tmp/nccom_test_log_x.log"])
RING = ("trn-1", "trn-2", "trn-3", "trn-4", "trn-5")


def _pairs(slow: set[str], failing: set[str]) -> dict[tuple[str, str], NccomResult]:
    return {pair: FAIL if set(pair) & failing else _run(10.0 if set(pair) & slow else 45.0)
            for pair in ring_pairs(RING)}


def test_the_bisection_names_the_planted_nodes() -> None:
    within = {node: _run(40.0) for node in RING}
    found = judge_collectives(within, _pairs({"trn-3"}, {"trn-5"}), RING)
    assert [(cross.finding.id, cross.nodes) for cross in found] == [("ND-FLEET-013", ("trn-3",)),
                                                                    ("ND-FLEET-012", ("trn-5",))]
    assert "fails" in found[1].finding.title and found[1].finding.severity == "error"
    answers = [NodeAnswer(name, node_report(name), "ok") for name in RING]
    preflight = Preflight(answers, found)
    assert preflight.at_fault() == ["trn-5"] and preflight.node_states()["trn-3"]["state"] == "degraded"


def test_a_slow_node_in_its_own_run_and_one_bad_link() -> None:
    within = {node: _run(12.0 if node == "trn-2" else 40.0) for node in RING}
    pairs = {pair: FAIL if pair == ("trn-4", "trn-5") else _run(45.0) for pair in ring_pairs(RING)}
    found = judge_collectives(within, pairs, RING)
    assert [(cross.finding.id, cross.nodes) for cross in found] == [("ND-FLEET-013", ("trn-2",)),
                                                                    ("ND-FLEET-014", ("trn-4", "trn-5"))]
    assert found[0].finding.title == "all-reduce within trn-2 slow: 12.0 GB/s, the others' median 40.0 GB/s"


def test_every_pair_bad_is_the_set_up_not_a_node() -> None:
    found = judge_collectives({node: _run(40.0) for node in RING}, _pairs(set(), set(RING)), RING)
    assert [(cross.finding.id, cross.nodes) for cross in found] == [("ND-FLEET-012", ())]


def test_rings_and_rounds() -> None:
    assert ring_pairs(["a"]) == [] and ring_pairs(["a", "b"]) == [("a", "b")]
    rounds = pair_rounds(ring_pairs(list(RING)))
    assert sorted(pair for group in rounds for pair in group) == sorted(ring_pairs(list(RING)))
    for group in rounds:
        nodes = [node for pair in group for node in pair]
        assert len(nodes) == len(set(nodes))


def test_ranks_from_the_nodes_cores() -> None:
    trn1 = {"host": {"snapshot": {"sysfs_devices": [{"core_count": 2, "device_name": "Trainium1"}] * 16}}}
    trn2 = {"host": {"snapshot": {"sysfs_devices": [{"core_count": 8, "device_name": "Trainium2"}] * 16}}}
    assert neuron_cores(trn1, {}) == 32
    assert neuron_cores(trn2, {}) == 64 and neuron_cores(trn2, {"NEURON_LOGICAL_NC_CONFIG": "1"}) == 128
    assert neuron_cores({}, {}) == 0


def test_without_devices_nothing_runs(tmp_path: Path) -> None:
    from neurondoctor.actions.fleet.collectives import run_collectives

    answers = [NodeAnswer(name, node_report(name), "ok") for name in RING]
    preflight = Preflight(answers, [])
    document = run_collectives(preflight, {"PATH": str(tmp_path)}, "neurondoctor", True, {})
    assert document == {"ran": False, "summary": "no Neuron device on any node: nothing was run"}
    assert preflight.findings == []


def test_the_node_side_step_runs_nccom_test_and_prints_one_document(tmp_path: Path) -> None:
    fake = tmp_path / "nccom-test"
    fake.write_text("#!/usr/bin/env python3\nimport json, os, sys\n"
                    "args = sys.argv[1:]\n"
                    "report = args[args.index('--report-to-json-file') + 1]\n"
                    f"open(report, 'w').write({_recorded('allgather-report.json')!r})\n"
                    f"print({_recorded('allgather-report-table.txt')!r}, end='')\n"
                    "print('root comm:', os.environ.get('NEURON_RT_ROOT_COMM_ID'), file=sys.stderr)\n")
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}:{os.environ['PATH']}")
    done = subprocess.run([sys.executable, "-m", "neurondoctor", "fleet", "nccom-step", "--root-comm",
                           "10.0.3.17:45654", "--", "allr", "-r", "64", "-N", "2", "--hosts", "10.0.3.17",
                           "10.0.3.18"], capture_output=True, text=True, timeout=60, env=env)
    document = json.loads(done.stdout)
    assert document["schema"] == STEP_SCHEMA and document["returncode"] == 0
    assert "root comm: 10.0.3.17:45654" in document["stderr"]
    assert step_result(done.stdout, "").largest_busbw_gbs == pytest.approx(21.97975251876395)
