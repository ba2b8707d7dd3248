"""`health`: the check under a deadline, the verdict handed to Slurm, a status file that outlives the run.

The check runs in a worker thread; when it has not finished by the deadline (30 s by default, well inside the 60 s
after which slurmd kills a HealthCheckProgram), the run reports the previous verdict from the status file, marked
stale, and acts as on `unknown`: nothing is drained or resumed on a verdict that was not reached now (NHC's
watchdog does the same). A configuration problem (health.conf) makes the verdict unknown too.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from neurondoctor import __version__
from neurondoctor.actions.check.check_run import CheckOptions, run_check
from neurondoctor.actions.health.owned_files import read_status_file, write_status_file
from neurondoctor.actions.health.slurm_decision import (
    SlurmDecision,
    SlurmNode,
    decide,
    node_for_host,
    parse_scontrol_node,
)
from neurondoctor.command_runner import run_command, stop_running_commands
from neurondoctor.facts import Facts, HostFacts
from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.report.health import STATE_UNKNOWN, Health
from neurondoctor.report.model import Report

DEFAULT_STATUS_FILE = Path("/var/lib/neurondoctor/health.json")
SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
SCONTROL_TIMEOUT_S = 10.0


@dataclass
class HealthOutcome:
    report: Report
    stale: bool = False
    previous: Optional[dict[str, Any]] = None  # the status document a stale run reports
    steps: list[dict[str, Any]] = field(default_factory=list)


def unfinished_report(root: str, health: Health, duration_s: float) -> Report:
    """A report for a run whose check never finished: no checks, the given verdict."""
    return Report(tool_version=__version__, generated_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                  root=root, facts=Facts(host=HostFacts(root=root)), environments=[], latest_release=None, checks=[],
                  health=health, duration_ms=duration_s * 1000)


def check_within(options: CheckOptions, catalog: ReleaseCatalog, deadline_s: float) -> Optional[Report]:
    """The report, or None when the check did not finish within the deadline (its commands are stopped, the thread
    is left to the process exit). A crash of the whole check is re-raised here."""
    result: dict[str, Any] = {}

    def work() -> None:
        try:
            result["report"] = run_check(options, catalog=catalog)
        except BaseException as error:  # handed to the caller's thread
            result["error"] = error

    worker = threading.Thread(target=work, name="neurondoctor-check", daemon=True)
    worker.start()
    worker.join(deadline_s)
    if worker.is_alive():
        stop_running_commands()  # what the abandoned check runs stops now, not at its own timeouts
        return None
    if "error" in result:
        raise result["error"]
    report: Optional[Report] = result.get("report")
    return report


def run_health(options: CheckOptions, catalog: ReleaseCatalog, deadline_s: float, status_file: Optional[Path],
               config_problems: list[str]) -> HealthOutcome:
    started = time.monotonic()
    report = check_within(options, catalog, deadline_s)
    if report is None:
        previous = read_status_file(status_file) if status_file else None
        when = f" (the last verdict, {previous.get('state')}, is from {previous.get('written_at')})" if previous else ""
        reason = f"the check did not finish within {deadline_s:g} s{when}"
        outcome = HealthOutcome(unfinished_report(options.root, Health(STATE_UNKNOWN, [reason]),
                                                  time.monotonic() - started), stale=True, previous=previous)
    else:
        outcome = HealthOutcome(report)
        if config_problems:
            report.health = Health(STATE_UNKNOWN, [*config_problems, *report.health.reasons])
    outcome.steps.append({"name": "check", "status": "timeout" if outcome.stale else outcome.report.health.state,
                          "command": "neurondoctor health", "exit_code": outcome.report.exit_code(),
                          "duration_s": round(time.monotonic() - started, 3)})
    return outcome


def node_name(environ: Mapping[str, str]) -> str:
    """slurmd's name for this node (it sets SLURMD_NODENAME for HealthCheckProgram), else the short hostname."""
    return environ.get("SLURMD_NODENAME") or os.uname().nodename.split(".", 1)[0]


def _show_node(name: str, env: Mapping[str, str], by_hostname: bool) -> tuple[Optional[SlurmNode], str]:
    """The node as Slurm shows it, and its name; run by hand (no SLURMD_NODENAME) on a host whose Slurm name is
    not its hostname, the node whose NodeHostName is this host."""
    shown = run_command(["scontrol", "show", "node", name], timeout=SCONTROL_TIMEOUT_S, env=env)
    node = parse_scontrol_node(name, shown.stdout) if shown.ok else None
    if node is None and by_hostname:
        listed = run_command(["scontrol", "-o", "show", "node"], timeout=SCONTROL_TIMEOUT_S, env=env)
        found = node_for_host(listed.stdout, name) if listed.ok else None
        if found:
            return _show_node(found, env, False)
    problem = shown.describe_failure() if not shown.ok else "no State in the output"
    return node, problem if node is None else ""


def slurm_environ(environ: Mapping[str, str], slurm_conf: Optional[str]) -> dict[str, str]:
    """The environment for scontrol: slurmd passes almost none, so PATH is set here, SLURM_CONF from the config."""
    env = dict(environ)
    env.setdefault("PATH", SAFE_PATH)
    if slurm_conf:
        env["SLURM_CONF"] = slurm_conf
    return env


def apply_to_slurm(outcome: HealthOutcome, environ: Mapping[str, str], slurm_conf: Optional[str],
                   dry_run: bool) -> SlurmDecision:
    """Read the node's Slurm state and drain, resume or leave it; on a stale run nothing is asked of Slurm."""
    env = slurm_environ(environ, slurm_conf)
    name = node_name(env)
    if outcome.stale:
        decision = SlurmDecision("none", f"the verdict is stale, nothing changed on {name}")
    else:
        node, problem = _show_node(name, env, by_hostname="SLURMD_NODENAME" not in env)
        if node is None:
            decision = SlurmDecision("none", f"cannot read node {name} from Slurm, nothing changed: {problem}")
        else:
            decision = decide(outcome.report.health, node)
    if decision.argv and not dry_run:
        done = run_command(list(decision.argv), timeout=SCONTROL_TIMEOUT_S, env=env)
        outcome.steps.append({"name": f"slurm-{decision.action}", "status": "ok" if done.ok else "failed",
                              "command": decision.shown(), "exit_code": done.returncode,
                              "duration_s": round(done.duration_s, 3)})
        if not done.ok:
            decision = SlurmDecision("none", f"{decision.why}, but scontrol failed: {done.describe_failure()}",
                                     decision.argv)
    return decision


def write_status(outcome: HealthOutcome, path: Path, create_directory: bool) -> None:
    """The status file; a stale run keeps the previous verdict, marked stale."""
    health = outcome.report.health
    state, reasons, release = health.state, list(health.reasons), outcome.report.host_release
    if outcome.stale and outcome.previous:
        state = str(outcome.previous.get("state", STATE_UNKNOWN))
        reasons = [*health.reasons, *[str(reason) for reason in outcome.previous.get("reasons", [])]]
        release = outcome.previous.get("release")
    write_status_file(path, state, reasons, release, outcome.steps, stale=outcome.stale,
                      make_directory=create_directory)
