"""What `upgrade` prints: the plan (or what was applied or rolled back) step by step with its commands, undo and
what cannot be undone; or one JSON document, `neurondoctor.upgrade/1` (docs/contracts.md)."""

from __future__ import annotations

from typing import Any, Optional

from neurondoctor.actions.upgrade.plan import UpgradeStep
from neurondoctor.actions.upgrade.upgrade_run import UpgradeOptions, UpgradeOutcome

SCHEMA = "neurondoctor.upgrade/1"


def _mode(options: UpgradeOptions) -> str:
    return "rollback" if options.rollback else "apply" if options.apply else "plan"


def _result(outcome: UpgradeOutcome, name: str) -> Optional[str]:
    statuses = [record.get("status") for record in outcome.records if record.get("name") == name]
    return "failed" if "failed" in statuses else statuses[-1] if statuses else None


def _step(step: UpgradeStep, outcome: UpgradeOutcome) -> dict[str, Any]:
    return {"id": step.id, "kind": step.kind, "command": [command.render() for command in step.commands],
            "why": step.why, "needs": list(step.needs), "undo": [command.render() for command in step.undo],
            "cannot_undo": step.undo_note or None, "judged_at_apply": step.judged_at_apply,
            "deferred": step.deferred or None, "result": _result(outcome, step.id)}


def _check(outcome: UpgradeOutcome) -> Optional[dict[str, Any]]:
    """What the closing check found: its exit code and each finding's id, severity and title (the full report is
    `neurondoctor check --json`)."""
    report = outcome.report
    if report is None:
        return None
    return {"release": report.target_release, "exit_code": report.exit_code(),
            "findings": [{"id": finding.id, "severity": finding.severity, "title": finding.title}
                         for finding in report.findings]}


def upgrade_document(options: UpgradeOptions, outcome: UpgradeOutcome) -> dict[str, Any]:
    plan = outcome.plan
    return {"schema": SCHEMA, "mode": _mode(options), "root": options.root, "from": plan.start.to_json(),
            "to": plan.to, "blocked": [{"reason": item.reason, "source": item.source} for item in plan.blocked],
            "steps": [_step(step, outcome) for step in plan.steps], "not_known": list(plan.not_known),
            "cannot_undo": list(plan.cannot_undo), "undone": list(outcome.undone),
            "failed_step": outcome.failed, "next_step": outcome.next_step,
            "health": outcome.health.to_json() if (options.apply or options.rollback) else None,
            "check": _check(outcome),
            "status_file": str(outcome.status) if outcome.status else None}


def render_upgrade_text(options: UpgradeOptions, outcome: UpgradeOutcome) -> str:
    plan = outcome.plan
    start = plan.start
    lines = [f"neurondoctor upgrade · Neuron {start.release or 'unknown'} → {plan.target} · {options.root} · "
             f"{_mode(options)}", ""]
    for item in plan.blocked:
        lines.append(f"  blocked: {item.reason} (source: {item.source})")
    for fact in plan.not_known:
        lines.append(f"  not known: {fact}")
    if plan.blocked or plan.not_known:
        lines.append("")
    if options.rollback:
        lines += [f"  undid {step}" for step in outcome.undone] or ["  nothing to undo"]
    for number, step in enumerate(plan.steps if not options.rollback else [], start=1):
        result = _result(outcome, step.id)
        mark = {"failed": "✗", "ok": "✓", "unchanged": "✓", "deferred": "·"}.get(result or "", "→")
        lines.append(f"  {number}. [{mark}] {step.id} ({step.kind})" + (f" after {', '.join(step.needs)}"
                                                                         if step.needs else ""))
        lines.append(f"       why: {step.why}")
        lines += [f"       $ {command.render()}" for command in step.commands]
        lines += [f"       undo: {command.render()}" for command in step.undo]
        if step.deferred:
            lines.append(f"       by hand: {step.deferred}")
    if plan.cannot_undo and not options.rollback:
        lines += ["", "Cannot be undone:"] + [f"  - {note}" for note in plan.cannot_undo]
    lines.append("")
    if outcome.failed:
        lines += [f"Stopped at {outcome.failed}", f"Next: {outcome.next_step}"]
    elif options.rollback:
        lines.append(f"Rolled back to Neuron {start.release or 'the previous versions'}.")
    elif not plan.changes and not plan.blocked:
        lines.append(f"Nothing to change: this host already matches Neuron {plan.target}.")
    elif options.apply:
        lines.append(f"Applied: {', '.join(step.id for step in plan.steps)}.")
    elif not plan.blocked:
        lines.append("Run again with --apply (as root) to make these changes; --rollback undoes them after.")
    if options.apply or options.rollback:
        lines.append(f"Health: {outcome.health.state}" + (f" · {outcome.health.reasons[0]}"
                                                           if outcome.health.reasons else ""))
    if outcome.status:
        lines.append(f"Status file: {outcome.status}")
    return "\n".join(lines) + "\n"
