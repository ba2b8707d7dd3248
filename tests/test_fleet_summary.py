"""`fleet summarize` on 1,000 generated reports with planted drift: a driver on 3 nodes, a torch on
1, an unknown verdict on 2 and 5 unreadable files must come out as exactly those nodes and paths, in the
`neurondoctor.fleet/1` document, the table and Markdown, with the exit codes of the contract."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import run_cli
from tests.fleet_reports import Plan, base_report, node_reports
from tests.neuron_envs import stack_venv
from tests.wheelhouse import VenvFactory

DRIFT = Plan(driver={17: "2.26.10.0", 402: "2.26.10.0", 999: "2.28.3.0"}, torch={555: "2.9.0+cu128"},
             unknown=(7, 640))


@pytest.fixture(scope="module")
def base(venvs: VenvFactory, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    directory = tmp_path_factory.mktemp("fleet")
    return base_report(directory, stack_venv(venvs, "fleet-venv", "2.31.1"))


def _write_fleet(directory: Path, base: dict[str, Any], plan: Plan, count: int = 1000) -> Path:
    reports = directory / "reports"
    reports.mkdir()
    lines = []
    for index, report in enumerate(node_reports(base, count, plan)):
        if index % 4 == 0:  # a quarter arrive as JSON lines (srun), the rest one file per node (a DaemonSet)
            lines.append(json.dumps(report))
        else:
            (reports / f"{Plan.name(index)}.json").write_text(json.dumps(report))
    (reports / "srun.jsonl").write_text("\n".join(lines) + "\n")
    return reports


def test_a_thousand_nodes_with_planted_drift(tmp_path: Path, base: dict[str, Any]) -> None:
    reports = _write_fleet(tmp_path, base, DRIFT)
    (reports / "truncated.json").write_text(json.dumps(base)[:5000])
    (reports / "not-a-report.json").write_text('{"schema": "someone-else/1"}')
    (reports / "garbage.json").write_bytes(b"\xff\xfe\x00garbage")
    (reports / "empty.json").write_text("")
    os.mkfifo(reports / "fifo.json")  # never blocks the summary
    result = run_cli(["fleet", "summarize", str(reports), "--json"], timeout=300)
    assert result.returncode == 1, result.stderr  # not uniform
    summary = json.loads(result.stdout)
    assert summary["schema"] == "neurondoctor.fleet/1" and summary["nodes"] == 1000
    assert summary["releases"] == {"2.31.1": 1000}
    drift = {entry["component"]: entry for entry in summary["drift"]}
    assert set(drift) == {"driver", "torch"}
    assert drift["driver"]["majority"] == base["release"]["host_packages"]["aws-neuronx-dkms"]
    assert drift["driver"]["others"] == {"2.26.10.0": ["trn1-0017", "trn1-0402"], "2.28.3.0": ["trn1-0999"]}
    assert drift["torch"]["others"] == {"2.9.0+cu128": ["trn1-0555"]}
    assert summary["unknown"] == ["trn1-0007", "trn1-0640"]
    assert summary["failing"] == []
    assert sorted(Path(path).name for path in summary["unreadable"]) == [
        "empty.json", "fifo.json", "garbage.json", "not-a-report.json", "truncated.json"]
    reasons = {Path(path).name: why for path, why in summary["unreadable_reasons"].items()}  # as the text gives them
    assert set(reasons) == {Path(path).name for path in summary["unreadable"]} and all(reasons.values())
    assert "not a regular file" in reasons["fifo.json"] and "not JSON" in reasons["empty.json"]
    assert len(result.stdout) < 4096  # only the nodes that differ are named


def test_uniform_unknown_and_unhealthy_fleets(tmp_path: Path, base: dict[str, Any]) -> None:
    (tmp_path / "uniform").mkdir()
    uniform = _write_fleet(tmp_path / "uniform", base, Plan(), count=40)
    result = run_cli(["fleet", "summarize", str(uniform)])
    assert result.returncode == 0, result.stdout
    assert "Uniform: 40 node(s)" in result.stdout and "oldest report  trn1-0000 at 2026-12-01T10:00:00Z" in \
        result.stdout
    (tmp_path / "unknown").mkdir()
    unknown = _write_fleet(tmp_path / "unknown", base, Plan(unknown=(3,)), count=10)
    assert run_cli(["fleet", "summarize", str(unknown)]).returncode == 3
    (tmp_path / "sick").mkdir()
    sick = _write_fleet(tmp_path / "sick", base, Plan(unhealthy={2: "ND-DRV-002", 5: "ND-DRV-002"}), count=10)
    result = run_cli(["fleet", "summarize", str(sick), "--json"])
    assert result.returncode == 1
    assert json.loads(result.stdout)["failing"] == [
        {"id": "ND-DRV-002", "severity": "error", "nodes": ["trn1-0002", "trn1-0005"]}]
    markdown = run_cli(["fleet", "summarize", str(sick), "--format", "markdown"]).stdout
    assert markdown.startswith("## Neuron fleet summary") and "| error: ND-DRV-002 | 2 node(s): trn1-0002, " \
        "trn1-0005 |" in markdown


def test_a_node_that_reported_twice_counts_once_with_its_newest_report(tmp_path: Path, base: dict[str, Any]) -> None:
    """The same file name under two collections is the same node: its newest report counts, the older is named."""
    (tmp_path / "day1").mkdir()
    day1 = _write_fleet(tmp_path / "day1", base, Plan(), count=3)
    day2 = tmp_path / "day2"
    day2.mkdir()
    newer = json.loads((day1 / "trn1-0001.json").read_text())
    newer["generated_at"] = "2026-12-02T00:00:00Z"
    newer["release"]["host_packages"]["aws-neuronx-dkms"] = "2.26.10.0"
    (day2 / "trn1-0001.json").write_text(json.dumps(newer))
    summary = json.loads(run_cli(["fleet", "summarize", str(day1), str(day2), "--json"]).stdout)
    assert summary["nodes"] == 3
    assert summary["drift"][0]["others"] == {"2.26.10.0": ["trn1-0001"]}
    assert summary["identity"] == [{"node": "trn1-0001", "where": str(day1 / "trn1-0001.json"),
                                    "problem": f"an older report of trn1-0001 than {day2 / 'trn1-0001.json'}: "
                                               "not counted"}]


def test_a_report_that_names_another_node_is_its_own_file_s_node(tmp_path: Path, base: dict[str, Any]) -> None:
    """A report in another file that claims trn1-0001's hostname is not merged into trn1-0001 (it used to replace
    it, being newer): it is the node of its file, named in `identity`, and never taken as healthy."""
    (tmp_path / "claims").mkdir()
    reports = _write_fleet(tmp_path / "claims", base, Plan(), count=3)
    newer = json.loads((reports / "trn1-0001.json").read_text())
    newer["generated_at"] = "2026-12-02T00:00:00Z"
    newer["release"]["host_packages"]["aws-neuronx-dkms"] = "2.26.10.0"
    (reports / "trn1-0001-again.json").write_text(json.dumps(newer))
    done = run_cli(["fleet", "summarize", str(reports), "--json"])
    summary = json.loads(done.stdout)
    assert summary["nodes"] == 4 and done.returncode == 1  # the other driver on trn1-0001-again: not uniform
    assert summary["drift"][0]["others"] == {"2.26.10.0": ["trn1-0001-again"]}
    assert summary["unknown"] == ["trn1-0001-again"]
    assert summary["identity"] == [{"node": "trn1-0001-again", "where": str(reports / "trn1-0001-again.json"),
                                    "problem": "its report says it is 'trn1-0001', the name of another node "
                                               "(trn1-0001): judged as trn1-0001-again"}]
