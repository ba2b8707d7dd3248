"""What `bootstrap` prints: the plan or what was applied, step by step with its commands, and the verdict; or one
JSON document (`neurondoctor.bootstrap/1`) with the same steps and the status file's path."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from neurondoctor.actions.bootstrap.bootstrap_run import BootstrapOptions, BootstrapOutcome

_MARKS = {True: "→", False: "✓"}


def _record(outcome: BootstrapOutcome, name: str) -> Optional[dict[str, Any]]:
    return next((record for record in reversed(outcome.records) if record["name"] == name), None)


def bootstrap_document(options: BootstrapOptions, outcome: BootstrapOutcome, status: Optional[Path]) -> dict[str, Any]:
    return {"schema": "neurondoctor.bootstrap/1", "release": options.release, "root": options.root,
            "image": options.image, "applied": options.apply, "failed_step": outcome.failed,
            "next_step": outcome.next_step,
            "steps": [{"name": step.name, "needed": step.needed, "why": step.why,
                       "commands": [command.render() for command in step.commands],
                       "result": _record(outcome, step.name)} for step in outcome.steps],
            "health": outcome.health.to_json(), "status_file": str(status) if status else None}


def render_bootstrap_text(options: BootstrapOptions, outcome: BootstrapOutcome, status: Optional[Path]) -> str:
    mode = "applied" if options.apply else "plan"
    lines = [f"neurondoctor bootstrap · Neuron {options.release} · {options.root} · {mode}"
             + (" · image" if options.image else ""), ""]
    width = max((len(step.name) for step in outcome.steps), default=0)
    for step in outcome.steps:
        record = _record(outcome, step.name)
        mark = "✗" if record and record["status"] == "failed" else "·" if step.deferred else _MARKS[step.needed]
        lines.append(f"  [{mark}] {step.name:<{width}}  {step.why}")
        lines += [f"        {command.render()}" for command in step.commands]
    needed = [step.name for step in outcome.steps if step.needed]
    lines.append("")
    if outcome.failed:
        lines.append(f"Stopped at {outcome.failed}")
        lines.append(f"Next: {outcome.next_step}")
    elif not needed:
        lines.append(f"Nothing to change: this host already matches Neuron {options.release}.")
    elif options.apply:
        lines.append(f"Applied: {', '.join(needed)}.")
    else:
        lines.append("Run again with --apply (as root) to make these changes.")
    lines.append(f"Health: {outcome.health.state}" + (f" · {outcome.health.reasons[0]}" if outcome.health.reasons
                                                       else ""))
    if status:
        lines.append(f"Status file: {status}")
    return "\n".join(lines) + "\n"
