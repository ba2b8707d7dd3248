"""`bootstrap`: plan or apply the set-up of a Neuron host for cloud-init user-data and AMI pipelines.

The plan is actions/bootstrap/plan.py's. `--apply` needs root (user-data runs as root) and runs each needed
command in order, logging it and its exit and duration (its output too with -v); the first failure stops the run:
one line says which step and command failed and why, one what to do next (actions/bootstrap/step_failure.py), and
the status file (`neurondoctor.status/1`, default /var/lib/neurondoctor/bootstrap.json, written atomically) keeps
both with the command's last output lines.
On the live host commands run as they are shown, less `sudo`; under `--root DIR` they run in `chroot DIR`, so a
mounted image is set up and the machine running the build is not touched (the driver reload and the canary belong
to the instance that boots it). Then `check` judges the result (with `--image` without the device checks, for a
Packer build instance that may have none) and, where a device exists, `probe canary`. The exit code is the health.
"""

from __future__ import annotations

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
from neurondoctor.actions.bootstrap.plan import Step, check_supported, os_steps, reload_step, venv_step
from neurondoctor.actions.bootstrap.step_failure import StepFailure, explain_failure, output_lines
from neurondoctor.actions.check.check_run import CheckOptions, collect_host, run_check, validate_options
from neurondoctor.actions.health.owned_files import write_status_file
from neurondoctor.command_runner import run_command
from neurondoctor.facts.guard_files import MARKER_FILE, read_marker
from neurondoctor.host.rootfs import RootFS
from neurondoctor.output_text import write_text
from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.report.health import STATE_UNHEALTHY, Health
from neurondoctor.report.model import Report
from neurondoctor.rules.fix import Command

DEFAULT_STATUS_FILE = "/var/lib/neurondoctor/bootstrap.json"
COMMAND_TIMEOUT_S = 1800.0  # a DKMS build on a large instance takes minutes
APT_LOCK_WAIT_S = 600  # how long apt waits for another package manager's dpkg lock (first boot)
# Categories an image build cannot judge: no device, no loaded driver, nothing holding cores, no hardware log, and
# the build instance's type is not the type the image is for.
IMAGE_SKIPS = ("device-missing", "device-permission", "cores-busy", "driver-not-loaded", "driver-stale",
               "hardware-error", "instance-unsupported")
_SUDO = re.compile(r"(^|\|\s*|&&\s*)sudo\s+")


@dataclass
class BootstrapOptions:
    release: str
    venv: str
    root: str = "/"
    image: bool = False
    apply: bool = False
    status_file: Optional[str] = None
    verbose: bool = False  # every command's output in the log, not only in the status file of a failure
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))


@dataclass
class BootstrapOutcome:
    steps: list[Step]
    records: list[dict[str, Any]] = field(default_factory=list)  # the status file's steps
    failed: Optional[str] = None  # the failed step, its command and the cause, in one line
    next_step: Optional[str] = None  # what to do about the failure
    report: Optional[Report] = None
    health: Health = field(default_factory=lambda: Health("unknown", ["not checked"]))


def _guarded_release(fs: RootFS, venv: str) -> tuple[bool, Optional[str]]:
    exists = fs.is_dir(venv)
    marker = read_marker(fs.try_read_text(f"{venv.rstrip('/')}/{MARKER_FILE}", limit=256 * 1024)) if exists else None
    release = marker.get("release") if marker else None
    return exists, release if isinstance(release, str) else None


def plan_steps(options: BootstrapOptions, catalog: ReleaseCatalog) -> list[Step]:
    fs = RootFS(options.root)
    host = collect_host(fs, options.environ, {})
    check_supported(host.snapshot)
    steps = os_steps(host.snapshot, catalog, options.release, options.image)
    exists, guarded = _guarded_release(fs, options.venv)
    steps.append(venv_step(options.venv, guarded, exists, options.release, sys.executable, not fs.is_live))
    return steps


def command_argv(step: Command, root: str) -> list[str]:
    """The command as this process runs it: without sudo (it is root already), in `chroot ROOT` under a root. A
    command of plain words runs as argv; one the rule joined with operators (a key piped into gpg) runs in `sh -c`,
    its data words quoted by the one quoting function."""
    words = step.argv
    if words is not None:
        argv = words[1:] if words[0] == "sudo" else words
        if argv[:1] in (["apt-get"], ["apt"]):
            # At first boot unattended-upgrades holds the dpkg lock for minutes: apt waits for it instead of failing
            # at once (apt >= 1.9, Ubuntu 20.04 and later: `Could not get lock` only after the wait).
            argv = [argv[0], "-o", f"DPkg::Lock::Timeout={APT_LOCK_WAIT_S}", *argv[1:]]
    else:
        argv = ["sh", "-c", _SUDO.sub(lambda match: match.group(1), step.render())]
    return argv if root == "/" else ["chroot", root, *argv]


def log_line(stream: TextIO, text: str) -> None:
    write_text(text + "\n", stream)  # command output is data: its controls shown escaped
    stream.flush()


@dataclass
class CommandRun:
    """Where and how a step's commands run: the root (`chroot ROOT` under one), the environment, the log and its
    label (`bootstrap`, `upgrade`), whether every command's output goes to the log, and what a failure's next step
    says to do again."""

    root: str
    environ: Mapping[str, str]
    log: TextIO
    label: str = "bootstrap"
    verbose: bool = False
    headers: str = ""
    again: str = ""


def run_commands(run: CommandRun, name: str, commands: Sequence[Command], records: list[dict[str, Any]]
                 ) -> Optional[StepFailure]:
    """Each command of step `name` in order, each recorded; the first failure is returned (its summary, next step
    and output's last lines in its record; with -v every command's output in the log)."""
    for command in commands:
        line = command.render()
        argv = command_argv(command, run.root)
        waits = f" (waiting up to {APT_LOCK_WAIT_S} s for the dpkg lock)" if "DPkg::Lock::Timeout" in " ".join(argv) \
            else ""
        log_line(run.log, f"{run.label}: {name}: running {line}{waits}")
        result = run_command(argv, timeout=COMMAND_TIMEOUT_S, env=dict(run.environ))
        if run.verbose:
            for text in output_lines(result)[-40:]:
                log_line(run.log, f"  | {text}")
        log_line(run.log, f"{run.label}: {name}: exit {result.returncode} after {result.duration_s:.1f} s")
        record: dict[str, Any] = {"name": name, "status": "ok" if result.ok else "failed", "command": line,
                                  "exit_code": result.returncode, "duration_s": round(result.duration_s, 3)}
        records.append(record)
        if not result.ok:
            failure = explain_failure(name, line, result, run.headers, run.again)
            record.update(next_step=failure.next_step, output_tail=list(failure.output_tail))
            return failure
    return None


def _run_step(step: Step, options: BootstrapOptions, outcome: BootstrapOutcome, log: TextIO, headers: str) -> bool:
    failure = run_commands(CommandRun(options.root, options.environ, log, verbose=options.verbose, headers=headers),
                           step.name, step.commands, outcome.records)
    if failure is not None:
        outcome.failed, outcome.next_step = failure.summary, failure.next_step
        return False
    return True


def apply_steps(options: BootstrapOptions, catalog: ReleaseCatalog, steps: list[Step], log: TextIO
                ) -> BootstrapOutcome:
    outcome = BootstrapOutcome(steps)
    headers = next((step.commands[0].render() for step in steps if step.name == "headers" and step.commands), "")
    for index, step in enumerate(steps):
        if step.name == "driver-reload":  # judged again on the host the installs left
            host = collect_host(RootFS(options.root), options.environ, {})
            wanted = catalog.entries(options.release, "aws-neuronx-dkms")
            step = steps[index] = reload_step(host.snapshot, wanted[0].version if wanted else "", False)
        if not step.needed:
            outcome.records.append({"name": step.name, "status": "unchanged", "command": "", "exit_code": None,
                                    "duration_s": 0.0})
            continue
        if not _run_step(step, options, outcome, log, headers):
            outcome.health = Health(STATE_UNHEALTHY, [f"bootstrap step {outcome.failed}"])
            return outcome
    return outcome


def judge(options: BootstrapOptions, catalog: ReleaseCatalog, outcome: BootstrapOutcome, log: TextIO) -> None:
    """The check of the result, and the canary where a device exists (not for an image)."""
    fs = RootFS(options.root)
    started = time.monotonic()
    venvs = [options.venv] if fs.is_dir(options.venv) else []
    report = run_check(CheckOptions(root=options.root, venvs=venvs, release=options.release,
                                    skip=IMAGE_SKIPS if options.image else (), environ=options.environ),
                       catalog=catalog)
    outcome.report, outcome.health = report, report.health
    outcome.records.append({"name": "check", "status": report.health.state, "command": "neurondoctor check",
                            "exit_code": report.exit_code(), "duration_s": round(time.monotonic() - started, 3)})
    snapshot = report.facts.host.snapshot
    if options.image or not fs.is_live or not snapshot.device_nodes or not venvs:
        return
    python = str(Path(options.venv) / "bin" / "python")
    argv = [sys.executable, "-m", "neurondoctor", "probe", "canary", "--python", python, "--json"]
    log_line(log, "bootstrap: canary: running " + " ".join(argv[1:]))
    done = subprocess.run(argv, capture_output=True, text=True, timeout=1800, env=dict(options.environ))
    outcome.records.append({"name": "canary", "status": "ok" if done.returncode == 0 else "failed",
                            "command": "neurondoctor probe canary", "exit_code": done.returncode,
                            "duration_s": round(time.monotonic() - started, 3)})
    if done.returncode not in (0, 4):
        reasons = [*outcome.health.reasons, f"the canary failed (exit {done.returncode})"]
        outcome.health = Health(STATE_UNHEALTHY, reasons)


def status_path(options: BootstrapOptions) -> Optional[Path]:
    if options.status_file:
        return Path(options.status_file)
    if not options.apply:
        return None  # a plan writes nothing unless a status file is named
    return Path(options.root.rstrip("/") + DEFAULT_STATUS_FILE) if options.root != "/" else Path(DEFAULT_STATUS_FILE)


def write_status(options: BootstrapOptions, outcome: BootstrapOutcome) -> Optional[Path]:
    path = status_path(options)
    if path is None:
        return None
    write_status_file(path, outcome.health.state, outcome.health.reasons, options.release, outcome.records,
                      make_directory=options.status_file is None, failed_step=outcome.failed,
                      next_step=outcome.next_step)
    return path


def run_bootstrap(options: BootstrapOptions, catalog: ReleaseCatalog, log: TextIO) -> BootstrapOutcome:
    if options.apply and os.geteuid() != 0:
        raise exit_codes.UserError("--apply installs OS packages and loads the driver: run it as root (sudo; "
                                   "cloud-init user-data runs as root). Without --apply it only plans.")
    validate_options(CheckOptions(root=options.root, release=options.release), catalog)
    steps = plan_steps(options, catalog)
    if options.apply:
        outcome = apply_steps(options, catalog, steps, log)
        if outcome.failed:
            return outcome
    else:
        outcome = BootstrapOutcome(steps)
    judge(options, catalog, outcome, log)
    return outcome
