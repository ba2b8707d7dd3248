"""`neurondoctor explain [LOGFILE|-|FINDING-ID|"TEXT"] [--root DIR] [--venv DIR]... [--no-host] [--json]`: the input
side (files, stdin, finding ids, the text itself) and the output.

A finding id prints what the finding means and where its fix for this host comes from; any other input is an
error text, explained by rules/error_explanation.py, and then, where its category has a check area, answered on this
host by that part of `check` (actions/explain/host_answer.py; `--no-host` skips it). An argument that names an
existing file is read as the file; one that does not and looks like a path (one word with a `/` or a log's file
extension) is a missing file; any other argument is the text. Exit 0 when recognised, 3 when not, 2 when the input
cannot be read (a FIFO or device where a file belongs, a missing file): docs/contracts.md §7.
"""

from __future__ import annotations

import os
import re
import sys
from typing import Annotated, Any, Optional

import typer

from neurondoctor import exit_codes, json_data
from neurondoctor.cli.output_format import FormatOption, chosen_format
from neurondoctor.cli.target_options import RootOption, VenvOption
from neurondoctor.cli.typer_apps import single_command
from neurondoctor.output_text import field_text, write_text
from neurondoctor.regular_files import read_regular_file

INPUT_LIMIT = 8 << 20  # a compiler log keeps its error at the end; 8 MiB from the end is plenty
_FINDING_ID = re.compile(r"^ND-[A-Z]+-\d{3}$")
_LOG_SUFFIXES = (".log", ".txt", ".out", ".err", ".json", ".gz")


def looks_like_a_path(argument: str) -> bool:
    """A file the user meant to name, not a message: a first line that starts like a path (`/`, `./`, `../`, `~`)
    and holds no `: ` (a loader's `/usr/bin/python3: error while …` is a message), or one word with a `/` or a log
    file's extension."""
    first = argument.split("\n", 1)[0]
    if first.startswith(("/", "./", "../", "~")) and ": " not in first:
        return True
    return bool(argument) and not any(char.isspace() for char in argument) and (
        "/" in argument or argument.lower().endswith(_LOG_SUFFIXES))


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
    elif not os.path.lexists(source) and not looks_like_a_path(source):
        data = source.encode("utf-8", errors="replace")[-INPUT_LIMIT:]  # the argument is the text
    else:
        try:
            data = read_regular_file(source, INPUT_LIMIT, tail=True)
        except OSError as error:
            raise exit_codes.UserError(f"{source}: {error.strerror or error}") from error
    return data.decode("utf-8", errors="replace")


def _finding_document(finding_id: str) -> Optional[dict[str, Any]]:
    """The id's declaration and its page (docs/findings/ID.md), as `rustc --explain` prints an error code's."""
    from neurondoctor.finding_pages.page import page_for
    from neurondoctor.rules.finding import with_page
    from neurondoctor.rules.registry import all_finding_specs

    for check, spec in all_finding_specs():
        if spec.id == finding_id:
            return {"id": spec.id, "category": spec.category, "severity": spec.severity,
                    "severities": list(spec.severities), "means": spec.title,
                    "check": check.title,
                    "fix": f"neurondoctor check --select {spec.id} prints the exact fix for this host",
                    "docs": with_page(spec.id, spec.docs), "page": page_for(spec.id)}
    return None


def _explanation_text(explanation: dict[str, Any]) -> str:
    """The explanation's lines, each value one field (`field_text`): the line it quotes, the operator, the detail
    and the ways out carry text read from the log, which must not end a line or start one (`Ways out:`)."""
    shown = {key: field_text(value) if isinstance(value, str) else value for key, value in explanation.items()}
    lines = [f"What broke: {shown['cause']}: {shown['why']}"]
    if shown["op"]:
        lines.append(f"Operator:   {shown['op']}" + (f" ({shown['variant']})" if shown["variant"] else ""))
    lines.append(f"Seen in:    {shown['matched']}")
    if shown.get("detail"):
        lines.append(f"In short:   {shown['detail']}")
    if explanation["ways_out"]:
        lines.append("Ways out:")
        lines += [f"  {number}. {field_text(way)}" for number, way in enumerate(explanation["ways_out"], start=1)]
    lines.append(f"Source:     {shown['source']}")
    if explanation.get("also"):
        lines.append("Also in it:")
        lines += [f"  - {other['cause']}: {field_text(other['why'])} ({field_text(other['matched'])})"
                  for other in explanation["also"]]
    return "\n".join(lines) + "\n"


def _host_text(host: dict[str, Any]) -> str:
    """This host's answer: each area that answers the category with its verdict, then its findings with their fixes
    (an area that judged nothing says so: a laptop is not a healthy Neuron host)."""
    where = "this host" if host["root"] == "/" else f"the tree at {field_text(host['root'])}"
    lines = [f"On {where}:"]
    lines += [f"  [{check['status']}] {check['title']}" + (f": {field_text(check['summary'])}" if check["summary"]
                                                          else "") for check in host["checks"]
              if check["status"] != "skipped" or check["summary"]]  # an area check itself hides when skipped
    for finding in host["findings"]:
        lines.append(f"  {finding['severity']} {finding['id']}: {field_text(finding['title'])}")
        lines += [("    Fix: " if index == 0 else "         ") + field_text(line)
                  for index, line in enumerate(finding["fix"])]
    for found in host.get("cache_entries", []):
        where = (f"{field_text(found['cache'])}/{field_text(found['entry'])} ({found['state']})" if found["entry"]
                 else field_text(found["module"]))
        lines.append(f"  cache entry {where}: {field_text(found['means'])}")
        lines += [("    Fix: " if index == 0 else "         ") + field_text(line)
                  for index, line in enumerate(found["fix"])]
    to_clear = any(found["fix"] for found in host.get("cache_entries", []))
    if host["checks"] and all(check["status"] == "ok" for check in host["checks"]) and not to_clear:
        lines.append("  nothing wrong here: the cause is not (or no longer) on this host; run `neurondoctor check` "
                     "where the failing job ran (its node, its container)")
    return "\n".join(lines) + "\n"


def _unrecognised(clues: list[Any]) -> dict[str, Any]:
    """What an unmatched text is, as far as the readers tell (explain_readers/describe.py)."""
    from neurondoctor.redaction import redact_secrets
    from neurondoctor.rules.explain_readers.describe import describe, next_command

    first = clues[-1] if clues else None  # the last message of a log is the one that ended it
    return {"category": None, "cause": None, "op": None, "variant": None, "ways_out": [], "recognised": False,
            "kind": first.reader if first else None,
            "read_as": redact_secrets(describe(first)) if first else None,
            "facts": {name: redact_secrets(value) for name, value in first.facts.items()} if first else {},
            "next": next_command(first)}


def _unrecognised_text(document: dict[str, Any]) -> str:
    from neurondoctor.rules.explain_readers.describe import KINDS

    if document["read_as"]:
        head = f"Not recognised as a known failure. Read as: {field_text(document['read_as'])}."
    else:
        head = f"Not recognised: no known Neuron error signature, and no message of a kind read here ({KINDS})."
    return (f"{head}\n`{document['next']}` tells what is wrong on this host; `neurondoctor bundle` collects the "
            "logs for a support case.\n")


def run_explain(source: str, as_json: bool, root: Optional[str] = None, venvs: Optional[list[str]] = None,
                host: bool = True) -> int:
    """Prints the answer; returns the exit code."""
    if _FINDING_ID.match(source.strip().upper()):
        finding = _finding_document(source.strip().upper())
        if finding is None:
            raise exit_codes.UserError(f"{source}: no such finding id (`neurondoctor check --list` lists them)",
                                       exit_codes.UNKNOWN)
        if as_json:
            sys.stdout.write(json_data.dumps(finding) + "\n")
        else:
            write_text(finding["page"])
        return exit_codes.OK
    from neurondoctor.release_data.probe_data import load_compiler_fixes, load_error_signatures, load_op_support
    from neurondoctor.rules.probes.error_explanation import explain_message

    if root is not None and not os.path.isdir(root):
        raise exit_codes.UserError(f"--root {root}: not a directory")
    from neurondoctor.typed_paths import check_directories

    check_directories("--venv", venvs or [])
    text = _read_input(source)
    try:
        signatures, op_support, fixes = load_error_signatures(), load_op_support(), load_compiler_fixes()
    except (OSError, ValueError) as error:
        raise exit_codes.UserError(f"release data unusable: {error}", exit_codes.UNKNOWN) from error
    explanation, clues = explain_message(text, signatures, op_support, fixes)
    if explanation is None:
        unrecognised = _unrecognised(clues)
        if as_json:
            sys.stdout.write(json_data.dumps(unrecognised) + "\n")
        else:
            sys.stdout.write(_unrecognised_text(unrecognised))
        return exit_codes.UNKNOWN
    document = explanation.to_json()
    answer = None
    if host:
        from neurondoctor.actions.explain.host_answer import answer_on_host

        answer = answer_on_host(explanation.category, explanation.facts, root or "/", venvs or [], os.environ, text)
    document["host"] = answer.to_json() if answer else None
    if as_json:
        sys.stdout.write(json_data.dumps(document) + "\n")
    else:
        write_text(_explanation_text(document) + (_host_text(document["host"]) if answer else ""))
    return exit_codes.OK


def explain(
    source: str = typer.Argument("-", metavar='LOGFILE|-|FINDING-ID|"TEXT"',
                                 help="A log file, - for stdin (default), a finding id, or the error text itself."),
    as_json: bool = typer.Option(False, "--json", help="One JSON document: {category, op, variant, ways_out, …}."),
    output_format: FormatOption = "text",
    root: RootOption = None,
    venv: VenvOption = None,
    no_host: Annotated[bool, typer.Option(
        "--no-host", help="Explain the text only: do not run the check areas that answer it on this host.")] = False,
) -> None:
    """What an error text (or a finding id) means, the ways out, and what is wrong on this host; exit 0 recognised,
    3 not, 2 unreadable."""
    raise typer.Exit(run_explain(source, chosen_format(as_json, output_format) == "json", root, venv, not no_host))


app = single_command(explain)
