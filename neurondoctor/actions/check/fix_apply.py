"""`check --fix`: apply the environments' fix plans on the live host (docs/contracts.md §7).

Only what runs in user space and was verified by the fix-execution tests is applied: pip in the environment the
check inspected (through its own interpreter, never a shell), that environment's or the user's pip configuration,
files of the environment's own import path, and `venv --upgrade` of the environment itself. Host packages,
modules and `/etc` are `bootstrap --apply`'s job; environment variables live in the user's shell. Nothing is
deleted: a file a plan removes is moved into a new backup folder beside it, and a pip configuration file is
copied to `pip.conf.neurondoctor-<UTC>` (never over an earlier backup) before pip edits it.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional

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


@dataclass
class EnvironmentFix:
    path: str
    findings: list[str]
    steps: list[FixStep]


def utc_stamp() -> str:
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())


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


def unused_name(path: Path, stamp: str) -> Path:
    """`<name>.neurondoctor-<stamp>`, or `…-2`, `…-3`: never an existing name."""
    candidate = path.with_name(f"{path.name}{BACKUP_SUFFIX}{stamp}")
    number = 2
    while candidate.exists() or candidate.is_symlink():
        candidate = path.with_name(f"{path.name}{BACKUP_SUFFIX}{stamp}-{number}")
        number += 1
    return candidate


def back_up(path: Path, stamp: str) -> Path:
    """Copy a file to a new backup name, created exclusively (a backup never replaces an earlier one)."""
    data = path.read_bytes()
    while True:
        target = unused_name(path, stamp)
        try:
            with open(target, "xb") as handle:
                handle.write(data)
            return target
        except FileExistsError:  # another run took the name between the check and the open
            continue


def move_aside(paths: Sequence[Path], stamp: str) -> Path:
    """Move what a plan removes into a new folder beside the first one (off every import path)."""
    folder = unused_name(paths[0].parent, stamp)
    folder.mkdir()
    for path in paths:
        if path.exists() or path.is_symlink():
            path.rename(unused_name(folder / path.name, "moved") if (folder / path.name).exists() else
                        folder / path.name)
    return folder


@dataclass
class StepResult:
    step: FixStep
    ok: bool
    message: str


def apply_step(step: FixStep, stamp: str, environ: Mapping[str, str],
               runner: Callable[..., CommandResult] = run_command) -> StepResult:
    if step.action == MOVE:
        try:
            folder = move_aside(step.moves, stamp)
        except OSError as error:
            return StepResult(step, False, f"could not move {step.moves[0]}: {error}")
        return StepResult(step, True, f"moved to {folder}")
    notes = []
    for edited in step.backup_files:
        try:
            notes.append(f"backed up {edited} to {back_up(edited, stamp)}")
        except OSError as error:
            return StepResult(step, False, f"could not back up {edited}, so did not edit it: {error}")
    result = runner(step.argv, timeout=PIP_TIMEOUT, env=dict(environ))
    if not result.ok:
        return StepResult(step, False, result.describe_failure())
    return StepResult(step, True, "; ".join(notes) or f"done in {result.duration_s:.1f} s")
