"""The terminal report: a header, one line per environment, one status line per area, hints with fixes.

Modelled on flutter doctor (STYLE.md): `[✓] [!] [✗]` boxes, the fix command indented under its finding,
`-v` for facts and per-check timings. rich is imported here only, so `--json` never pays for it.
"""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.markup import escape

from neurondoctor.report.model import (
    STATUS_CRASHED,
    STATUS_ERROR,
    STATUS_INFO,
    STATUS_OK,
    STATUS_SKIPPED,
    STATUS_WARNING,
    Report,
)
from neurondoctor.report.status_lines import (
    SEVERITY_ORDER,
    area_line,
    environment_line,
    host_line,
    release_line,
    verdict_line,
)
from neurondoctor.rules.finding import Finding

BOXES = {
    STATUS_OK: "[green][✓][/green]",
    STATUS_INFO: "[green][✓][/green]",
    STATUS_WARNING: "[yellow][!][/yellow]",
    STATUS_ERROR: "[red][✗][/red]",
    STATUS_CRASHED: "[magenta][☠][/magenta]",
    STATUS_SKIPPED: "[dim][–][/dim]",
}
MARKS = {"error": "[red]✗[/red]", "warning": "[yellow]![/yellow]", "info": "[blue]•[/blue]"}
AREA_WIDTH = 20


def _finding_lines(finding: Finding, verbose: bool) -> list[str]:
    lines = [f"    {MARKS[finding.severity]} [bold]{finding.id}[/bold] {escape(finding.title)}"]
    if finding.detail:
        lines.append(f"      {escape(finding.detail)}")
    for index, command in enumerate(finding.fix):
        label = "Fix: " if index == 0 else "     "
        lines.append(f"      {label}[cyan]{escape(command)}[/cyan]")
    if verbose and finding.evidence:
        for key, value in finding.evidence.items():
            lines.append(f"      [dim]{escape(str(key))}: {escape(str(value))}[/dim]")
    return lines


def _fact_lines(report: Report) -> list[str]:
    lines = ["", "[bold]Facts[/bold]"]
    host = report.facts.host
    lines.append(f"  instance type: {escape(str(host.instance_type or 'unknown'))}")
    for env in report.facts.environments:
        lines.append(f"  {escape(env.path)} ({env.mode}, interpreter {escape(env.interpreter or '?')})")
        for site in env.site_dirs:
            state = f", {site.error}" if site.error else ""
            lines.append(f"    {site.role}: {escape(site.path)} ({len(site.distributions)} distributions{state})")
        for source in env.pip_config:
            urls = ([f"index-url {source.index_url}"] if source.index_url else []) + [
                f"extra-index-url {url}" for url in source.extra_index_urls]
            lines.append(f"    pip config {escape(source.origin)}: {escape(', '.join(urls) or '(no index settings)')}")
    timings = ", ".join(f"{key} {value:.0f} ms" for key, value in report.collector_timings_ms.items())
    lines.append(f"  collectors: {escape(timings)}")
    return lines


def render_terminal(report: Report, stream: TextIO, verbose: bool = False, color: bool | None = None) -> None:
    console = Console(file=stream, highlight=False, soft_wrap=True, no_color=color is False,
                      force_terminal=color if color else None)
    instance = report.facts.host.instance_type or "instance type unknown"
    root = "" if report.root == "/" else f" · root {report.root}"
    console.print(f"[bold]neurondoctor {report.tool_version}[/bold] · {escape(instance)}{escape(root)} · "
                  f"{report.duration_ms / 1000:.2f} s")
    for problem in report.input_problems:
        console.print(f"[red]error:[/red] {escape(problem.source)}: {escape(problem.message)}")
    for message in report.internal_problems:
        console.print(f"[red]internal error:[/red] {escape(message)}")
    console.print()
    host = host_line(report)
    if host:
        console.print(f"Host     {escape(host)}")
    for env in report.environments:
        console.print(f"Python   {escape(environment_line(env, report.latest_release))}")
    releases = release_line(report)
    if releases:
        console.print(f"Release  {escape(releases)}")
    if report.target_release:
        console.print(f"Target   Neuron {escape(report.target_release)} (--release)")
    console.print()
    for check in report.checks:
        if check.status == STATUS_SKIPPED and check.id != "hardware" and not verbose:
            continue  # a machine without Neuron gets one hardware line, not a wall of n/a
        timing = f" [dim][{check.duration_ms:.0f} ms][/dim]" if verbose else ""
        console.print(f"{BOXES[check.status]} {check.title:<{AREA_WIDTH}} {escape(area_line(report, check))}{timing}")
        for finding in sorted(check.findings, key=lambda item: SEVERITY_ORDER[item.severity]):
            for line in _finding_lines(finding, verbose):
                console.print(line)
    if verbose:
        for line in _fact_lines(report):
            console.print(line)
    console.print()
    hints = "" if verbose else " Full facts: neurondoctor check -v ·"
    console.print(f"{verdict_line(report)}{hints} for a ticket: neurondoctor check --format markdown")
