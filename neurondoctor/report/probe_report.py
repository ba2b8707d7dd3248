"""A probe's report (`probe ops`, `probe canary`, `probe perf`, `probe shapes`): its findings, its verdict and the
probe's own data.

Apart from report/model.py, which every `check` imports: only the probe commands make one.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from neurondoctor import __version__
from neurondoctor.report.health import STATE_UNKNOWN, Health, health_exit_code
from neurondoctor.rules.finding import Finding


@dataclass
class ProbeReport:
    """One probe's result (`probe ops`, `probe canary`): its findings, its verdict, and the probe's own data."""

    kind: str
    tool_version: str
    generated_at: str
    python: str
    findings: list[Finding]
    health: Health
    duration_ms: float
    details: dict[str, Any] = field(default_factory=dict)

    def exit_code(self) -> int:
        return health_exit_code(self.health)


def new_probe_report(kind: str, python: str, findings: list[Finding], health: Health, duration_ms: float,
                     details: dict[str, Any]) -> ProbeReport:
    """A probe's report, stamped with this version and the time now (every probe command builds its own this way)."""
    return ProbeReport(kind=kind, tool_version=__version__,
                       generated_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), python=python,
                       findings=findings, health=health, duration_ms=duration_ms, details=details)


def failed_probe_report(kind: str, python: str, label: str, message: str) -> ProbeReport:
    """The one `--json` document of a probe that could not give its result (bad model spec, the step raised, no
    torch-xla): its verdict is unknown (never healthy), with the one-line reason the terminal shows on stderr."""
    return new_probe_report(kind, python, [], Health(STATE_UNKNOWN, [message]), 0.0,
                            {"status": label, "message": message})
