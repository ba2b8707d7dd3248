"""One-line health verdicts for node health frameworks: Kubernetes node-problem-detector and Slurm/NHC.

npd: a custom-plugin monitor reads exit 0 (OK) / 1 (NonOK) / other (Unknown) and the first line of stdout
(node-problem-detector docs/custom_plugin_monitor.md), so the line leads with the worst finding's id.
nhc: LBNL NHC and Slurm `HealthCheckProgram` scripts drain with a reason; every error and warning is a
`SEVERITY: neurondoctor: ID title` line, the first being the reason to drain with. The exit code is the
same as for every other format (ARCHITECTURE.md §7).
"""

from __future__ import annotations

from neurondoctor.report.model import STATUS_SKIPPED, Report
from neurondoctor.report.status_lines import SEVERITY_ORDER
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING

NPD_MESSAGE_LIMIT = 80


def _ranked(report: Report) -> list[tuple[str, str, str]]:
    findings = sorted((finding for finding in report.findings if finding.severity in (SEVERITY_ERROR,
                                                                                      SEVERITY_WARNING)),
                      key=lambda finding: SEVERITY_ORDER[finding.severity])
    return [(finding.severity, finding.id, finding.title) for finding in findings]


def render_npd(report: Report) -> str:
    ranked = _ranked(report)
    problems = [f"{problem.source}: {problem.message}" for problem in report.input_problems]
    if problems:
        line = f"neurondoctor could not judge: {problems[0]}"
    elif ranked and ranked[0][0] == SEVERITY_ERROR:
        more = len(ranked) - 1
        line = f"{ranked[0][1]} {ranked[0][2]}" + (f" (+{more})" if more else "")
    else:
        line = f"Neuron stack OK ({len(ranked)} warning{'s' if len(ranked) != 1 else ''})"
    if len(line) > NPD_MESSAGE_LIMIT:
        line = line[: NPD_MESSAGE_LIMIT - 1] + "…"
    return line + "\n"


def render_nhc(report: Report) -> str:
    lines = [f"ERROR: neurondoctor: {problem.source}: {problem.message}" for problem in report.input_problems]
    lines += [f"{severity.upper()}: neurondoctor: {finding_id} {title}" for severity, finding_id, title in
              _ranked(report)]
    if not lines:
        ran = [check for check in report.checks if check.status != STATUS_SKIPPED]
        lines = [f"OK: neurondoctor: {len(ran)} checks passed"]
    return "\n".join(lines) + "\n"
