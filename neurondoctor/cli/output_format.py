"""`--json` and `--format json` are one choice on every command: the format a command prints.

A script that runs `check --format json` expects the same word to work on `health`, `fleet summarize`, `explain`,
`manifests status`, `bootstrap` and the probes; a word a command does not know is a usage error (exit 2).
"""

from __future__ import annotations

from typing import Annotated

import typer

from neurondoctor import exit_codes

FORMAT_HELP = "text or json (the same as --json)"
JsonOption = Annotated[bool, typer.Option("--json", help="The same as --format json: exactly one JSON document on "
                                                          "stdout.")]
FormatOption = Annotated[str, typer.Option("--format", metavar="FORMAT", help=FORMAT_HELP)]


def chosen_format(as_json: bool, output_format: str, known: tuple[str, ...] = ("text", "json")) -> str:
    """The format to print: `json` for --json or --format json, else the --format word, which must be known."""
    if output_format not in known:
        raise exit_codes.UserError(f"--format {output_format}: expected {', '.join(known[:-1])} or {known[-1]}")
    if as_json and output_format not in ("text", "json"):
        raise exit_codes.UserError(f"--json and --format {output_format}: give one of them")
    return "json" if as_json else output_format
