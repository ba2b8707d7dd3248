"""The cluster preflight's comparison, verdict and step answers, without Slurm: each aspect's
plant on one node of five is named with the majority, and its near miss is not; a tie names nobody; a fact a node
reports itself is not repeated; the root communicator's address; srun's real failure lines; the document and text.
tests/test_fleet_preflight_slurm.py runs the same on a real five-node Slurm."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any, Optional

import pytest

from neurondoctor.actions.fleet.slurm_steps import node_answer, srun_argv
from neurondoctor.report.preflight import NodeAnswer, Preflight, render_preflight_text
from neurondoctor.report.reader import ReportDocument
from neurondoctor.rules.fleet.consistency import CrossNodeFinding, compare_nodes
from tests.preflight_reports import node_document, node_report

NODES = ("trn-1", "trn-2", "trn-3", "trn-4", "trn-5")


def _cluster(odd: dict[str, Any], odd_nodes: tuple[str, ...] = ("trn-3",)) -> dict[str, ReportDocument]:
    return {name: node_report(name, **(odd if name in odd_nodes else {})) for name in NODES}


def _compare(reports: dict[str, ReportDocument], single_host: bool = False,
             resolves: Optional[bool] = True) -> list[CrossNodeFinding]:
    return compare_nodes(reports, single_host, lambda host: resolves)


PLANTS = [
    ("ND-FLEET-001", {"runtime": "2.32.31.0"}, None),
    ("ND-FLEET-002", {"compiler": "2.27.5334.0"}, "2.26.6360.0+bd4c5f4b"),
    ("ND-FLEET-003", {"environ": {"NEURON_CC_FLAGS": "--model-type=transformer -O1 --cache_dir=/fsx/neuron-cache"}},
     "--model-type=transformer"),
    ("ND-FLEET-004", {"environ": {"NEURON_LOGICAL_NC_CONFIG": "1"}}, "(unset)"),
    ("ND-FLEET-005", {"environ": {"NEURON_RT_ROOT_COMM_ID": None}}, "10.0.3.17:62182"),
    ("ND-FLEET-005", {"environ": {"NEURON_RT_ROOT_COMM_ID": "10.0.3.18:62182"}}, "10.0.3.17:62182"),
    ("ND-FLEET-007", {"environ": {"FI_EFA_USE_DEVICE_RDMA": None}}, None),
    ("ND-FLEET-008", {"cache": "/var/tmp/neuron-compile-cache"}, "/fsx/neuron-cache"),
    ("ND-FLEET-009", {"instance_type": "trn1n.32xlarge"}, "trn1.32xlarge"),
    ("ND-FLEET-010", {"efa": 6}, "8"),
    ("ND-FLEET-011", {"devices": 15}, "16"),
]


@pytest.mark.parametrize("finding_id, odd, majority", PLANTS, ids=[f"{plant[0]}-{i}" for i, plant in enumerate(PLANTS)])
def test_each_plant_names_its_node_and_the_majority(finding_id: str, odd: dict[str, Any],
                                                    majority: Optional[str]) -> None:
    found = _compare(_cluster(odd))
    assert [(cross.finding.id, cross.nodes) for cross in found] == [(finding_id, ("trn-3",))], found
    cross = found[0]
    assert cross.finding.severity == "error"
    if majority is not None:
        assert cross.majority == majority and majority in cross.finding.title
    assert cross.finding.fix_lines == ["srun --nodelist=trn-3 --ntasks-per-node=1 neurondoctor check  # that node's "
                                       "own check, with the fix lines for it"]
    preflight = Preflight([NodeAnswer(name, report, report.health.state) for name, report in _cluster(odd).items()],
                          found)
    assert preflight.at_fault() == ["trn-3"] and preflight.exit_code() == 1


NEAR_MISSES = [
    # the same user flags: one word or two, another order, a wrapper flag (--retry_failed_compilation) added
    {"environ": {"NEURON_CC_FLAGS": "--cache_dir=/fsx/neuron-cache --retry_failed_compilation --model-type "
                                    "transformer"}},
    {"environ": {"NEURON_RT_VISIBLE_CORES": "0-15"}},  # a per-process choice, not the node's
    {"environ": {"NEURON_RT_LOG_LEVEL": "INFO"}},
    {"environ": {"PYTHONUNBUFFERED": "1"}},
]


@pytest.mark.parametrize("odd", NEAR_MISSES)
def test_near_misses_name_nobody(odd: dict[str, Any]) -> None:
    assert _compare(_cluster(odd)) == []


def test_a_tie_names_no_node_and_drains_nothing() -> None:
    reports = {name: node_report(name, compiler="2.27.5334.0" if name in ("trn-1", "trn-2") else None)
               for name in NODES[:4]}
    found = _compare(reports)
    assert len(found) == 1 and found[0].finding.id == "ND-FLEET-002"
    assert found[0].nodes == () and found[0].majority is None and "no majority" in found[0].finding.title
    preflight = Preflight([NodeAnswer(name, report, "ok") for name, report in reports.items()], found)
    assert preflight.at_fault() == [] and preflight.exit_code() == 1
    assert preflight.to_json()["preflight"]["findings"][0]["nodes"] == []


def test_a_fact_the_node_reports_itself_is_not_repeated_but_is_a_fault_for_a_job_across_nodes() -> None:
    own = (("ND-RES-004", "resource", "warning", "6 of 8 EFA interfaces on this trn1.32xlarge"),)
    reports = _cluster({"efa": 6, "findings": own, "state": "degraded"})
    found = _compare(reports)
    assert found == []
    preflight = Preflight([NodeAnswer(name, report, report.health.state) for name, report in reports.items()], found)
    states = preflight.node_states()
    assert states["trn-3"]["state"] == "unhealthy"
    assert states["trn-3"]["reasons"][0].startswith("ND-RES-004 6 of 8 EFA interfaces")
    assert preflight.at_fault() == ["trn-3"] and preflight.exit_code() == 1
    lnc = (("ND-ENV-003", "env-var-misconfig", "warning", "NEURON_LOGICAL_NC_CONFIG=1 is set on trn1.32xlarge"),)
    assert _compare(_cluster({"environ": {"NEURON_LOGICAL_NC_CONFIG": "1"}, "findings": lnc})) == []


def test_the_root_communicators_address() -> None:
    loopback = _cluster({"environ": {"NEURON_RT_ROOT_COMM_ID": "127.0.0.1:62182"}}, odd_nodes=NODES)
    found = _compare(loopback)
    assert [(cross.finding.id, cross.finding.severity, cross.nodes) for cross in found] == [
        ("ND-FLEET-006", "error", ())]
    assert "loopback" in found[0].finding.title
    assert _compare(loopback, single_host=True) == []  # one host (a test cluster): loopback is right
    named = _cluster({"environ": {"NEURON_RT_ROOT_COMM_ID": "head-node:62182"}}, odd_nodes=NODES)
    assert [cross.finding.id for cross in _compare(named, resolves=False)] == ["ND-FLEET-006"]
    assert _compare(named, resolves=True) == [] and _compare(named, resolves=None) == []  # no answer proves nothing
    unset = _cluster({"environ": {"NEURON_RT_ROOT_COMM_ID": None}}, odd_nodes=NODES)
    found = _compare(unset)
    assert [(cross.finding.id, cross.finding.severity) for cross in found] == [("ND-FLEET-006", "info")]
    preflight = Preflight([NodeAnswer(name, report, "ok") for name, report in unset.items()], found)
    assert preflight.exit_code() == 0


def test_unreachable_and_unknown_nodes_are_never_dropped() -> None:
    reports = _cluster({})
    answers = [NodeAnswer(name, report, "ok") for name, report in list(reports.items())[:3]]
    answers += [NodeAnswer("trn-4", None, "unreachable", ["no answer within 60 s"]),
                NodeAnswer("trn-5", None, "unknown", ["its doctor gave no report: error: health.conf:3: bad"])]
    preflight = Preflight(answers, _compare({answer.name: answer.report for answer in answers if answer.report}))
    document = preflight.to_json()
    assert document["preflight"]["nodes"]["trn-4"] == {"state": "unreachable", "reasons": ["no answer within 60 s"]}
    assert document["nodes"] == 3 and preflight.exit_code() == 3
    text = render_preflight_text(preflight)
    assert "trn-4" in text and "unreachable" in text and text.rstrip().endswith(
        "Unknown: trn-4, trn-5 could not be judged; the others are consistent")


def test_hostile_values_from_a_node_stay_on_their_line() -> None:
    hostile = "--model-type=transformer\n\x1b[31mALL NODES OK\x1b[0m"
    reports = _cluster({"environ": {"NEURON_CC_FLAGS": hostile}})
    preflight = Preflight([NodeAnswer(name, report, "ok") for name, report in reports.items()], _compare(reports))
    text = render_preflight_text(preflight)
    assert "\x1b" not in text and not any(line.startswith("ALL NODES OK") for line in text.splitlines())
    assert preflight.at_fault() == ["trn-3"]


# What srun printed on this machine's Slurm 22.05 (tests/test_fleet_preflight_slurm.py runs them for real).
LAUNCH_FAILED = ("srun: error: Task launch for StepId=2.0 failed on node trn-4: Communication connection failure\n"
                 "srun: error: Application launch failed: Communication connection failure\n"
                 "srun: Job step aborted\n")
DOCTOR_REFUSED = ("error: /etc/neurondoctor/health.conf:3: an unknown key (known: venv, python, select, skip, root, "
                  "release, deadline, status_file, slurm_conf)\nsrun: error: trn-2: task 0: Exited with exit code 2\n")


def test_what_each_step_answer_says() -> None:
    report = json.dumps(node_document("trn-1"))
    assert node_answer("trn-1", report + "\n", "", False, 60, 1.2).report is not None
    launch = node_answer("trn-4", "", LAUNCH_FAILED, False, 60, 11.0)
    assert launch.state == "unreachable"
    assert launch.reasons == ["the step did not start there: error: Task launch for StepId=2.0 failed on node trn-4: "
                              "Communication connection failure"]
    late = node_answer("trn-4", "", "", True, 20, 20.0)
    assert late.state == "unreachable" and late.reasons == ["no answer within 20 s"]
    refused = node_answer("trn-2", "", DOCTOR_REFUSED, False, 60, 0.4)
    assert refused.state == "unknown" and refused.reasons[0].startswith(
        "its doctor gave no report: error: /etc/neurondoctor/health.conf:3: an unknown key")
    missing = node_answer("trn-2", "", "slurmstepd: error: execve(): neurondoctor: No such file or directory\n"
                          "srun: error: trn-2: task 0: Exited with exit code 2\n", False, 60, 0.2)
    assert missing.state == "unknown" and "execve(): neurondoctor: No such file or directory" in missing.reasons[0]
    other = node_answer("trn-3", '{"schema": "neurondoctor.fleet/1"}', "", False, 60, 0.3)
    assert other.state == "unknown" and other.reasons[0].startswith("answered, but not with a report")


def test_one_step_per_node_with_the_nodes_own_options() -> None:
    assert srun_argv("trn-3", ["neurondoctor", "check", "--json", "--health-conf"], True) == [
        "srun", "--nodes=1", "--ntasks=1", "--nodelist=trn-3", "--job-name=neurondoctor-preflight", "--overlap", "--",
        "neurondoctor", "check", "--json", "--health-conf"]


def _fleet_check(*arguments: str, env: Optional[dict[str, str]] = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "neurondoctor", "fleet", "check", *arguments], capture_output=True,
                          text=True, timeout=60, env=env)


def test_usage_errors_are_one_line(tmp_path: Any) -> None:
    done = _fleet_check()
    assert done.returncode == 2 and "needs --slurm" in done.stderr
    no_srun = {key: value for key, value in os.environ.items() if not key.startswith("SLURM_")}
    no_srun["PATH"] = str(tmp_path)
    done = _fleet_check("--slurm", env=no_srun)
    assert done.returncode == 2 and "srun is not on PATH" in done.stderr and not done.stdout
    fake = tmp_path / "srun"
    fake.write_text("#!/bin/sh\nexit 99\n")
    fake.chmod(0o755)
    done = _fleet_check("--slurm", env=no_srun)
    assert done.returncode == 2 and "not inside a Slurm allocation" in done.stderr


def test_check_takes_the_nodes_options_from_health_conf(tmp_path: Any) -> None:
    from tests.host_fixture import HostSpec, build_host

    root = build_host(tmp_path / "root", HostSpec(driver_loaded=False))
    conf = tmp_path / "health.conf"
    conf.write_text(f"root = {root}\nstatus_file = /nonexistent/never-written.json\n")
    env = dict(os.environ, NEURONDOCTOR_CONFIG=str(conf))
    done = subprocess.run([sys.executable, "-m", "neurondoctor", "check", "--json", "--health-conf"],
                          capture_output=True, text=True, timeout=60, env=env)
    document = json.loads(done.stdout)
    assert document["root"] == str(root) and "ND-DRV-002" in {finding["id"] for finding in document["findings"]}
    conf.write_text("root = /\nbogus = 1\n")
    done = subprocess.run([sys.executable, "-m", "neurondoctor", "check", "--json", "--health-conf"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 2 and not done.stdout and f"{conf}:2: an unknown key" in done.stderr
