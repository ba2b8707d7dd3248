"""`neurondoctor check`: its options and its run, on the standard library's argparse.

`check` is the hot path (Slurm prologs, node-problem-detector probes, CI gates on hundreds of nodes), so
it does not pay for typer's import (about 0.1 s with its pydantic dependency, more than the whole check):
`cli.main` dispatches here before typer is imported, and rich is imported only for the text format.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Optional, TextIO

from neurondoctor import exit_codes
from neurondoctor.cli import warn_about_environment
from neurondoctor.output_text import write_text

FORMATS = ("text", "json", "markdown", "nhc", "npd")


def add_target_arguments(parser: argparse.ArgumentParser, root_default: Optional[str]) -> None:
    """What a run judges, for `check` and `health` alike: the tree, the environments, the release."""
    parser.add_argument("--root", default=root_default, metavar="DIR",
                        help="inspect the Linux tree under DIR (a mounted AMI, a container rootfs); default /")
    parser.add_argument("--venv", action="append", default=[], metavar="DIR",
                        help="inspect this environment statically, without running it (repeatable)")
    parser.add_argument("--python", action="append", default=[], metavar="EXE",
                        help="inspect this interpreter's environment live (repeatable)")
    parser.add_argument("--release", metavar="X.Y.Z", help="judge the environments against this Neuron release")
    parser.add_argument("--select", action="append", default=[], metavar="ID",
                        help="only these checks, finding ids (ND-TORCH, ND-PIN-001) or categories (repeatable)")
    parser.add_argument("--skip", action="append", default=[], metavar="ID",
                        help="leave out these checks, finding ids or categories (repeatable)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="neurondoctor check",
        description="Check the Neuron stack on this host and its Python environments. Exit codes: 0 healthy or "
                    "warnings only, 1 errors (with --strict: warnings too), 2 bad usage or input, 3 the verdict is "
                    "unknown (a check crashed or could not collect what it needs) or the doctor failed.")
    add_target_arguments(parser, "/")
    parser.add_argument("--format", dest="output_format", default="text", choices=FORMATS,
                        help="text (default), json, markdown (for a ticket), nhc (Slurm/NHC lines), "
                             "npd (node-problem-detector one-liner)")
    parser.add_argument("--json", dest="as_json", action="store_true",
                        help="same as --format json: exactly one JSON document on stdout")
    parser.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    parser.add_argument("--list", dest="list_ids", action="store_true",
                        help="list every check and finding id (ID, category, severity, title; --json for a document)")
    parser.add_argument("--fix", action="store_true",
                        help="apply the environments' fix plans (pip in the inspected environments, their pip "
                             "configuration, files of their import path), backing up what it edits, then check "
                             "again; live host only, never host packages or /etc")
    parser.add_argument("--yes", action="store_true", help="with --fix: apply without asking (needed off a terminal)")
    parser.add_argument("-v", "--verbose", action="store_true", help="facts and per-check timings")
    parser.add_argument("--health-conf", action="store_true",
                        help="take root, venv, python, release, select and skip from /etc/neurondoctor/health.conf "
                             "(NEURONDOCTOR_CONFIG moves it), as `health` does; flags given here override it "
                             "(what `fleet check` runs on every node)")
    return parser


def apply_health_conf(args: argparse.Namespace, environ: Mapping[str, str]) -> None:
    """`--health-conf`: the node's own options under the flags given; a problem in the file is a usage error (the
    node's doctor then answers with one line, never with a verdict reached on options it could not read)."""
    from neurondoctor.cli.health_command import load_health_config

    config = load_health_config(environ)
    if config.problems:
        raise exit_codes.UserError(config.problems[0] + (f" (+{len(config.problems) - 1} more)"
                                                         if len(config.problems) > 1 else ""))
    if args.root == "/" and config.root:
        args.root = config.root
    args.venv = args.venv or list(config.venvs)
    args.python = args.python or list(config.pythons)
    args.release = args.release or config.release
    args.select = args.select or list(config.select)
    args.skip = args.skip or list(config.skip)


def run_by(check: object) -> str:
    """What runs a check's area: `check`, a probe (its id), or `fleet check`."""
    from neurondoctor.rules.registry import CHECKS, fleet_checks

    if check in CHECKS:
        return "check"
    return "fleet check" if check in fleet_checks() else str(getattr(check, "id", ""))


def write_id_list(stream: TextIO, as_json: bool) -> None:
    """`check --list`: every check, then its finding ids, tab-separated, with every severity each can be printed at
    (`error|warning`: the usual one first); the probes' ids last."""
    from neurondoctor.rules.registry import CHECKS, PROBE_CHECKS, fleet_checks

    checks = (*CHECKS, *PROBE_CHECKS, *fleet_checks())
    if as_json:
        document = {"schema": "neurondoctor.checks/1", "checks": [
            {"id": check.id, "title": check.title, "run_by": run_by(check),
             "findings": [{"id": spec.id, "category": spec.category, "severity": spec.severity,
                           "severities": list(spec.severities), "title": spec.title, "docs": list(spec.docs)}
                          for spec in check.findings]}
            for check in checks]}
        stream.write(json.dumps(document) + "\n")
        return
    for check in checks:
        stream.write(f"{check.id}\tcheck\t-\t{check.title}\n")
        for spec in check.findings:
            stream.write(f"{spec.id}\t{spec.category}\t{'|'.join(spec.severities)}\t{spec.title}\n")


def run(argv: Sequence[str], environ: Optional[Mapping[str, str]] = None) -> int:
    """Parse, check, render; returns the exit code (docs/contracts.md §7), raises UserError for bad input."""
    args = build_parser().parse_args(list(argv))
    if args.list_ids:
        write_id_list(sys.stdout, args.as_json or args.output_format == "json")
        return exit_codes.OK
    from neurondoctor.actions.check.check_run import CheckOptions, run_check, validate_options
    from neurondoctor.release_data.catalog import load_catalog
    from neurondoctor.typed_paths import check_directories, check_interpreters

    if args.health_conf:
        apply_health_conf(args, os.environ if environ is None else environ)
    check_directories("--venv", args.venv)
    check_interpreters("--python", args.python, os.environ if environ is None else environ)

    catalog = load_catalog()
    options = CheckOptions(root=args.root, venvs=args.venv, pythons=args.python, release=args.release,
                           select=args.select, skip=args.skip,
                           environ=dict(os.environ) if environ is None else environ)
    validate_options(options, catalog)
    warn_about_environment(options.environ)
    if args.yes and not args.fix:
        raise exit_codes.UserError("--yes only goes with --fix")
    if args.fix:
        from neurondoctor.cli.fix_command import fix_then_recheck

        report = fix_then_recheck(options, catalog, args.yes, environ=options.environ)
    else:
        report = run_check(options, catalog=catalog)
    output_format = "json" if args.as_json else args.output_format
    if output_format == "json":
        from neurondoctor.report.document import render_json

        sys.stdout.write(render_json(report) + "\n")
        from neurondoctor.cli import print_user_error

        for problem in report.input_problems:
            print_user_error(f"{problem.source}: {problem.message}")
    elif output_format == "markdown":
        from neurondoctor.report.markdown import render_markdown

        write_text(render_markdown(report))
    elif output_format in ("nhc", "npd"):
        from neurondoctor.report.node_health import render_nhc, render_npd

        write_text(render_nhc(report) if output_format == "nhc" else render_npd(report))
    else:
        from neurondoctor.report.terminal import render_terminal

        render_terminal(report, sys.stdout, verbose=args.verbose)
    return report.exit_code(args.strict)
