"""`upgrade`: read the host and its environments, plan (actions/upgrade/plan.py), and with `--apply` run the steps
in order; `--rollback` runs, in reverse, the undo of every step the status file records as done.

Commands run as bootstrap runs them (actions/bootstrap/bootstrap_run.py `run_commands`: without sudo, in `chroot
ROOT` under `--root`, each logged with its exit; the first failure stops the run with one line saying which step,
command and cause, and one what to do). The status file (`neurondoctor.status/1`, default
/var/lib/neurondoctor/upgrade.json) keeps every command's record and the host as it was before (`from`): a second
`--apply` plans again from the host, so what is done is not done again, and keeps the first `from`; `--rollback`
builds its commands from that `from`, checked word by word, never from command text in the file.
`--apply` refuses while a process holds a NeuronCore unless `--stop-holders` names it acceptable to stop them.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, TextIO

from neurondoctor import exit_codes
from neurondoctor.actions.bootstrap.bootstrap_run import CommandRun, log_line, run_commands
from neurondoctor.actions.bootstrap.plan import reload_step
from neurondoctor.actions.check.check_run import CheckOptions, collect_environments, collect_host, run_check
from neurondoctor.actions.health.owned_files import read_status_file, write_status_file
from neurondoctor.actions.upgrade.plan import (
    DKMS,
    FromState,
    UpgradeFacts,
    UpgradePlan,
    UpgradeStep,
    plan_upgrade,
    undo_commands,
    valid_start,
)
from neurondoctor.facts.python_env import PythonEnvironment
from neurondoctor.host.rootfs import RootFS
from neurondoctor.output_text import neutralize
from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.report.health import STATE_UNHEALTHY, STATE_UNKNOWN, Health
from neurondoctor.report.model import Report
from neurondoctor.typed_paths import check_directories, check_interpreters

DEFAULT_STATUS_FILE = "/var/lib/neurondoctor/upgrade.json"
SLURM_CONFIGS = ("etc/slurm/slurm.conf", "etc/slurm-llnl/slurm.conf")
MAX_KERNELS = 64  # /lib/modules entries read: a host keeps a handful
_KERNEL = re.compile(r"\d+\.\d+[A-Za-z0-9._+-]{0,100}\Z")
_INTERPRETER = re.compile(r"python(3\.\d{1,2})\Z")
# The steps whose changes a rollback puts back (or, for stop-holders and headers, says it cannot).
UNDOABLE_STEPS = ("drain", "stop-holders", "headers", "release-holds", "driver", "driver-reload", "runtime",
                  "driver-runtime", "hold", "resume")
_AGAIN = "then run upgrade --apply again (the steps already done are skipped), or --rollback to go back"


@dataclass
class UpgradeOptions:
    target: str
    root: str = "/"
    venvs: Sequence[str] = ()
    pythons: Sequence[str] = ()
    apply: bool = False
    rollback: bool = False
    stop_holders: bool = False
    status_file: Optional[str] = None
    verbose: bool = False
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))


@dataclass
class UpgradeOutcome:
    plan: UpgradePlan
    records: list[dict[str, Any]] = field(default_factory=list)
    failed: Optional[str] = None  # the failed step, its command and cause in one line (or the refusal)
    next_step: Optional[str] = None
    report: Optional[Report] = None
    health: Health = field(default_factory=lambda: Health(STATE_UNKNOWN, ["not checked"]))
    undone: list[str] = field(default_factory=list)  # the steps --rollback undid, in the order it undid them
    status: Optional[Path] = None

    @property
    def exit_code(self) -> int:
        if self.failed or self.plan.blocked:
            return exit_codes.FINDINGS
        return exit_codes.OK


def _kernels(fs: RootFS, running: Optional[str]) -> list[tuple[str, bool]]:
    """Each installed kernel (a /lib/modules entry with its modules, and the running one) and whether its headers
    (`build`) are there: DKMS builds the driver for each of them that has headers."""
    listed = fs.listdir("lib/modules") if fs.is_dir("lib/modules") else []
    names = [name for name in listed[:MAX_KERNELS] if _KERNEL.match(name)]
    kernels = [name for name in sorted(names) if name == running or fs.exists(f"lib/modules/{name}/modules.dep")
               or fs.is_dir(f"lib/modules/{name}/kernel")]
    if running and running not in kernels:
        kernels.insert(0, running)
    return [(name, fs.is_dir(f"lib/modules/{name}/build")) for name in kernels]


def _slurm_node(fs: RootFS, environ: Mapping[str, str], hostname: Optional[str]) -> Optional[str]:
    """This host's Slurm node name when it is a Slurm node (a slurm.conf): slurmd's SLURMD_NODENAME, else the short
    host name (slurmd's default)."""
    if not any(fs.exists(path) for path in SLURM_CONFIGS):
        return None
    name = environ.get("SLURMD_NODENAME") or (hostname or "").split(".")[0]
    return name if re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", name or "") else None


def collect_facts(options: UpgradeOptions, catalog: ReleaseCatalog) -> UpgradeFacts:
    fs = RootFS(options.root)
    host = collect_host(fs, options.environ, {})
    environments: list[PythonEnvironment] = []
    if options.venvs or options.pythons:
        environments, _ = collect_environments(fs, CheckOptions(root=options.root, venvs=options.venvs,
                                                                pythons=options.pythons, environ=options.environ),
                                               {}, host.collector_failures, catalog, [])
    if not fs.is_live:  # the commands run in `chroot ROOT`: each environment by its path inside the root
        environments = [_inside(fs, env) for env in environments]
    interpreters = sorted({match.group(1) for name in (fs.listdir("usr/bin") if fs.is_dir("usr/bin") else [])
                           for match in [_INTERPRETER.match(name)] if match})
    return UpgradeFacts(host=host, environments=environments, kernels=_kernels(fs, host.snapshot.kernel),
                        slurm_node=_slurm_node(fs, options.environ, host.hostname), interpreters=interpreters,
                        live=fs.is_live, neurondoctor=(sys.executable, "-m", "neurondoctor"))


def _inside(fs: RootFS, env: PythonEnvironment) -> PythonEnvironment:
    path, interpreter = fs.inner_path(env.path), fs.inner_path(env.interpreter)
    return dataclasses.replace(env, path=path, interpreter=interpreter or env.interpreter) if path else env


def status_path(options: UpgradeOptions) -> Optional[Path]:
    if options.status_file:
        return Path(options.status_file)
    if not (options.apply or options.rollback):
        return None  # a plan writes nothing
    return Path(options.root.rstrip("/") + DEFAULT_STATUS_FILE) if options.root != "/" else Path(DEFAULT_STATUS_FILE)


def _previous(path: Optional[Path], target: str) -> Optional[dict[str, Any]]:
    """The status file of an upgrade to `target` not rolled back: a second apply continues it."""
    document = read_status_file(path) if path is not None else None
    if document and document.get("command") == "upgrade" and document.get("release") == target \
            and not document.get("rolled_back"):
        return document
    return None


def _run(options: UpgradeOptions, log: TextIO) -> CommandRun:
    return CommandRun(options.root, options.environ, log, label="upgrade", verbose=options.verbose, again=_AGAIN)


def _judge(options: UpgradeOptions, catalog: ReleaseCatalog, outcome: UpgradeOutcome, release: Optional[str],
           name: str) -> None:
    started = time.monotonic()
    report = run_check(CheckOptions(root=options.root, venvs=list(options.venvs), pythons=list(options.pythons),
                                    release=release, environ=options.environ), catalog=catalog)
    outcome.report, outcome.health = report, report.health
    outcome.records.append({"name": name, "status": report.health.state, "command": "neurondoctor check",
                            "exit_code": report.exit_code(), "duration_s": round(time.monotonic() - started, 3)})


def _canary(options: UpgradeOptions, step: UpgradeStep, outcome: UpgradeOutcome, log: TextIO) -> None:
    argv = step.commands[0].argv or []
    log_line(log, "upgrade: canary: running " + step.commands[0].render())
    started = time.monotonic()
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1800, env=dict(options.environ))
    outcome.records.append({"name": "canary", "status": "ok" if done.returncode in (0, 4) else "failed",
                            "command": "neurondoctor probe canary", "exit_code": done.returncode,
                            "duration_s": round(time.monotonic() - started, 3)})
    if done.returncode not in (0, 4):
        outcome.health = Health(STATE_UNHEALTHY, [*outcome.health.reasons, f"the canary failed (exit "
                                                  f"{done.returncode})"])


def _reload_commands(options: UpgradeOptions, driver: str) -> list[Any]:
    """The reload decided on the host as it is now (the package's own scripts may have done it)."""
    snapshot = collect_host(RootFS(options.root), options.environ, {}).snapshot
    step = reload_step(snapshot, driver.rstrip("."), True)
    return list(step.commands) if step.needed else []


def apply_plan(options: UpgradeOptions, catalog: ReleaseCatalog, plan: UpgradePlan, log: TextIO) -> UpgradeOutcome:
    outcome = UpgradeOutcome(plan)
    if plan.blocked:
        outcome.failed = "preflight: " + "; ".join(item.reason for item in plan.blocked)
        outcome.next_step = "nothing was changed; the reasons above say what the target needs"
        return outcome
    holders = next((step for step in plan.steps if step.id == "stop-holders"), None)
    if holders is not None and not options.stop_holders:
        outcome.failed = "stop-holders: " + holders.why
        outcome.next_step = ("nothing was changed; stop those processes, or run again with --stop-holders to have "
                             "upgrade stop them")
        return outcome
    run = _run(options, log)
    for index, step in enumerate(plan.steps):
        if step.kind == "verify":
            if step.id == "check":
                _judge(options, catalog, outcome, plan.target, "check")
            elif step.id == "canary":
                _canary(options, step, outcome, log)
            continue
        if step.deferred:
            outcome.records.append({"name": step.id, "status": "deferred", "command": "", "exit_code": None,
                                    "duration_s": 0.0})
            continue
        commands = _reload_commands(options, plan.to["packages"].get(DKMS) or plan.start.packages.get(DKMS, "")) \
            if step.judged_at_apply \
            else step.commands
        if not commands:
            outcome.records.append({"name": step.id, "status": "unchanged", "command": "", "exit_code": None,
                                    "duration_s": 0.0})
            continue
        failure = run_commands(run, step.id, commands, outcome.records)
        if failure is not None:
            following = next((later.id for later in plan.steps[index + 1:]), None)
            outcome.failed = failure.summary
            outcome.next_step = failure.next_step + (f" (the next step is {following})" if following else "")
            outcome.health = Health(STATE_UNHEALTHY, [f"upgrade step {failure.summary}"])
            return outcome
    return outcome


def _done_steps(records: Sequence[Any]) -> list[str]:
    """The steps a status file records as run (done, or failed part-way: its undo is safe to run either way), in
    the order they ran: only the steps an upgrade makes (the check, the canary, earlier undo records and any other
    name are not)."""
    done: list[str] = []
    for record in records:
        if not isinstance(record, dict) or record.get("status") not in ("ok", "failed"):
            continue
        name = record.get("name")
        if isinstance(name, str) and name not in done and (name in UNDOABLE_STEPS or name.startswith("environment:")):
            done.append(name)
    return done


def rollback(options: UpgradeOptions, catalog: ReleaseCatalog, log: TextIO,
             path: Optional[Path]) -> UpgradeOutcome:
    """The undo of each done step, last first; after a driver's undo, the reload decided on the host it left. The
    environments are the ones the file records (by their path inside the root) unless --venv/--python name them."""
    document = read_status_file(path) if path is not None else None
    if not document or document.get("command") != "upgrade":
        raise exit_codes.UserError(f"--rollback needs the status file of an upgrade --apply ({path}); there is none"
                                   " there (name it with --status-file)")
    if document.get("rolled_back"):
        raise exit_codes.UserError(f"{path} records an upgrade already rolled back: nothing to undo")
    if document.get("release") != options.target:
        raise exit_codes.UserError(f"{path} records an upgrade to {neutralize(str(document.get('release'))[:40])}, "
                                   f"not to {options.target}: name the release it went to with --to")
    try:
        start = valid_start(document.get("from"))
    except ValueError as error:
        raise exit_codes.UserError(f"{path}: its `from` cannot be trusted to build commands from: {error}",
                                   exit_codes.UNKNOWN) from error
    if not (options.venvs or options.pythons) and start.environments:
        options = dataclasses.replace(options, venvs=[
            env.path if options.root == "/" else options.root.rstrip("/") + env.path for env in start.environments])
    facts = collect_facts(options, catalog)
    plan = UpgradePlan(str(document.get("release")), start, {"release": start.release,
                                                              "packages": dict(start.packages)})
    outcome = UpgradeOutcome(plan)
    outcome.records = [record for record in document.get("steps", []) if isinstance(record, dict)]
    run = _run(options, log)
    for step_id in reversed(_done_steps(outcome.records)):
        if step_id == "driver-reload":
            continue  # decided after the driver's own undo, below
        snapshot = collect_host(RootFS(options.root), options.environ, {}).snapshot
        commands = undo_commands(step_id, start, snapshot, facts.environments)
        if step_id in ("driver", "driver-runtime") and DKMS in start.packages and commands:
            failure = run_commands(run, f"undo:{step_id}", commands, outcome.records)
            if failure is None and start.driver_loaded:
                commands = _reload_commands(options, start.packages[DKMS])
                failure = run_commands(run, "undo:driver-reload", commands, outcome.records) if commands else None
        else:
            failure = run_commands(run, f"undo:{step_id}", commands, outcome.records) if commands else None
        outcome.undone.append(step_id)
        if failure is not None:
            outcome.failed, outcome.next_step = failure.summary, failure.next_step.replace(
                _AGAIN, "then run upgrade --rollback again")
            outcome.health = Health(STATE_UNHEALTHY, [f"rollback step {failure.summary}"])
            return outcome
    _judge(options, catalog, outcome, start.release, "check")
    return outcome


def write_status(options: UpgradeOptions, outcome: UpgradeOutcome, path: Optional[Path], start: FromState,
                 rolled_back: bool = False) -> None:
    if path is None:
        return
    extra: dict[str, Any] = {"command": "upgrade", "rolled_back": rolled_back, "from": start.to_json(),
                             "to": outcome.plan.to, "failed_step": outcome.failed, "next_step": outcome.next_step}
    write_status_file(path, outcome.health.state, outcome.health.reasons, outcome.plan.target, outcome.records,
                      make_directory=options.status_file is None, **extra)
    outcome.status = path


def run_upgrade(options: UpgradeOptions, catalog: ReleaseCatalog, log: TextIO) -> UpgradeOutcome:
    if (options.apply or options.rollback) and os.geteuid() != 0:
        raise exit_codes.UserError("--apply and --rollback install OS packages and reload the driver: run them as "
                                   "root (sudo). Without them upgrade only plans.")
    if options.apply and options.rollback:
        raise exit_codes.UserError("--apply and --rollback: choose one")
    check_directories("--root", [options.root])  # after the refusal above: a user may not read root's folders
    check_directories("--venv", options.venvs)
    check_interpreters("--python", options.pythons, os.environ)
    path = status_path(options)
    if options.rollback:
        outcome = rollback(options, catalog, log, path)
        write_status(options, outcome, path, outcome.plan.start, rolled_back=not outcome.failed)
        return outcome
    plan = plan_upgrade(collect_facts(options, catalog), catalog, options.target)
    if not options.apply:
        return UpgradeOutcome(plan)
    previous = _previous(path, options.target)
    if not plan.changes:  # applied already: nothing runs, the status file (and its `from`) stays as it is
        outcome = UpgradeOutcome(plan)
        _judge(options, catalog, outcome, options.target, "check")
        outcome.status = path if previous else None
        return outcome
    outcome = apply_plan(options, catalog, plan, log)
    if outcome.failed and not outcome.records:  # refused before anything ran: the file is left as it was
        return outcome
    start = plan.start
    if previous is not None:
        try:
            start = valid_start(previous.get("from"))
            outcome.records = [record for record in previous.get("steps", []) if isinstance(record, dict)
                               and record.get("name") not in ("check", "canary")] + outcome.records
        except ValueError:
            pass
    write_status(options, outcome, path, start)
    return outcome
