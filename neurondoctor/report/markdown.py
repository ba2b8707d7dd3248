"""The Markdown report, for pasting into a support ticket or a GitHub issue."""

from __future__ import annotations

import re

from neurondoctor.output_text import markdown_data, markdown_prose, neutralize
from neurondoctor.report.model import Report
from neurondoctor.report.status_lines import (
    LISTED_SHOWN,
    SEVERITY_ORDER,
    area_line,
    combined_plans,
    environment_line,
    host_line,
    listed_line,
    node_line,
    release_line,
    timed_out_lines,
    verdict_line,
)
from neurondoctor.rules.python_stack.package_index import placeholder_words


def _code_block(lines: list[str]) -> list[str]:
    """A fenced `sh` block whose fence is longer than any backtick run inside, each line neutralised."""
    shown = [neutralize(line) for line in lines]
    longest = max((len(run) for line in shown for run in re.findall("`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence + "sh", *shown, fence]


def render_markdown(report: Report) -> str:
    """The report for a ticket. Every field from the host is escaped (`markdown_data`, `markdown_prose`): a path, an
    OS name or a title can forge no heading, link, table cell or HTML."""
    snapshot = report.facts.host.snapshot
    lines = [
        f"## neurondoctor {report.tool_version} report",
        "",
        f"- generated: {report.generated_at}",
        f"- root: {markdown_data(report.root)}",
        f"- instance type: {markdown_data(report.facts.host.instance_type or 'unknown')}",
        f"- newest known Neuron release: {report.latest_release or 'unknown'}",
        f"- verdict: **{report.health.state}**",
    ]
    if report.target_release:
        lines.append(f"- target release: {report.target_release}")
    node = node_line(report)
    if node:
        lines.append(f"- Node: {markdown_prose(node)}")
    host = host_line(report)
    if host:
        lines.append(f"- Host: {markdown_prose(host)}")
    lines.append(f"- OS: {markdown_data(snapshot.os.pretty_name or 'unknown')}, kernel "
                 f"{markdown_data(snapshot.kernel or 'unknown')}")
    for env in report.environments:
        lines.append(f"- Python: {markdown_prose(environment_line(env, report.latest_release))}")
    listed = listed_line(report.facts.listed_environments, report.facts.environments_cut_at)
    if listed:
        lines.append(f"- Python: {markdown_prose(listed)}: " + ", ".join(
            markdown_data(item.path) for item in report.facts.listed_environments[:LISTED_SHOWN]))
    releases = release_line(report)
    if releases:
        lines.append(f"- Release: {markdown_prose(releases)}")
    for problem in report.input_problems:
        lines.append(f"- **input error**: {markdown_data(problem.source)}: {markdown_prose(problem.message)}")
    lines += [f"- **{markdown_prose(line)}**" for line in timed_out_lines(report)]
    lines += ["", "| area | status | summary |", "|---|---|---|"]
    for check in report.checks:
        # the JSON's word for the area (`checks[].status`), so a ticket and a script read the same verdict
        lines.append(f"| {check.title} | {check.status} | {markdown_prose(area_line(check))} |")
    findings = sorted(report.findings, key=lambda finding: SEVERITY_ORDER[finding.severity])
    if findings:
        lines += ["", "### Findings"]
    for finding in findings:
        lines += ["", f"**{finding.severity.upper()} {finding.id}** ({finding.category}): "
                      f"{markdown_prose(finding.title)}"]
        if finding.detail:
            lines += ["", markdown_prose(finding.detail)]
        if finding.fix:
            lines += ["", *_code_block(finding.fix_lines)]
        if finding.page:
            lines += ["", f"More: `neurondoctor explain {finding.id}` ({finding.page})"]
    for heading, plan in combined_plans(report):
        lines += ["", f"**{markdown_prose(heading)}**", "", *_code_block(plan.lines())]
    lines += ["", "### Neuron and torch packages", ""]
    for env in report.environments:
        packages = ", ".join(f"{name} {version}" for name, version in env.neuron_packages.items())
        placeholders = f"{'; ' if packages else ''}{placeholder_words(env.placeholders)}" if env.placeholders else ""
        lines.append(f"- {markdown_data(env.path)}: " + markdown_data((packages + placeholders) or "none")
                     + (f"; torch {markdown_data(env.torch)}" if env.torch else ""))
    lines += ["", verdict_line(report), ""]
    return "\n".join(lines)
