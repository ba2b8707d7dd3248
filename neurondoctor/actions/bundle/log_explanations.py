"""`explained.json` in a support archive: what each collected log says broke, as `neurondoctor explain` reads it.

A support engineer opening the archive sees the compiler's, the DKMS build's and the kernel's verdicts first,
each with the member it comes from and the line it rests on, instead of searching megabytes of logs. It reads
only members already in the archive (redacted), so it adds no file read, no command and no secret.

Its time is bounded per log, by bytes: explain is linear in its text (neurondoctor/log_text.py), and it reads the
last EXPLAINED_BYTES of each log, so one log's explanation costs a bounded amount however the log was crafted
(scripts/bench_readers.py measures the worst). The bundle's time budget is looked at before each log: once it is
spent, the logs left are listed in `not_explained` with the reason, never explained past the budget.
"""

from __future__ import annotations

import time
from typing import Any

from neurondoctor import json_data
from neurondoctor.actions.bundle.collectors import COMPILE_LOG_BYTES, BundleContext, Member, Skipped
from neurondoctor.release_data.probe_data import load_compiler_fixes, load_error_signatures, load_op_support
from neurondoctor.rules.probes.error_explanation import explain_text

EXPLAINED_BYTES = COMPILE_LOG_BYTES  # a log's error is at its end: the last MiB, as much as a compile log keeps
BUDGET_SPENT = "the bundle's time budget was spent before this log"
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
    not_explained: list[dict[str, str]] = []
    for member in logs:
        if time.monotonic() > ctx.deadline:
            not_explained.append({"member": member.name, "why": BUDGET_SPENT})
            continue
        text = member.data[-EXPLAINED_BYTES:].decode("utf-8", errors="replace")
        explanation = explain_text(text, signatures, op_support, fixes)
        if explanation is not None:
            found.append({"member": member.name, **explanation.to_json()})
    document = {"schema": "neurondoctor.bundle-explained/1", "logs_read": len(logs) - len(not_explained),
                "explained": found, "not_explained": not_explained}
    return [Member("explained.json", (json_data.dumps(document, indent=1) + "\n").encode())]
