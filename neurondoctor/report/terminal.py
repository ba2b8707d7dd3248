"""The terminal report: a header, one line per environment, one status line per area, hints with fixes.

Modelled on flutter doctor: `[✓] [!] [✗]` boxes (`[?]` could not check, `[☠]` crashed), the fix
command indented under its finding, `-v` for facts and per-check timings. Text is laid out as plain lines first
(text_layout: wrapped to the terminal with hanging indents, commands kept copy-pasteable) and styled after.
rich is imported here only, so `--json` never pays for it.
"""

from __future__ import annotations

from typing import Optional, TextIO

from rich.markup import escape

from neurondoctor.color_choice import console_options
from neurondoctor.output_text import ascii_forms, needs_ascii, printable
from neurondoctor.redaction import redact_secrets
from neurondoctor.report.model import (
    STATUS_CRASHED,
    STATUS_ERROR,
    STATUS_INFO,
    STATUS_OK,
    STATUS_SKIPPED,
    STATUS_UNKNOWN,
    STATUS_WARNING,
    CheckResult,
    Report,
)
from neurondoctor.report.status_lines import (
    LISTED_SHOWN,
    SEVERITY_ORDER,
    apply_hint,
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
from neurondoctor.report.terminal_size import console as terminal_console
from neurondoctor.report.terminal_size import wrap_width
from neurondoctor.report.text_layout import wrap_command, wrap_words
from neurondoctor.rules.finding import Finding

BOXES = {
    STATUS_OK: ("[✓]", "green"),
    STATUS_INFO: ("[✓]", "green"),
    STATUS_WARNING: ("[!]", "yellow"),
    STATUS_ERROR: ("[✗]", "red"),
    STATUS_UNKNOWN: ("[?]", "magenta"),
    STATUS_CRASHED: ("[☠]", "magenta"),
    STATUS_SKIPPED: ("[–]", "dim"),
}
MARKS = {"error": ("✗", "red"), "warning": ("!", "yellow"), "info": ("•", "blue")}
AREA_WIDTH = 20
LABEL_WIDTH = 9


def _styled(style: str, text: str) -> str:
    return f"[{style}]{escape(text)}[/{style}]"


def _box(status: str, ascii_only: bool) -> str:
    box = BOXES[status][0]
    return ascii_forms(box) if ascii_only else box  # before markup: `[ok]` would otherwise read as a style tag


def _area_lines(check: CheckResult, width: Optional[int], verbose: bool, ascii_only: bool,
                box_width: int = 3) -> list[str]:
    """The area's status line; `box_width` pads the box so that the titles line up whatever the boxes' ASCII
    forms are (`[ok]`, `[x]`, `[crash]`)."""
    box, style = _box(check.status, ascii_only), BOXES[check.status][1]
    first = f"{box:<{box_width}} {check.title:<{AREA_WIDTH}} "
    timing = f" [{check.duration_ms:.0f} ms]" if verbose else ""
    lines = wrap_words(area_line(check) + timing, width, first, " " * len(first))
    return [_styled(style, box) + escape(lines[0][len(box):])] + [escape(line) for line in lines[1:]]


def _finding_lines(finding: Finding, width: Optional[int], verbose: bool) -> list[str]:
    mark, style = MARKS[finding.severity]
    head = wrap_words(f"{finding.id} {finding.title}", width, f"    {mark} ", "      ")
    lines = [f"    {_styled(style, mark)} [bold]{escape(finding.id)}[/bold]{escape(head[0][6 + len(finding.id):])}"]
    lines += [escape(line) for line in head[1:]]
    if finding.detail:
        lines += [escape(line) for line in wrap_words(finding.detail, width, "      ", "      ")]
    for index, command in enumerate(finding.fix):
        label = "Fix: " if index == 0 else "     "
        lines += [_styled("cyan", line) if number else escape(line[:11]) + _styled("cyan", line[11:])
                  for number, line in enumerate(wrap_command(command, width, f"      {label}", " " * 13))]
    if finding.page:
        lines += [_styled("dim", line) for line in wrap_words(
            f"More: neurondoctor explain {finding.id} ({finding.page})", width, "      ", "        ")]
    if verbose and finding.evidence:
        for key, value in finding.evidence.items():
            lines += [_styled("dim", line) for line in wrap_words(f"{key}: {value}", width, "      ", "        ")]
    return lines


def _fact_lines(report: Report) -> list[str]:
    lines = ["", "[bold]Facts[/bold]"]
    host = report.facts.host
    lines.append(f"  instance type: {escape(str(host.instance_type or 'unknown'))}, hostname "
                 f"{escape(str(host.hostname or 'unknown'))}, instance id {escape(str(host.instance_id or 'unknown'))}")
    for failure in host.collector_failures:
        lines.append(f"  [magenta]could not collect[/magenta] {escape(failure.collector)}: {escape(failure.reason)}")
    for env in report.facts.environments:
        lines.append(f"  {escape(env.path)} ({env.mode}, {env.kind}, interpreter {escape(env.interpreter or '?')})")
        for site in env.site_dirs:
            state = f", {site.error}" if site.error else ""
            lines.append(f"    {site.role}: {escape(site.path)} ({len(site.distributions)} distributions{state})")
        for source in env.pip_config:
            settings = ([f"index-url {source.index_url}"] if source.index_url else [])
            settings += [f"extra-index-url {url}" for url in source.extra_index_urls]
            settings += [f"find-links {link}" for link in source.find_links]
            settings += [f"constraint {source.constraint}"] if source.constraint else []
            shown = ", ".join(settings) or "(no index settings)"
            lines.append(f"    pip config {escape(source.origin)}: {escape(shown)}")
    listed = report.facts.listed_environments
    if listed:
        shown = ", ".join(f"{escape(item.path)} ({item.kind})" for item in listed[:LISTED_SHOWN])
        more = f" and {len(listed) - LISTED_SHOWN} more" if len(listed) > LISTED_SHOWN else ""
        lines.append(f"  listed, not judged (no torch or Neuron package): {shown}{more}")
    if report.facts.environments_cut_at:
        lines.append(f"  discovery stopped at its bound after {report.facts.environments_cut_at:,} environment(s): "
                     "more may be there")
    timings = ", ".join(f"{key} {value:.0f} ms" for key, value in report.collector_timings_ms.items())
    lines.append(f"  collectors: {escape(timings)}")
    return [redact_secrets(line) for line in lines]  # `-v` shows what collectors read: its secrets never


def render_terminal(report: Report, stream: TextIO, verbose: bool = False, color: Optional[bool] = None,
                    width: Optional[int] = None) -> None:
    """`width` wraps at that many columns; by default the terminal's width, or none off a terminal."""
    width = width if width is not None else wrap_width(stream)
    colours = console_options() if color is None else ({"no_color": True, "color_system": None} if not color else
                                                       {"force_terminal": True, "color_system": "standard"})
    console = terminal_console(stream, highlight=False, soft_wrap=True, **colours)
    ascii_only = needs_ascii(stream)

    def say(line: str = "") -> None:
        console.print(printable(line, ascii_only))  # the output boundary: data's controls shown escaped

    instance = report.facts.host.instance_type or "instance type unknown"
    root = "" if report.root == "/" else f" · root {report.root}"
    title = f"neurondoctor {report.tool_version}"
    header = wrap_words(f"{title} · {instance}{root} · {report.duration_ms / 1000:.2f} s", width, "", "  ")
    say(f"[bold]{escape(title)}[/bold]{escape(header[0][len(title):])}")
    for line in header[1:]:
        say(escape(line))
    for problem in report.input_problems:
        say(f"[red]error:[/red] {escape(problem.source)}: {escape(problem.message)}")
    for message in report.internal_problems:
        say(f"[red]internal error:[/red] {escape(message)}")
    for line in timed_out_lines(report):
        for wrapped in wrap_words(line, width, "", "  "):
            say(_styled("yellow", wrapped))
    say()
    labelled = [("Node", node_line(report)), ("Host", host_line(report))]
    labelled += [("Python", environment_line(env, report.latest_release)) for env in report.environments]
    labelled += [("Python", listed_line(report.facts.listed_environments, report.facts.environments_cut_at))]
    labelled += [("Release", release_line(report)),
                 ("Target", f"Neuron {report.target_release} (--release)" if report.target_release else None)]
    for label, text in labelled:
        if text:
            for line in wrap_words(text, width, f"{label:<{LABEL_WIDTH}}", " " * LABEL_WIDTH):
                say(escape(line))
    say()
    shown = [check for check in report.checks
             if verbose or check.status != STATUS_SKIPPED or check.shown_when_skipped]  # no wall of n/a
    box_width = max((len(_box(check.status, ascii_only)) for check in shown), default=3)
    for check in shown:
        for line in _area_lines(check, width, verbose, ascii_only, box_width):
            say(line)
        for finding in sorted(check.findings, key=lambda item: SEVERITY_ORDER[item.severity]):
            for line in _finding_lines(finding, width, verbose):
                say(line)
    for heading, plan in combined_plans(report):
        say()
        for line in wrap_words(heading, width, "  ", "    "):
            say(f"[bold]{escape(line)}[/bold]")
        for number, command in enumerate(plan, 1):
            for line in wrap_command(command, width, f"    {number:>2}. ", " " * 8):
                say(_styled("cyan", line))
        hint = apply_hint(report)
        for line in wrap_words(hint, width, "    ", "    ") if hint else []:
            say(escape(line))
    for step in report.next_steps:
        for line in wrap_words(step, width, "    Next: ", " " * 10):
            say(escape(line))
    if verbose:
        for line in _fact_lines(report):
            say(line)
    say()
    hints = "" if verbose else " Full facts: neurondoctor check -v ·"
    for line in wrap_words(f"{verdict_line(report)}{hints} for a ticket: neurondoctor check --format markdown",
                           width, "", ""):
        say(escape(line))
