"""`check --fix [--yes]`: show the plans, ask, apply, check again.

What may be applied and how is `actions/check/fix_apply.py`; this is the conversation: the plan goes to stderr (stdout
keeps exactly the one report of the check after the fixes, `--json` included), a terminal is asked, a pipe or a
CI job needs `--yes`, and the exit code is the re-check's.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Callable, Optional, TextIO

from neurondoctor import exit_codes
from neurondoctor.actions.check.check_run import CheckOptions, run_check
from neurondoctor.actions.check.fix_apply import (
    MOVE,
    RUN,
    SKIP,
    EnvironmentFix,
    FixStep,
    apply_step,
    hold_step,
    plan_fixes,
    release_step,
)
from neurondoctor.output_text import field_text, write_text
from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.report.model import Report
from neurondoctor.rules.fix import aside_stamp


def refuse_unless_live(root: str) -> None:
    if os.path.realpath(root) != "/":
        raise exit_codes.UserError(f"--fix applies fixes on the live host only, not under --root {root}: "
                                   "print the plan with `neurondoctor check --root DIR` and run it there")


def _plan_lines(fixes: list[EnvironmentFix]) -> list[str]:
    """Each environment's plan; its path, steps and reasons are one field each (`field_text`)."""
    lines = []
    for fix in fixes:
        lines.append(f"{field_text(fix.path)} ({', '.join(dict.fromkeys(fix.findings))}):")
        for number, step in enumerate(fix.steps, 1):
            what = {RUN: "", MOVE: "  [moves the files into a backup folder instead]"}.get(
                step.action, f"  [not applied: {field_text(step.why)}]")
            lines.append(f"  {number:>2}. {field_text(step.line)}{what}")
    return lines


def _not_covered(report: Report, fixes: list[EnvironmentFix]) -> list[str]:
    """Findings with fixes that no environment plan carries: host-level and environment-variable ones."""
    covered = {finding_id for fix in fixes for finding_id in fix.findings}
    left = sorted({finding.id for finding in report.findings if finding.fix and finding.id not in covered})
    return [f"Not applied by --fix (their fix lines are in the report): {', '.join(left)}"] if left else []


def ask(stream: TextIO, question: str, reader: Callable[[], str]) -> bool:
    """A yes/no question at the terminal; the question may name paths from the host, so it is written as data."""
    write_text(question, stream)
    stream.flush()
    try:
        return reader().strip().lower() in ("y", "yes")
    except EOFError:
        return False


def fix_then_recheck(options: CheckOptions, catalog: ReleaseCatalog, yes: bool,
                     environ: Optional[Mapping[str, str]] = None,
                     reader: Callable[[], str] = input, interactive: Optional[bool] = None) -> Report:
    """Check, show the plan, apply the approved steps, and return the check after them."""
    refuse_unless_live(options.root)
    interactive = sys.stdin.isatty() if interactive is None else interactive
    if not yes and not interactive:
        raise exit_codes.UserError("--fix without a terminal needs --yes (it would apply the plan unasked)")
    environ = dict(os.environ) if environ is None else environ
    err = sys.stderr
    report = run_check(options, catalog=catalog)
    fixes = plan_fixes(report, environ, named=bool(options.venvs or options.pythons))
    applicable = [step for fix in fixes for step in fix.steps if step.action != SKIP]
    for line in [*_plan_lines(fixes), *_not_covered(report, fixes)]:
        write_text(line + "\n", err)
    if not applicable:
        err.write("--fix: nothing it can apply in the environments it inspected\n")
        return report
    try:
        if not _ask_then_apply(fixes, applicable, yes, reader, environ, err):
            return report
    finally:
        for step in applicable:
            release_step(step)
    err.write("--fix: checking again\n")
    return run_check(options, catalog=catalog)


def _ask_then_apply(fixes: list[EnvironmentFix], applicable: list[FixStep], yes: bool, reader: Callable[[], str],
                    environ: Mapping[str, str], err: TextIO) -> bool:
    """Hold what the steps move or back up, ask, then apply; False when not confirmed. Nothing is resolved through
    its path after the question (a step whose folder could not be held fails alone, when its turn comes)."""
    for step in applicable:
        hold_step(step)
    if not yes and not ask(err, f"Apply {len(applicable)} step(s)? [y/N] ", reader):
        err.write("--fix: nothing changed\n")
        return False
    stamp = aside_stamp()
    for fix in fixes:
        for number, step in enumerate(fix.steps, 1):
            if step.action == SKIP:
                continue
            result = apply_step(step, stamp, environ)
            write_text(f"  {'ok' if result.ok else 'FAILED'} {field_text(fix.path)} step {number}: "
                       f"{field_text(result.message)}\n", err)
            if not result.ok:  # the later steps build on this one
                write_text(f"--fix: stopped {field_text(fix.path)} at step {number}; its other steps were not run\n",
                           err)
                break
    return True
