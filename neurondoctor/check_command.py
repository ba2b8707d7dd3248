"""`neurondoctor check`: its options and its run, on the standard library's argparse.

`check` is the hot path (Slurm prologs, node-problem-detector probes, CI gates on hundreds of nodes), so
it does not pay for typer's import (about 0.1 s with its pydantic dependency, more than the whole check):
`cli.main` dispatches here before typer is imported, and rich is imported only for the text format.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Optional

FORMATS = ("text", "json", "markdown", "nhc", "npd")
EXIT_USAGE = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="neurondoctor check",
        description="Check the Neuron stack on this host and its Python environments. Exit codes: 0 no errors, "
                    "1 errors (with --strict: warnings too), 2 bad usage or input, 3 the doctor failed.")
    parser.add_argument("--root", default="/", metavar="DIR",
                        help="inspect the Linux tree under DIR (a mounted AMI, a container rootfs); default /")
    parser.add_argument("--venv", action="append", default=[], metavar="DIR",
                        help="inspect this environment statically, without running it (repeatable)")
    parser.add_argument("--python", action="append", default=[], metavar="EXE",
                        help="inspect this interpreter's environment live (repeatable)")
    parser.add_argument("--release", metavar="X.Y.Z", help="judge the environments against this Neuron release")
    parser.add_argument("--format", dest="output_format", default="text", choices=FORMATS,
                        help="text (default), json, markdown (for a ticket), nhc (Slurm/NHC lines), "
                             "npd (node-problem-detector one-liner)")
    parser.add_argument("--json", dest="as_json", action="store_true",
                        help="same as --format json: exactly one JSON document on stdout")
    parser.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    parser.add_argument("--select", action="append", default=[], metavar="ID",
                        help="only these checks, finding ids (ND-TORCH, ND-PIN-001) or categories (repeatable)")
    parser.add_argument("--skip", action="append", default=[], metavar="ID",
                        help="leave out these checks, finding ids or categories (repeatable)")
    parser.add_argument("-v", "--verbose", action="store_true", help="facts and per-check timings")
    return parser


def _usage_error(message: str) -> int:
    sys.stderr.write(f"error: {message}\n")
    return EXIT_USAGE


def run(argv: Sequence[str], environ: Optional[dict[str, str]] = None) -> int:
    """Parse, check, render; returns the exit code (ARCHITECTURE.md §7)."""
    args = build_parser().parse_args(list(argv))
    from neurondoctor.check_run import CheckOptions, run_check
    from neurondoctor.release_data.catalog import load_catalog
    from neurondoctor.rules.registry import known_selector

    if not os.path.isdir(args.root):
        return _usage_error(f"--root {args.root}: not a directory")
    for item in [*args.select, *args.skip]:
        if not known_selector(item):
            return _usage_error(f"--select/--skip {item!r}: not a check, finding id or category")
    catalog = load_catalog()
    if args.release is not None and args.release not in catalog.releases:
        return _usage_error(f"--release {args.release}: not a known Neuron release (newest known: {catalog.latest};"
                            " see `neurondoctor manifests list`)")
    options = CheckOptions(root=args.root, venvs=args.venv, pythons=args.python, release=args.release,
                           select=args.select, skip=args.skip,
                           environ=dict(os.environ) if environ is None else environ)
    report = run_check(options, catalog=catalog)
    output_format = "json" if args.as_json else args.output_format
    if output_format == "json":
        from neurondoctor.report.model import render_json

        sys.stdout.write(render_json(report) + "\n")
        for problem in report.input_problems:
            sys.stderr.write(f"error: {problem.source}: {problem.message}\n")
    elif output_format == "markdown":
        from neurondoctor.report.markdown import render_markdown

        sys.stdout.write(render_markdown(report))
    elif output_format in ("nhc", "npd"):
        from neurondoctor.report.node_health import render_nhc, render_npd

        sys.stdout.write(render_nhc(report) if output_format == "nhc" else render_npd(report))
    else:
        from neurondoctor.report.terminal import render_terminal

        render_terminal(report, sys.stdout, verbose=args.verbose)
    return report.exit_code(args.strict)
