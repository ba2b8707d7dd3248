"""One-line health verdicts for node health frameworks: Kubernetes node-problem-detector and Slurm/NHC.

Both read the health verdict (report/health.py) and never recount findings: `unknown` is never printed as OK.
npd: a custom-plugin monitor reads exit 0 (OK) / 1 (NonOK) / other (Unknown) and the first line of stdout, at most
80 bytes by default (node-problem-detector's custom plugin monitor documentation), so the line leads with the worst
finding's id. nhc: LBNL NHC and Slurm `HealthCheckProgram` scripts drain with a reason; every error and warning is
a `SEVERITY: neurondoctor: ID title` line, the first being the reason to drain with; an unknown verdict is
`UNKNOWN:` lines only (its findings too, as `UNKNOWN: … also found …`), which no drain script should read as a
failure to drain on, nor as a pass. The exit code is the
same as for every other format (docs/contracts.md §7).
"""

from __future__ import annotations

from neurondoctor.output_text import neutralize
from neurondoctor.report.health import STATE_UNHEALTHY, STATE_UNKNOWN
from neurondoctor.report.model import STATUS_SKIPPED, Report
from neurondoctor.report.status_lines import SEVERITY_ORDER
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding

NPD_MESSAGE_LIMIT = 80


def _ranked(report: Report) -> list[Finding]:
    return sorted((finding for finding in report.findings if finding.severity in (SEVERITY_ERROR, SEVERITY_WARNING)),
                  key=lambda finding: SEVERITY_ORDER[finding.severity])


def fit_bytes(line: str, limit: int) -> str:
    """The line cut to `limit` UTF-8 bytes with an ASCII `...` (NPD counts bytes, and may not split a character)."""
    encoded = line.encode("utf-8")
    if len(encoded) <= limit:
        return line
    return encoded[: max(0, limit - 3)].decode("utf-8", errors="ignore") + "..."


def render_npd(report: Report, limit: int = NPD_MESSAGE_LIMIT) -> str:
    health = report.health
    ranked = _ranked(report)
    if health.state == STATE_UNHEALTHY:
        errors = [finding for finding in ranked if finding.severity == SEVERITY_ERROR]
        more = len(errors) - 1
        line = f"{errors[0].id} {errors[0].title}" + (f" (+{more})" if more else "")
    elif health.state == STATE_UNKNOWN:
        line = f"neurondoctor could not check: {health.reasons[0] if health.reasons else 'unknown'}"
    else:
        line = f"Neuron stack OK ({len(ranked)} warning{'s' if len(ranked) != 1 else ''})"
    return fit_bytes(neutralize(line), limit) + "\n"


def render_nhc(report: Report) -> str:
    health = report.health
    if health.state == STATE_UNKNOWN:  # only UNKNOWN lines: a drain script must not read an `ERROR:` and drain
        return "\n".join(neutralize(line) for line in (
            *(f"UNKNOWN: neurondoctor: {reason}" for reason in health.reasons or ["could not judge this node"]),
            *(f"UNKNOWN: neurondoctor: also found {finding.severity} {finding.id} {finding.title}"
              for finding in _ranked(report)))) + "\n"
    lines = [f"{finding.severity.upper()}: neurondoctor: {finding.id} {finding.title}" for finding in _ranked(report)]
    if health.state == STATE_UNHEALTHY:
        lines += [f"UNKNOWN: neurondoctor: {reason}" for reason in health.reasons if reason.startswith("could not")]
    if not lines:
        ran = [check for check in report.checks if check.status != STATUS_SKIPPED]
        lines = [f"OK: neurondoctor: {len(ran)} checks passed"]
    return "\n".join(neutralize(line) for line in lines) + "\n"  # one line per result, whatever a title holds
