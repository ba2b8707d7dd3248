"""`neurondoctor explain [LOGFILE|-|FINDING-ID] [--json]`: the input side (files, stdin, finding ids) and the output.

A finding id prints what the finding means and where its fix for this host comes from; any other input is an
error text, explained by rules/error_explanation.py. Exit 0 when recognised, 3 when not, 2 when the input cannot
be read (a FIFO or device where a file belongs, a missing file): docs/contracts.md §7.
"""

from __future__ import annotations

import re
import sys
from typing import Any, Optional

import typer

from neurondoctor import exit_codes, json_data
from neurondoctor.cli.output_format import FormatOption, chosen_format
from neurondoctor.cli.typer_apps import single_command
from neurondoctor.output_text import field_text, write_text
from neurondoctor.regular_files import read_regular_file

INPUT_LIMIT = 8 << 20  # a compiler log keeps its error at the end; 8 MiB from the end is plenty
_FINDING_ID = re.compile(r"^ND-[A-Z]+-\d{3}$")


def _read_input(source: str) -> str:
    """The text of a file or stdin (`-`), its last INPUT_LIMIT bytes, decoded with replacement."""
    if source == "-":
        if sys.stdin.isatty():  # nothing piped in: waiting silently on a terminal helps no one
            raise exit_codes.UserError("explain: give it a log file, a finding id (ND-…), or pipe a log into "
                                       "`neurondoctor explain -`; usage: neurondoctor explain [LOGFILE|-|FINDING-ID]")
        kept = bytearray()  # the tail only: a piped log of any size never sits in memory whole
        while chunk := sys.stdin.buffer.read(1 << 20):
            kept += chunk
            del kept[:-INPUT_LIMIT]
        data = bytes(kept)
    else:
        try:
            data = read_regular_file(source, INPUT_LIMIT, tail=True)
        except OSError as error:
            raise exit_codes.UserError(f"{source}: {error.strerror or error}") from error
    return data.decode("utf-8", errors="replace")


def _finding_document(finding_id: str) -> Optional[dict[str, Any]]:
    from neurondoctor.rules.registry import all_finding_specs

    for check, spec in all_finding_specs():
        if spec.id == finding_id:
            return {"id": spec.id, "category": spec.category, "severity": spec.severity,
                    "severities": list(spec.severities), "means": spec.title,
                    "check": check.title,
                    "fix": f"neurondoctor check --select {spec.id} prints the exact fix for this host"}
    return None


def _finding_text(document: dict[str, Any]) -> str:
    return (f"{document['id']} ({document['category']}, {' or '.join(document['severities'])}): "
            f"{document['means']}\n"
            f"Area: {document['check']}. Fix: `neurondoctor check --select {document['id']}` prints the exact "
            "commands for this host (add --fix to apply the user-space ones).\n")


def _explanation_text(explanation: dict[str, Any]) -> str:
    """The explanation's lines, each value one field (`field_text`): the line it quotes, the operator, the detail
    and the ways out carry text read from the log, which must not end a line or start one (`Ways out:`)."""
    shown = {key: field_text(value) if isinstance(value, str) else value for key, value in explanation.items()}
    lines = [f"What broke: {shown['category']}: {shown['why']}"]
    if shown["op"]:
        lines.append(f"Operator:   {shown['op']}" + (f" ({shown['variant']})" if shown["variant"] else ""))
    lines.append(f"Seen in:    {shown['matched']}")
    if shown.get("detail"):
        lines.append(f"In short:   {shown['detail']}")
    if explanation["ways_out"]:
        lines.append("Ways out:")
        lines += [f"  {number}. {field_text(way)}" for number, way in enumerate(explanation["ways_out"], start=1)]
    lines.append(f"Source:     {shown['source']}")
    return "\n".join(lines) + "\n"


def run_explain(source: str, as_json: bool) -> int:
    """Prints the answer; returns the exit code."""
    if _FINDING_ID.match(source.strip().upper()):
        finding = _finding_document(source.strip().upper())
        if finding is None:
            raise exit_codes.UserError(f"{source}: no such finding id (`neurondoctor check --list` lists them)",
                                       exit_codes.UNKNOWN)
        if as_json:
            sys.stdout.write(json_data.dumps(finding) + "\n")
        else:
            write_text(_finding_text(finding))
        return exit_codes.OK
    from neurondoctor.release_data.probe_data import load_compiler_fixes, load_error_signatures, load_op_support
    from neurondoctor.rules.probes.error_explanation import explain_text

    text = _read_input(source)
    try:
        signatures, op_support, fixes = load_error_signatures(), load_op_support(), load_compiler_fixes()
    except (OSError, ValueError) as error:
        raise exit_codes.UserError(f"release data unusable: {error}", exit_codes.UNKNOWN) from error
    explanation = explain_text(text, signatures, op_support, fixes)
    if explanation is None:
        if as_json:
            sys.stdout.write(json_data.dumps({"category": None, "op": None, "variant": None, "ways_out": [],
                                         "recognised": False}) + "\n")
        else:
            sys.stdout.write("Not recognised: no known Neuron error signature in this text. "
                             "`neurondoctor bundle` collects the logs for a support case.\n")
        return exit_codes.UNKNOWN
    document = explanation.to_json()
    if as_json:
        sys.stdout.write(json_data.dumps(document) + "\n")
    else:
        write_text(_explanation_text(document))
    return exit_codes.OK


def explain(
    source: str = typer.Argument("-", metavar="LOGFILE|-|FINDING-ID",
                                 help="A compiler/runtime log, - for stdin (default), or a finding id."),
    as_json: bool = typer.Option(False, "--json", help="One JSON document: {category, op, variant, ways_out}."),
    output_format: FormatOption = "text",
) -> None:
    """What an error text (or a finding id) means and the ways out; exit 0 recognised, 3 not, 2 unreadable."""
    raise typer.Exit(run_explain(source, chosen_format(as_json, output_format) == "json"))


app = single_command(explain)
