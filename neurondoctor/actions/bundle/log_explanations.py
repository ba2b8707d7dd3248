"""`explained.json` in a support archive: what each collected log says broke, as `neurondoctor explain` reads it.

A support engineer opening the archive sees the compiler's, the DKMS build's and the kernel's verdicts first,
each with the member it comes from and the line it rests on, instead of searching megabytes of logs. It reads
only members already in the archive (already cut to their last MiB and redacted), so it adds no file read, no
command and no secret; explain is linear in the text, and the step stops at the bundle's time budget.
"""

from __future__ import annotations

import time
from typing import Any

from neurondoctor import json_data
from neurondoctor.actions.bundle.collectors import BundleContext, Member, Skipped
from neurondoctor.release_data.probe_data import load_compiler_fixes, load_error_signatures, load_op_support
from neurondoctor.rules.probes.error_explanation import explain_text

# The members that are logs: compiler logs, the DKMS build log, the kernel's and the journal's Neuron lines.
_LOG_PREFIXES = ("compile-logs/", "commands/dmesg-neuron", "commands/journalctl-k-neuron")
_LOG_SUFFIXES = ("/make.log", "/kern.log", "/syslog", "/messages")


def _is_log(name: str) -> bool:
    return name.startswith(_LOG_PREFIXES) or name.endswith(_LOG_SUFFIXES)


def explained_logs(ctx: BundleContext, members: list[Member]) -> list[Member]:
    """One `explained.json` member listing each recognised log; Skipped when no member is a log."""
    logs = [member for member in members if _is_log(member.name)]
    if not logs:
        raise Skipped("no log was collected")
    signatures, op_support, fixes = load_error_signatures(), load_op_support(), load_compiler_fixes()
    found: list[dict[str, Any]] = []
    for member in logs:
        if time.monotonic() > ctx.deadline:
            break
        explanation = explain_text(member.data.decode("utf-8", errors="replace"), signatures, op_support, fixes)
        if explanation is not None:
            found.append({"member": member.name, **explanation.to_json()})
    document = {"schema": "neurondoctor.bundle-explained/1", "logs_read": len(logs), "explained": found}
    return [Member("explained.json", (json_data.dumps(document, indent=1) + "\n").encode())]
