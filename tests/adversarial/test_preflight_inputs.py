"""The cluster preflight reads what other nodes print and what Slurm's tools list, and acts as root on Slurm:
node names that are not node names, values from a node that carry controls and quotes into a drain reason, a
saved report's path that is a link, a node that answers with garbage or a nested bomb, nccom-test output without
end. Each is refused or contained, and the rest of the run goes on."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from neurondoctor import exit_codes
from neurondoctor.actions.fleet import slurm_steps
from neurondoctor.actions.fleet.preflight_run import DRAIN_PREFIX, _save
from neurondoctor.actions.health.slurm_decision import capped_reason
from neurondoctor.host.nccom_test import parse_table
from neurondoctor.report.preflight import NodeAnswer, Preflight
from neurondoctor.rules.fleet.consistency import compare_nodes
from tests.preflight_reports import node_report


@pytest.mark.parametrize("listed", ["trn-1\ntrn-2;reboot\n", "trn-1\n../../etc/cron.d/x\n", "-rf\n",
                                    "trn-1\n$(id)\n"])
def test_a_listed_node_that_is_no_node_name_is_refused(tmp_path: Path, listed: str) -> None:
    fake = tmp_path / "scontrol"
    fake.write_text(f"#!/bin/sh\nprintf %s {json.dumps(listed)}\n")
    fake.chmod(0o755)
    with pytest.raises(exit_codes.UserError, match="is not a Slurm node name"):
        slurm_steps.expand_nodes("trn-[1-2]", {"PATH": f"{tmp_path}:{os.environ['PATH']}"})


def test_a_nodes_values_reach_the_drain_reason_as_one_safe_word() -> None:
    hostile = '--model-type=transformer"\nscontrol update nodename=ALL state=down\x1b[2J'
    reports = {name: node_report(name, **({"environ": {"NEURON_CC_FLAGS": hostile}} if name == "trn-3" else {}))
               for name in ("trn-1", "trn-2", "trn-3", "trn-4")}
    preflight = Preflight([NodeAnswer(name, report, "ok") for name, report in reports.items()],
                          compare_nodes(reports, False, lambda host: True))
    assert preflight.at_fault() == ["trn-3"]
    reason = capped_reason(DRAIN_PREFIX, preflight.node_states()["trn-3"]["reasons"])
    assert reason.startswith("neurondoctor-preflight: ND-FLEET-003") and len(reason) <= 100
    assert not any(char in reason for char in '"\n\r\x1b'), reason


def test_a_saved_report_never_goes_through_a_link_or_over_a_file(tmp_path: Path) -> None:
    target = tmp_path / "shadow"
    target.write_text("root:x:0:0\n")
    saved = tmp_path / "reports"
    saved.mkdir()
    (saved / "trn-1.json").symlink_to(target)
    (saved / "trn-2.json").write_text("someone's notes\n")
    assert "exists: not replaced" in (_save(saved, "trn-1", '{"schema": "neurondoctor.report/1"}') or "")
    assert "exists: not replaced" in (_save(saved, "trn-2", '{"schema": "neurondoctor.report/1"}') or "")
    assert target.read_text() == "root:x:0:0\n" and (saved / "trn-2.json").read_text() == "someone's notes\n"
    assert _save(saved, "trn-3", '{"schema": "neurondoctor.report/1"}') is None


@pytest.mark.parametrize("printed", ["[" * 100_000 + "]" * 100_000, "{" + '"a":' * 50_000, "\x00\xff{garbage",
                                     '{"schema": "neurondoctor.report/1", "health": "ok"}'])
def test_a_node_answering_garbage_is_unknown(printed: str) -> None:
    answer = slurm_steps.node_answer("trn-1", printed, "", False, 60, 1.0)
    assert answer.report is None and answer.state == "unknown"
    assert answer.reasons[0].startswith("answered, but not with a report") and "\n" not in answer.reasons[0]


def test_endless_nccom_output_is_read_within_a_bound() -> None:
    header = "size(B)    count(elems)    type    time(us)    algbw(GB/s)    busbw(GB/s)\n"
    result = parse_table(header + "1024    256    fp32    58    0.02    0.02\n" * 200_000)
    assert len(result.rows) < 10_000
