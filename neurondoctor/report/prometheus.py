"""The health verdict as a node_exporter textfile (Prometheus text exposition format 0.0.4), for the textfile
collector: `neurondoctor_health_state` (0 ok, 1 degraded, 2 unhealthy, 3 unknown: report/health.py's STATES
order), findings by severity and category, how long the check took, and the detected releases as an info metric.
Pure: a report in, the text out; the caller writes it atomically (node_exporter must never read half a file).
"""

from __future__ import annotations

from collections import Counter

from neurondoctor.output_text import neutralize
from neurondoctor.report.health import STATES
from neurondoctor.report.model import Report
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_INFO, SEVERITY_WARNING


def _label(value: str) -> str:
    """A label value escaped as the format requires (backslash, double quote, newline), after the output boundary
    has shown controls and undecodable bytes escaped."""
    return neutralize(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def render_prometheus(report: Report) -> str:
    lines = [
        "# HELP neurondoctor_health_state The node's Neuron health verdict: 0 ok, 1 degraded, 2 unhealthy, 3 unknown.",
        "# TYPE neurondoctor_health_state gauge",
        f"neurondoctor_health_state {STATES.index(report.health.state)}",
        "# HELP neurondoctor_findings Findings of the last check by severity and category.",
        "# TYPE neurondoctor_findings gauge",
    ]
    counts = Counter((finding.severity, finding.category) for finding in report.findings)
    for severity in (SEVERITY_ERROR, SEVERITY_WARNING, SEVERITY_INFO):
        for (seen, category), count in sorted(counts.items()):
            if seen == severity:
                lines.append(f'neurondoctor_findings{{severity="{severity}",category="{_label(category)}"}} {count}')
    lines += [
        "# HELP neurondoctor_check_duration_seconds How long the last check took.",
        "# TYPE neurondoctor_check_duration_seconds gauge",
        f"neurondoctor_check_duration_seconds {report.duration_ms / 1000:.3f}",
        "# HELP neurondoctor_release_info The Neuron release of the host packages and of each environment.",
        "# TYPE neurondoctor_release_info gauge",
    ]
    host = _label(report.host_release or "")
    labels = [(_label(env.release or ""), _label(env.path)) for env in report.environments] or [("", "")]
    for venv, path in labels:
        lines.append(f'neurondoctor_release_info{{host="{host}",venv="{venv}",path="{path}"}} 1')
    return "\n".join(lines) + "\n"
