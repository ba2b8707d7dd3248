"""Attack class: a node's word about itself.

`fleet summarize` and `fleet check --slurm` read what other nodes wrote. A report that names another node's
hostname used to become that node (the newest report of a hostname counted): node B claiming to be A, healthy and
newer, hid A's fault; a report dated next year always won. One node's malformed number (`"2x"` cores, a `nan` or
`1e999` bandwidth) crashed `--collectives` for the whole allocation or made the document invalid JSON (`NaN` is not
JSON). Now a node is the file or the Slurm node its report came from (rules/fleet/identity.py), a report whose word
is not taken is named in `identity` and never taken as healthy, and numbers from nodes are read strictly and never
reach a document as NaN or Infinity. Everything runs as a user runs it: files on disk, and a fake srun/scontrol on
PATH that answer as Slurm does."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import cli_env, run_cli
from tests.preflight_reports import node_document

UNHEALTHY = (("ND-DRV-002", "driver-not-loaded", "error", "the Neuron driver is installed but not loaded"),)
NEXT_YEAR = "2099-01-01T00:00:00Z"


def _strict_json(text: str) -> Any:
    """json.loads as every other JSON reader reads: NaN, Infinity and -Infinity are not JSON."""
    def refuse(constant: str) -> None:
        raise ValueError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


def _document(name: str, hostname: str, **changes: Any) -> dict[str, Any]:
    document = node_document(name, **changes)
    document["node"]["hostname"] = hostname
    return document


# ---- fleet summarize: the node is the file --------------------------------------------------------------------

def test_a_report_claiming_another_node_never_hides_that_node_s_fault(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    sick = _document("trn-1", "A", findings=UNHEALTHY, state="unhealthy")
    liar = _document("trn-2", "A")  # B's report says it is A, healthy, and newer
    liar["generated_at"] = "2026-12-03T05:00:00Z"
    (reports / "A.json").write_text(json.dumps(sick))
    (reports / "B.json").write_text(json.dumps(liar))
    done = run_cli(["fleet", "summarize", str(reports), "--json"])
    summary = _strict_json(done.stdout)
    assert done.returncode == 1 and summary["nodes"] == 2
    assert summary["failing"] == [{"id": "ND-DRV-002", "severity": "error", "nodes": ["A"]}]
    assert summary["unknown"] == ["B"]
    assert summary["identity"] == [{"node": "B", "where": str(reports / "B.json"), "problem":
                                    "its report says it is 'A', the name of another node (A): judged as B"}]
    text = run_cli(["fleet", "summarize", str(reports)]).stdout
    assert "error: ND-DRV-002  1 node(s): A" in text and "its report says it is 'A'" in text, text


@pytest.mark.parametrize("order", ["liar first", "liar last"])
def test_two_json_lines_claiming_one_node_are_judged_apart(tmp_path: Path, order: str) -> None:
    sick = json.dumps(_document("trn-1", "A", findings=UNHEALTHY, state="unhealthy"))
    liar = _document("trn-2", "A")
    liar["generated_at"] = "2026-12-03T05:00:00Z"
    lines = [json.dumps(liar), sick] if order == "liar first" else [sick, json.dumps(liar)]
    (tmp_path / "srun.jsonl").write_text("\n".join(lines) + "\n")
    done = run_cli(["fleet", "summarize", str(tmp_path / "srun.jsonl"), "--json"])
    summary = _strict_json(done.stdout)
    assert done.returncode == 1 and summary["nodes"] == 2  # neither replaces the other
    assert len(summary["failing"]) == 1 and summary["failing"][0]["id"] == "ND-DRV-002"  # the fault stays
    assert len(summary["identity"]) == 2 and all("judged apart" in entry["problem"] for entry in summary["identity"])


def test_a_report_dated_next_year_is_named_and_never_newest(tmp_path: Path) -> None:
    first, second = tmp_path / "day1", tmp_path / "day2"
    first.mkdir()
    second.mkdir()
    (first / "trn-1.json").write_text(json.dumps(_document("trn-1", "trn-1", findings=UNHEALTHY, state="unhealthy")))
    future = _document("trn-1", "trn-1")
    future["generated_at"] = NEXT_YEAR  # would always be "the newest": it hid the fault of the real report
    (second / "trn-1.json").write_text(json.dumps(future))
    (second / "trn-2.json").write_text(json.dumps({**_document("trn-2", "trn-2"), "generated_at": NEXT_YEAR}))
    done = run_cli(["fleet", "summarize", str(first), str(second), "--json"])
    summary = _strict_json(done.stdout)
    assert summary["failing"] == [{"id": "ND-DRV-002", "severity": "error", "nodes": ["trn-1"]}]
    problems = {(entry["node"], entry["problem"]) for entry in summary["identity"]}
    assert ("trn-2", f"its date {NEXT_YEAR} is in the future") in problems
    assert ("trn-1", f"an older report of trn-1 than {first / 'trn-1.json'}: not counted") in problems
    assert summary["unknown"] == ["trn-2"] and done.returncode == 1


def test_a_node_s_malformed_numbers_leave_a_valid_document_and_the_others_judged(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    reports.mkdir()
    for name in ("trn-1", "trn-2", "trn-3"):
        (reports / f"{name}.json").write_text(json.dumps(_document(name, name)))
    odd = json.dumps(_document("trn-4", "trn-4", runtime="2.99.0.0"))
    odd = odd.replace('"checks": []', '"checks": [{"id": "driver", "status": "ok", "duration_ms": NaN}]')
    odd = odd.replace('"efa_functions": 8', '"efa_functions": Infinity, "sysfs_devices": [{"core_count": "2x"}]')
    odd = odd.replace('"summary": {}', '"summary": {"errors": 1e999, "warnings": -Infinity}')
    (reports / "trn-4.json").write_text(odd)
    done = run_cli(["fleet", "summarize", str(reports), "--json"])
    summary = _strict_json(done.stdout)
    assert summary["nodes"] == 4 and summary["unreadable"] == [], summary
    assert summary["drift"] == [{"component": "runtime", "majority": summary["drift"][0]["majority"],
                                 "others": {"2.99.0.0": ["trn-4"]}}]


# ---- fleet check --slurm: the node is the one srun ran the step on ---------------------------------------------

FAKE_SRUN = '''#!{python}
"""srun as the preflight calls it: --nodelist=NODE, then the command after `--`; prints what that node prints."""
import os, sys
args = sys.argv[1:]
node = next(arg.split("=", 1)[1] for arg in args if arg.startswith("--nodelist="))
command = args[args.index("--") + 1:]
folder = os.environ["FAKE_SLURM"]
kind = "nccom" if "nccom-step" in command else "reports"
sys.stdout.write(open(os.path.join(folder, kind, node + ".json")).read())
'''
FAKE_SCONTROL = '''#!/bin/sh
if [ "$1" = show ] && [ "$2" = hostnames ]; then printf 'trn-1\\ntrn-2\\ntrn-3\\ntrn-4\\ntrn-5\\n'; exit 0; fi
if [ "$1" = --oneliner ]; then
  for n in 1 2 3 4 5; do echo "NodeName=trn-$n NodeAddr=10.0.3.$n NodeHostName=ip-10-0-3-$n State=IDLE"; done
  exit 0
fi
exit 1
'''
TABLE = ("     size(B)    count(elems)     type    time(us)    algbw(GB/s)    busbw(GB/s)\n"
         "   268435456        67108864     fp32        6597          {bw}          {bw}\n"
         "Avg bus bandwidth:      {bw}GB/s\n")


def _step(bandwidth: str, report_bandwidth: str) -> str:
    """A `neurondoctor fleet nccom-step` document as the node prints it (NaN and 1e999 left as the node wrote them)."""
    report = ('{"results": [{"size(B)": 268435456, "count(elems)": 67108864, "type": "fp32", '
              f'"algbw(GB/s)": {report_bandwidth}, "busbw(GB/s)": {report_bandwidth}, "time:avg(us)": 6597}}]}}')
    return ('{"schema": "neurondoctor.nccom-step/1", "returncode": 0, "timed_out": false, "stderr": "", '
            f'"stdout": {json.dumps(TABLE.format(bw=bandwidth))}, "report": {json.dumps(report)}}}\n')


def _cluster(tmp_path: Path) -> dict[str, str]:
    """Five nodes: trn-1 unhealthy; trn-2's report says it is trn-1's host; trn-4's is dated next year; trn-3 has a
    core count `"2x"` and answers its collectives with a NaN table and a 1e999 report."""
    folder = tmp_path / "slurm"
    for kind in ("reports", "nccom"):
        (folder / kind).mkdir(parents=True)
    for index in range(1, 6):
        name = f"trn-{index}"
        document = _document(name, f"ip-10-0-3-{index}", **({"findings": UNHEALTHY, "state": "unhealthy"}
                                                             if index == 1 else {}))
        document["facts"]["host"]["snapshot"]["sysfs_devices"] = [
            {"name": f"neuron{device}", "core_count": 2, "device_name": "Trainium1"} for device in range(16)]
        if index == 2:
            document["node"]["hostname"] = "ip-10-0-3-1"
        if index == 4:
            document["generated_at"] = NEXT_YEAR
        text = json.dumps(document)
        if index == 3:
            text = text.replace('"core_count": 2,', '"core_count": "2x",', 1)
        (folder / "reports" / f"{name}.json").write_text(text)
        (folder / "nccom" / f"{name}.json").write_text(_step("nan", "1e999") if index == 3 else _step("40.69", "40.69"))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "srun").write_text(FAKE_SRUN.format(python=sys.executable))
    (bin_dir / "scontrol").write_text(FAKE_SCONTROL)
    for tool in ("srun", "scontrol"):
        (bin_dir / tool).chmod(0o755)
    return cli_env({"PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_SLURM": str(folder),
                    "SLURM_JOB_NODELIST": "trn-[1-5]", "SLURM_JOB_ID": "42"})


def test_the_preflight_judges_each_node_as_the_node_srun_ran_it_on(tmp_path: Path) -> None:
    done = run_cli(["fleet", "check", "--slurm", "--json"], env=_cluster(tmp_path))
    assert "Traceback" not in done.stderr, done.stderr
    document = _strict_json(done.stdout)
    nodes = document["preflight"]["nodes"]
    assert nodes["trn-1"]["state"] == "unhealthy" and document["preflight"]["at_fault"] == ["trn-1"]
    assert nodes["trn-2"]["state"] == "unknown"
    assert nodes["trn-2"]["reasons"][0] == ("its report says it is 'ip-10-0-3-1', the name of another node (trn-1): "
                                            "judged as trn-2")
    assert nodes["trn-4"]["state"] == "unknown" and nodes["trn-4"]["reasons"][0] == (
        f"its date {NEXT_YEAR} is in the future")
    assert document["failing"] == [{"id": "ND-DRV-002", "severity": "error", "nodes": ["trn-1"]}]  # by NodeName
    assert {entry["node"] for entry in document["identity"]} == {"trn-2", "trn-4"}
    assert done.returncode == 1
    text = run_cli(["fleet", "check", "--slurm"], env=_cluster(tmp_path / "again")).stdout
    assert "trn-2" in text and "its report says it is 'ip-10-0-3-1'" in text, text


def test_one_node_s_malformed_numbers_neither_stop_the_collectives_nor_break_the_document(tmp_path: Path) -> None:
    done = run_cli(["fleet", "check", "--slurm", "--collectives", "--json"], env=_cluster(tmp_path))
    assert "Traceback" not in done.stderr, done.stderr
    document = _strict_json(done.stdout)  # no NaN, no Infinity
    collectives = document["preflight"]["collectives"]
    assert collectives["ran"] is True and set(collectives["nodes"]) == {f"trn-{index}" for index in range(1, 6)}
    assert collectives["nodes"]["trn-3"]["busbw_gbs"] is None and collectives["nodes"]["trn-3"]["failures"]
    assert all(collectives["nodes"][f"trn-{index}"]["busbw_gbs"] == pytest.approx(40.69) for index in (1, 2, 4, 5))
    assert any(finding["nodes"] == ["trn-3"] for finding in document["preflight"]["findings"])  # judged, named


def test_nodes_sharing_a_host_name_slurm_gives_them_are_not_named_but_cloned_host_names_are() -> None:
    """Several slurmd on one machine share its NodeHostName (tests/test_fleet_preflight_slurm.py's cluster): a report
    claiming it is no other node's word. Two nodes whose reports claim one host name Slurm knows for neither (a
    cloned image's /etc/hostname) are both named."""
    from datetime import datetime, timezone

    from neurondoctor.rules.fleet.identity import Arrival, identities

    now = datetime(2026, 12, 3, tzinfo=timezone.utc)
    shared = [Arrival(f"trn-{index}", f"trn-{index}", "build-host", "2026-12-03T00:00:00Z",
                      (f"127.0.0.{index}", "build-host")) for index in range(1, 4)]
    assert [judged.problems for judged in identities(shared, now)] == [[], [], []]
    cloned = [Arrival(f"trn-{index}", f"trn-{index}", "ami-builder", "2026-12-03T00:00:00Z",
                      (f"10.0.3.{index}", f"ip-10-0-3-{index}")) for index in range(1, 3)]
    assert [judged.problems for judged in identities(cloned, now)] == [
        ["its report says it is 'ami-builder', as the report of trn-2 does"],
        ["its report says it is 'ami-builder', as the report of trn-1 does"]]
