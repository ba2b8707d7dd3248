"""`check --fix`: apply the environments' fix plans on the live host (docs/contracts.md §7).

Only what runs in user space and was verified by the fix-execution tests is applied: pip in the environment the
check inspected (through its own interpreter, never a shell), that environment's or the user's pip configuration,
files of the environment's own import path, and `venv --upgrade` of the environment itself. Host packages,
modules and `/etc` are `bootstrap --apply`'s job; environment variables live in the user's shell. Nothing is
deleted: a file a plan removes is moved into a new backup folder beside it, and a pip configuration file is
copied to `pip.conf.neurondoctor-<UTC>` (never over an earlier backup) before pip edits it. The folders of both are
held open from before the question (actions/held_directories.py): a folder swapped for a link while it waits
changes nothing elsewhere.
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

from neurondoctor.actions.held_directories import (
    HeldDirectory,
    free_name,
    hold_folder_of,
    make_backup_folder,
    move_into,
)
from neurondoctor.command_runner import CommandResult, run_command
from neurondoctor.facts.python_env import PythonEnvironment
from neurondoctor.report.model import Report
from neurondoctor.rules.fix import Note, Step
from neurondoctor.rules.fix_plan import parse_pip_words
from neurondoctor.run_trust import refusal_to_run

PIP_TIMEOUT = 1800.0  # a torch download on a slow link; the deadline still holds
BACKUP_SUFFIX = ".neurondoctor-"
_VENV_PYTHON = re.compile(r"^python\d(\.\d+)?$")
RUN = "run"
MOVE = "move"
SKIP = "skip"


@dataclass
class FixStep:
    """One plan step (as printed) and what `--fix` does with it: run its words, move the files it removes, or leave
    it to the user."""

    line: str
    action: str
    why: str = ""
    argv: list[str] = field(default_factory=list)
    backup_files: list[Path] = field(default_factory=list)  # copied before the command edits them
    moves: list[Path] = field(default_factory=list)
    # The folders of `moves` and `backup_files` with the name in each, held from before the question (hold_step).
    held_moves: list[tuple[HeldDirectory, str]] = field(default_factory=list, repr=False)
    held_backups: list[tuple[HeldDirectory, str]] = field(default_factory=list, repr=False)
    hold_error: Optional[str] = None


@dataclass
class EnvironmentFix:
    path: str
    findings: list[str]
    steps: list[FixStep]


def _inside(path: str, folders: Sequence[str]) -> bool:
    """The path's parent (links not followed for the last part) lies in one of the folders."""
    parent = os.path.realpath(os.path.dirname(os.path.abspath(path)))
    return any(parent == os.path.realpath(folder) or parent.startswith(os.path.realpath(folder) + os.sep)
               for folder in folders)


def _pip_config_file(options: Sequence[str], env: PythonEnvironment,
                     environ: Mapping[str, str]) -> Optional[Path]:
    if "--site" in options:
        return Path(env.path) / "pip.conf"
    if "--user" in options:
        base = environ.get("XDG_CONFIG_HOME") or os.path.join(environ.get("HOME", "~"), ".config")
        return Path(os.path.expanduser(base)) / "pip" / "pip.conf"
    return None


def classify(step: Step, env: PythonEnvironment, environ: Mapping[str, str]) -> FixStep:
    """What `--fix` may do with one step of this environment's plan. It runs a command's own words as argv, with no
    shell: a step that needs one (operators, shell syntax) is left to the user."""
    line = step.render()
    if isinstance(step, Note):
        return FixStep(line, SKIP, "a note")
    first = step.segments[0][0]
    if first == "sudo":
        return FixStep(line, SKIP, "a host-level fix: run it yourself, or `neurondoctor bootstrap --apply`")
    if first in ("export", "unset"):
        return FixStep(line, SKIP, "an environment variable: set it in your shell or job script")
    words = step.argv
    if words is None:
        return FixStep(line, SKIP, "it needs a shell (operators or shell syntax): run it yourself")
    pip = parse_pip_words(words, env.interpreter)
    option_like = [argument for argument in pip.arguments if argument.startswith("-")] if pip else []
    if option_like:  # a name or requirement (data) that pip would read as an option, such as `--index-url=…`
        return FixStep(line, SKIP, f"{option_like[0]!r} would be read by pip as an option, not a package")
    if pip is not None and pip.verb in ("install", "uninstall"):  # `-m pip` or `uv pip` for this interpreter
        return FixStep(line, RUN, argv=words)
    if pip is not None and pip.verb == "config" and pip.prefix[0] != "uv":
        edited = _pip_config_file(pip.options, env, environ)
        if edited is None:
            return FixStep(line, SKIP, "edits the machine-wide pip configuration: bootstrap --apply's job")
        if edited.is_symlink() or (edited.exists() and not edited.is_file()):
            return FixStep(line, SKIP, f"{edited} is not a regular file: check it before editing")
        return FixStep(line, RUN, argv=words, backup_files=[edited] if edited.exists() else [])
    if words[:1] == ["rm"] and len(words) > 2 and words[1] in ("-rf", "-f", "-r"):
        folders = [env.path, *(site.path for site in env.site_dirs)]
        targets = [Path(target) for target in words[2:]]
        outside = [str(target) for target in targets if not _inside(str(target), folders)]
        if outside:
            return FixStep(line, SKIP, f"{outside[0]} is outside this environment's folders")
        return FixStep(line, MOVE, moves=targets)
    if (len(words) == 5 and _VENV_PYTHON.match(words[0]) and words[1:4] == ["-m", "venv", "--upgrade"]
            and os.path.realpath(words[4]) == os.path.realpath(env.path)):
        return FixStep(line, RUN, argv=words)
    return FixStep(line, SKIP, "not a step neurondoctor applies: run it yourself")


def active_environments(environ: Mapping[str, str]) -> list[str]:
    """The environments the shell has activated (`$VIRTUAL_ENV`, `$CONDA_PREFIX`), as real paths."""
    return [os.path.realpath(environ[name]) for name in ("VIRTUAL_ENV", "CONDA_PREFIX") if environ.get(name)]


def plan_fixes(report: Report, environ: Mapping[str, str], named: bool = True) -> list[EnvironmentFix]:
    """The steps for every inspected environment that has a plan. Unless the user named the environments
    (`--venv`, `--python`), only the activated one is acted on, never the ones discovered in other homes; and as
    root, nothing in an environment another user controls (its interpreter would run their code as root)."""
    by_path = {env.path: env for env in report.facts.environments}
    active = active_environments(environ)
    fixes = []
    for summary in report.environments:
        env = by_path.get(summary.path)
        if env is None or not summary.fix_plan:
            continue
        if not named and os.path.realpath(env.path) not in active:
            continue
        refusal = refusal_to_run(env.interpreter)
        steps = ([FixStep(step.render(), SKIP, refusal) for step in summary.fix_plan] if refusal else
                 [classify(step, env, environ) for step in summary.fix_plan])
        fixes.append(EnvironmentFix(summary.path, summary.fix_plan_findings, steps))
    return fixes


BACKUP_READ_LIMIT = 1 << 20  # a pip configuration file; pip_config reads 256 KiB of one
_READ = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
_CREATE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


def hold_step(step: FixStep) -> None:
    """Hold the folders of what the step moves or backs up, before the question: from then on each file is named
    relative to its folder's descriptor, never through its path again (actions/held_directories.py). A folder that
    cannot be held is recorded in `hold_error`, and the step fails when its turn comes."""
    if step.held_moves or step.held_backups or step.hold_error:
        return
    try:
        step.held_moves = [hold_folder_of(str(path)) for path in step.moves] if step.action == MOVE else []
        step.held_backups = [hold_folder_of(str(path)) for path in step.backup_files]
    except OSError as error:
        release_step(step)
        step.hold_error = f"{error.filename or (step.moves or step.backup_files)[0]}: {error.strerror or error}"


def release_step(step: FixStep) -> None:
    for folder, _ in (*step.held_moves, *step.held_backups):
        folder.close()
    step.held_moves, step.held_backups = [], []


def back_up(folder: HeldDirectory, name: str, stamp: str) -> str:
    """Copy a regular file (never through a link) to `<name>.neurondoctor-<stamp>` in the same folder, created
    exclusively (a backup never replaces an earlier one: `-2`, `-3` …), with the file's own permissions."""
    if not stat.S_ISREG(os.stat(name, dir_fd=folder.fd, follow_symlinks=False).st_mode):
        raise OSError(errno.EINVAL, "not a regular file", name)  # a device is never opened
    source = os.open(name, _READ, dir_fd=folder.fd)
    try:
        found = os.fstat(source)
        if not stat.S_ISREG(found.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", name)
        if found.st_size > BACKUP_READ_LIMIT:
            raise OSError(errno.EFBIG, f"larger than {BACKUP_READ_LIMIT >> 20} MiB: not a pip configuration", name)
        data = os.read(source, BACKUP_READ_LIMIT)
    finally:
        os.close(source)
    number = 1
    while True:
        target = f"{name}{BACKUP_SUFFIX}{stamp}" + (f"-{number}" if number > 1 else "")
        try:
            descriptor = os.open(target, _CREATE, stat.S_IMODE(found.st_mode) & 0o666, dir_fd=folder.fd)
        except FileExistsError:  # an earlier backup, or a planted name
            number += 1
            continue
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
        return f"{folder.path.rstrip('/')}/{target}"


def move_aside(held: Sequence[tuple[HeldDirectory, str]], stamp: str) -> str:
    """Move what a plan removes into a new folder beside the first one's folder (off every import path), through the
    held folders only; a name that is gone already is passed over."""
    with make_backup_folder(held[0][0], stamp) as backup:
        for folder, name in held:
            try:
                os.stat(name, dir_fd=folder.fd, follow_symlinks=False)
            except FileNotFoundError:
                continue
            move_into(folder, name, backup, free_name(backup, name))
        return backup.path


@dataclass
class StepResult:
    step: FixStep
    ok: bool
    message: str


def apply_step(step: FixStep, stamp: str, environ: Mapping[str, str],
               runner: Callable[..., CommandResult] = run_command) -> StepResult:
    """Apply one step through the folders `hold_step` held before the question (held now when nothing asked)."""
    hold_step(step)
    if step.hold_error:
        return StepResult(step, False, f"could not hold the folder of {step.hold_error}; nothing was changed")
    if step.action == MOVE:
        try:
            folder = move_aside(step.held_moves, stamp)
        except OSError as error:
            return StepResult(step, False, f"could not move {step.moves[0]}: {error.strerror or error}")
        return StepResult(step, True, f"moved to {folder}")
    notes = []
    for edited, (edited_folder, name) in zip(step.backup_files, step.held_backups):
        try:
            notes.append(f"backed up {edited} to {back_up(edited_folder, name, stamp)}")
        except OSError as error:
            return StepResult(step, False, f"could not back up {edited}, so did not edit it: "
                                           f"{error.strerror or error}")
    result = runner(step.argv, timeout=PIP_TIMEOUT, env=dict(environ))
    if not result.ok:
        return StepResult(step, False, result.describe_failure())
    return StepResult(step, True, "; ".join(notes) or f"done in {result.duration_s:.1f} s")
