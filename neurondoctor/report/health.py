"""The health verdict (docs/contracts.md §7 ◆): one function turns a run's results into ok, degraded, unhealthy or
unknown, and everything that acts on a run (exit codes, the verdict line, nhc/npd/prometheus, Slurm, status files,
fleet summaries) reads it instead of recounting findings.

`unknown` means nothing proves an error but something needed could not be checked (a crashed check, a collector
that could not read what a check needs, unusable input): it is never healthy. An error found anyway outranks it,
because a node with a proven error is unhealthy whatever else is unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from neurondoctor import exit_codes
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding

STATE_OK = "ok"
STATE_DEGRADED = "degraded"
STATE_UNHEALTHY = "unhealthy"
STATE_UNKNOWN = "unknown"
# The order of Prometheus' neurondoctor_health_state and of severity (worst last).
STATES = (STATE_OK, STATE_DEGRADED, STATE_UNHEALTHY, STATE_UNKNOWN)


@dataclass(frozen=True)
class Health:
    """The verdict and, for anything but ok, why: finding ids with titles, or what could not be checked."""

    state: str
    reasons: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {"state": self.state, "reasons": list(self.reasons)}


def _finding_reason(finding: Finding) -> str:
    return f"{finding.id} {finding.title}"


def judge_health(findings: Sequence[Finding], unchecked: Sequence[str]) -> Health:
    """The verdict from the findings that came out and the things that could not be checked (crashed checks,
    collector failures, input problems, each a one-line reason)."""
    errors = [_finding_reason(finding) for finding in findings if finding.severity == SEVERITY_ERROR]
    if errors:
        return Health(STATE_UNHEALTHY, errors + [f"could not check: {reason}" for reason in unchecked])
    if unchecked:
        return Health(STATE_UNKNOWN, list(unchecked))
    warnings = [_finding_reason(finding) for finding in findings if finding.severity == SEVERITY_WARNING]
    if warnings:
        return Health(STATE_DEGRADED, warnings)
    return Health(STATE_OK, [])


def health_exit_code(health: Health, strict: bool = False) -> int:
    """ok 0, degraded 0 (1 with --strict), unhealthy 1, unknown 3."""
    if health.state == STATE_UNHEALTHY or (strict and health.state == STATE_DEGRADED):
        return exit_codes.FINDINGS
    if health.state == STATE_UNKNOWN:
        return exit_codes.UNKNOWN
    return exit_codes.OK
