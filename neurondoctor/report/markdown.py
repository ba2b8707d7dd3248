"""The Markdown report, for pasting into a support ticket or a GitHub issue."""

from __future__ import annotations

from neurondoctor.report.model import Report
from neurondoctor.report.status_lines import (
    SEVERITY_ORDER,
    area_line,
    combined_plans,
    environment_line,
    host_line,
    release_line,
    verdict_line,
)
from neurondoctor.rules.pip_index_rules import placeholder_words

_STATUS_WORD = {"ok": "OK", "info": "OK", "warning": "WARNING", "error": "ERROR", "crashed": "CRASHED",
                "unknown": "UNKNOWN", "skipped": "n/a"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(report: Report) -> str:
    lines = [
        f"## neurondoctor {report.tool_version} report",
        "",
        f"- generated: {report.generated_at}",
        f"- root: `{report.root}`",
        f"- instance type: {report.facts.host.instance_type or 'unknown'}",
        f"- newest known Neuron release: {report.latest_release or 'unknown'}",
        f"- verdict: **{report.health.state}**",
    ]
    if report.target_release:
        lines.append(f"- target release: {report.target_release}")
    host = host_line(report)
    if host:
        lines.append(f"- Host: {host}")
    lines.append(f"- OS: {report.facts.host.snapshot.os.pretty_name or 'unknown'}, kernel "
                 f"{report.facts.host.snapshot.kernel or 'unknown'}")
    for env in report.environments:
        lines.append(f"- Python: `{environment_line(env, report.latest_release)}`")
    releases = release_line(report)
    if releases:
        lines.append(f"- Release: {releases}")
    for problem in report.input_problems:
        lines.append(f"- **input error**: `{problem.source}`: {problem.message}")
    lines += ["", "| area | status | summary |", "|---|---|---|"]
    for check in report.checks:
        lines.append(f"| {check.title} | {_STATUS_WORD[check.status]} | {_cell(area_line(check))} |")
    findings = sorted(report.findings, key=lambda finding: SEVERITY_ORDER[finding.severity])
    if findings:
        lines += ["", "### Findings"]
    for finding in findings:
        lines += ["", f"**{finding.severity.upper()} {finding.id}** ({finding.category}): {finding.title}"]
        if finding.detail:
            lines += ["", finding.detail]
        if finding.fix:
            lines += ["", "```sh", *finding.fix, "```"]
    for heading, plan in combined_plans(report):
        lines += ["", f"**{heading}**", "", "```sh", *plan, "```"]
    lines += ["", "### Neuron and torch packages", ""]
    for env in report.environments:
        packages = ", ".join(f"{name} {version}" for name, version in env.neuron_packages.items())
        placeholders = f"{'; ' if packages else ''}{placeholder_words(env.placeholders)}" if env.placeholders else ""
        lines.append(f"- `{env.path}`: " + ((packages + placeholders) or "none")
                     + (f"; torch {env.torch}" if env.torch else ""))
    lines += ["", verdict_line(report), ""]
    return "\n".join(lines)
