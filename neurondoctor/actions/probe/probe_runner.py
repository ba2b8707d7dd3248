"""Runs a shipped probe script in the target interpreter with a timeout and reads its one JSON line; what every
probe shares: the default target interpreter and the verdict."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from neurondoctor import exit_codes, json_data
from neurondoctor.command_runner import run_command
from neurondoctor.report.health import Health, judge_health
from neurondoctor.rules.finding import Finding
from neurondoctor.run_trust import refusal_to_run

SCRIPTS = Path(__file__).with_name("scripts")


@dataclass
class ProbeOutcome:
    """The probe's JSON document, or why there is none (timeout, crash, no output)."""

    document: Optional[dict[str, Any]]
    failure: Optional[str]
    timed_out: bool
    duration_s: float


PROGRESS_PREFIX = "neurondoctor-progress: "  # a probe script's stderr line saying what it is doing


def run_probe(python: str, script: str, arguments: list[str], timeout: float,
              cwd: Optional[str] = None, env: Optional[dict[str, str]] = None,
              progress: Optional[Callable[[str], None]] = None) -> ProbeOutcome:
    """`python SCRIPT ARGS` (not `-I`: the user's model module must import as in their own runs); the script's
    progress lines go to `progress` as they come (importing torch, building the model, recording the step)."""

    refusal = refusal_to_run(python)
    if refusal:
        raise exit_codes.UserError(refusal)

    def on_line(line: str, shown: Callable[[str], None]) -> None:
        if line.startswith(PROGRESS_PREFIX):
            shown(line[len(PROGRESS_PREFIX):].strip())

    result = run_command([python, str(SCRIPTS / script), *arguments], timeout=timeout,
                         env=env if env is not None else dict(os.environ), cwd=cwd,
                         on_stderr_line=functools.partial(on_line, shown=progress) if progress is not None else None)
    if result.timed_out:
        return ProbeOutcome(None, f"did not finish within {timeout:g} s and was stopped", True, result.duration_s)
    for line in reversed(result.stdout.strip().splitlines()):
        try:
            document = json_data.loads(line)
        except ValueError:
            continue
        if isinstance(document, dict) and document.get("schema") == "neurondoctor.probe/1":
            return ProbeOutcome(document, None, False, result.duration_s)
    return ProbeOutcome(None, result.describe_failure(), False, result.duration_s)


def default_python(environ: Mapping[str, str]) -> str:
    """The active environment's interpreter, else the first Neuron venv (DLAMI, ~/aws_neuron_venv_*), else
    `python3`."""
    from neurondoctor.pyenv.discovery import default_interpreter

    return default_interpreter(environ) or "python3"


def probe_health(findings: list[Finding]) -> Health:
    """A probe's verdict: from its findings alone (a probe that could not run raised before it had any)."""
    return judge_health(findings, [])


def probe_document(outcome: ProbeOutcome, what: str) -> dict[str, Any]:
    """The probe's document; a probe that gave none is UserError (exit 3), one that could not run here Skipped."""
    if outcome.document is None:
        raise exit_codes.UserError(f"{what} {outcome.failure}", exit_codes.UNKNOWN)
    if outcome.document.get("status") == "skipped":
        message = str(outcome.document.get("message"))
        if outcome.document.get("stage") == "import":  # the probe ran in an environment without what it needs
            message += ("; next: name the environment that has it with --python PATH (`neurondoctor check` lists "
                        "the environments it found)")
        raise exit_codes.Skipped(message)
    return outcome.document
