"""`fleet check --slurm`: every node of an allocation (or the nodes named) judged by its own doctor through srun,
then compared with the others (rules/fleet/consistency.py); with `--drain`, the nodes at fault drained with the
reason `neurondoctor-preflight: <id> <title>`, a prefix `health` never resumes (it resumes only its own
`neurondoctor:` drains), so the next health run does not undo it. A node drained for another reason is left as it is.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Optional

from neurondoctor import exit_codes
from neurondoctor.actions.fleet import slurm_steps
from neurondoctor.actions.health.slurm_decision import capped_reason, parse_scontrol_node
from neurondoctor.command_runner import run_command
from neurondoctor.output_targets import creatable_directory
from neurondoctor.report.preflight import NodeAnswer, Preflight
from neurondoctor.rules.fleet.consistency import compare_nodes
from neurondoctor.rules.fleet.identity import Arrival, identities

DRAIN_PREFIX = "neurondoctor-preflight:"
DEFAULT_DEADLINE_S = 60.0
MAX_PARALLEL_STEPS = 64
RESOLVE_TIMEOUT_S = 5.0


@dataclass
class PreflightOptions:
    nodes: Optional[str] = None
    partition: Optional[str] = None
    deadline_s: float = DEFAULT_DEADLINE_S
    drain: bool = False
    collectives: bool = False
    save_reports: Optional[str] = None
    remote_command: str = "neurondoctor"
    forwarded: tuple[str, ...] = ()  # target flags given to fleet check, passed on to every node's check
    progress: Optional[Callable[[str], None]] = None  # `K of N answered`, for the person waiting on 256 nodes


def chosen_nodes(options: PreflightOptions, env: Mapping[str, str]) -> list[str]:
    if options.nodes and options.partition:
        raise exit_codes.UserError("give --nodes or --partition, not both")
    if options.nodes:
        return slurm_steps.expand_nodes(options.nodes, env)
    if options.partition:
        return slurm_steps.partition_nodes(options.partition, env)
    allocation = env.get("SLURM_JOB_NODELIST") or env.get("SLURM_NODELIST")
    if not allocation:
        raise exit_codes.UserError("not inside a Slurm allocation: run it under salloc or sbatch, or name the nodes "
                                   "with --nodes LIST or --partition P")
    return slurm_steps.expand_nodes(allocation, env)


def resolves(host: str) -> Optional[bool]:
    """Whether `host` resolves here, within RESOLVE_TIMEOUT_S (None: no answer in time, which proves nothing)."""
    outcome: dict[str, bool] = {}

    def look() -> None:
        try:
            socket.getaddrinfo(host, None)
            outcome["found"] = True
        except (OSError, UnicodeError):
            outcome["found"] = False

    worker = threading.Thread(target=look, daemon=True)
    worker.start()
    worker.join(RESOLVE_TIMEOUT_S)
    return outcome.get("found")


def _save(directory: Path, node: str, text: str) -> Optional[str]:
    """Write one node's report as DIR/NODE.json, never over a file that is there; a line when it could not."""
    try:
        descriptor = os.open(directory / f"{node}.json", os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    except FileExistsError:
        return f"{directory / node}.json exists: not replaced"
    except OSError as error:
        return f"{directory / node}.json: {error.strerror or error}"
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(text.strip() + "\n")
    return None


def _drain(preflight: Preflight, env: Mapping[str, str]) -> list[str]:
    lines = []
    states = preflight.node_states()
    for name in preflight.at_fault():
        shown = run_command(["scontrol", "show", "node", name], timeout=slurm_steps.SCONTROL_TIMEOUT_S, env=env)
        node = parse_scontrol_node(name, shown.stdout) if shown.ok else None
        if node is None:
            lines.append(f"{name}: not drained: {shown.describe_failure() if not shown.ok else 'not a Slurm node'}")
            continue
        if node.drained and not (node.reason or "").startswith(DRAIN_PREFIX):
            lines.append(f"{name}: already drained for another reason ({node.reason or 'none given'}): left alone")
            continue
        reason = capped_reason(DRAIN_PREFIX, states[name]["reasons"])
        done = run_command(["scontrol", "update", f"nodename={name}", "state=drain", f"reason={reason}"],
                           timeout=slurm_steps.SCONTROL_TIMEOUT_S, env=env)
        lines.append(f"{name}: drained ({reason})" if done.ok else f"{name}: drain failed: {done.describe_failure()}")
    return lines


def run_preflight(options: PreflightOptions, environ: Mapping[str, str]) -> Preflight:
    env = dict(environ)
    if shutil.which("srun", path=env.get("PATH")) is None:
        raise exit_codes.UserError("srun is not on PATH: fleet check runs on a Slurm cluster (a login node or "
                                   "inside an allocation)")
    if not 0 < options.deadline_s <= 3600:
        raise exit_codes.UserError(f"--deadline {options.deadline_s:g}: give seconds above 0, at most 3600")
    save_to = Path(options.save_reports) if options.save_reports else None
    if save_to is not None:
        creatable_directory(save_to, f"--save-reports {save_to}")
        try:
            save_to.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise exit_codes.UserError(f"--save-reports {save_to}: {error.strerror or error}") from error
        if save_to.is_symlink() or not save_to.is_dir():
            raise exit_codes.UserError(f"--save-reports {save_to}: not a directory")
    nodes = chosen_nodes(options, env)
    remote = [options.remote_command, "check", "--json", "--health-conf", *options.forwarded]
    in_allocation = bool(env.get("SLURM_JOB_ID"))
    by_node: dict[str, tuple[NodeAnswer, str]] = {}
    with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL_STEPS, len(nodes))) as pool:
        pending = {pool.submit(slurm_steps.run_step, node, remote, options.deadline_s, env, in_allocation): node
                   for node in nodes}
        for done in as_completed(pending):
            answer, text = done.result()
            by_node[pending[done]] = (answer, text)
            if options.progress is not None:
                options.progress(f"{len(by_node)} of {len(nodes)} node(s) answered ({answer.name}: {answer.state})")
    steps = [by_node[node] for node in nodes]
    answers: list[NodeAnswer] = [answer for answer, _ in steps]
    if save_to is not None:
        for answer, text in steps:
            problem = _save(save_to, answer.name, text) if text else None
            if problem:
                answer.reasons.append(f"report not saved: {problem}")
    addresses = slurm_steps.node_addresses(nodes, env)
    judge_identities(answers, addresses, datetime.now(timezone.utc))
    single_host = slurm_steps.one_host(nodes, addresses)
    reports = {answer.name: answer.report for answer in answers if answer.report is not None}
    preflight = Preflight(answers, compare_nodes(reports, single_host, resolves, options.remote_command))
    if options.collectives:
        from neurondoctor.actions.fleet.collectives import run_collectives

        preflight.collectives = run_collectives(preflight, env, options.remote_command, in_allocation, addresses)
    if options.drain:
        preflight.drained = _drain(preflight, env)
    return preflight


def judge_identities(answers: Sequence[NodeAnswer], addresses: Mapping[str, tuple[str, str]], now: datetime) -> None:
    """Each answering node is the node srun ran its step on: its report's hostname is held against the other nodes'
    names (NodeName, NodeHostName, NodeAddr) and claims, and its date against `now` (rules/fleet/identity.py)."""
    answered = [(answer, answer.report) for answer in answers if answer.report is not None]
    arrivals = [Arrival(answer.name, answer.name, report.node.hostname, report.generated_at,
                        tuple(addresses.get(answer.name, ()))) for answer, report in answered]
    for (answer, _), judged in zip(answered, identities(arrivals, now)):
        answer.problems = judged.problems


def forwarded_flags(release: Optional[str], venvs: Sequence[str], root: Optional[str]) -> tuple[str, ...]:
    """The target flags given to `fleet check`, as every node's check takes them (none given: health.conf's)."""
    flags: list[str] = []
    if root:
        flags += ["--root", root]
    for venv in venvs:
        flags += ["--venv", venv]
    if release:
        flags += ["--release", release]
    return tuple(flags)
