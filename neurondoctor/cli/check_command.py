"""`neurondoctor check`: its options and its run.

`check` is the hot path (Slurm prologs, node-problem-detector probes, CI gates on hundreds of nodes): what it needs
beyond the command line is imported inside the command, and rich only for the text format.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Annotated, TextIO

import typer

from neurondoctor import exit_codes, json_data
from neurondoctor.cli.invocation import invocation_environ, print_user_error, warn_about_environment
from neurondoctor.cli.output_format import JsonOption, chosen_format
from neurondoctor.cli.target_options import (
    PythonOption,
    ReleaseOption,
    RootOption,
    SelectOption,
    SkipOption,
    Targets,
    VenvOption,
)
from neurondoctor.cli.typer_apps import single_command
from neurondoctor.output_text import write_text

FORMATS = ("text", "json", "markdown", "nhc", "npd")


def apply_health_conf(targets: Targets, environ: Mapping[str, str]) -> Targets:
    """`--health-conf`: the node's own options under the options given; a problem in the file is a usage error (the
    node's doctor then answers with one line, never with a verdict reached on options it could not read)."""
    from neurondoctor.actions.health.config_file import load_health_config

    config = load_health_config(environ)
    if config.problems:
        raise exit_codes.UserError(config.problems[0] + (f" (+{len(config.problems) - 1} more)"
                                                         if len(config.problems) > 1 else ""))
    return targets.over(config)


def run_by(check: object) -> str:
    """What runs a check's area: `check`, a probe (its id), or `fleet check`."""
    from neurondoctor.rules.registry import CHECKS, fleet_checks

    if check in CHECKS:
        return "check"
    return "fleet check" if check in fleet_checks() else str(getattr(check, "id", ""))


def write_id_list(stream: TextIO, as_json: bool) -> None:
    """`check --list`: every check, then its finding ids, tab-separated, with every severity each can be printed at
    (`error|warning`: the usual one first); the probes' ids last."""
    from neurondoctor.rules.finding import with_page
    from neurondoctor.rules.registry import CHECKS, fleet_checks, probe_checks

    checks = (*CHECKS, *probe_checks(), *fleet_checks())
    if as_json:
        document = {"schema": "neurondoctor.checks/1", "checks": [
            {"id": check.id, "title": check.title, "run_by": run_by(check),
             "findings": [{"id": spec.id, "category": spec.category, "severity": spec.severity,
                           "severities": list(spec.severities), "title": spec.title,
                           "docs": with_page(spec.id, spec.docs)}
                          for spec in check.findings]}
            for check in checks]}
        stream.write(json_data.dumps(document) + "\n")
        return
    for check in checks:
        stream.write(f"{check.id}\tcheck\t-\t{check.title}\n")
        for spec in check.findings:
            stream.write(f"{spec.id}\t{spec.category}\t{'|'.join(spec.severities)}\t{spec.title}\n")


def check(
    ctx: typer.Context,
    root: RootOption = None,
    venv: VenvOption = None,
    python: PythonOption = None,
    release: ReleaseOption = None,
    select: SelectOption = None,
    skip: SkipOption = None,
    output_format: Annotated[str, typer.Option(
        "--format", metavar="FORMAT", help="text (default), json, markdown (for a ticket), nhc (Slurm/NHC lines), "
                                           "npd (node-problem-detector one-liner).")] = "text",
    as_json: JsonOption = False,
    strict: Annotated[bool, typer.Option("--strict", help="Exit 1 on warnings too.")] = False,
    list_ids: Annotated[bool, typer.Option(
        "--list", help="List every check and finding id (ID, category, severity, title; --json for a document).")
    ] = False,
    fix: Annotated[bool, typer.Option(
        "--fix", help="Apply the environments' fix plans (pip in the inspected environments, their pip "
                      "configuration, files of their import path), backing up what it edits, then check again; "
                      "live host only, never host packages or /etc.")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="With --fix: apply without asking (needed off a terminal).")
                   ] = False,
    verbose: Annotated[bool, typer.Option("-v", "--verbose", help="Facts and per-check timings.")] = False,
    health_conf: Annotated[bool, typer.Option(
        "--health-conf", help="Take root, venv, python, release, select and skip from /etc/neurondoctor/health.conf "
                              "(NEURONDOCTOR_CONFIG moves it), as `health` does; options given here override it "
                              "(what `fleet check` runs on every node).")] = False,
) -> None:
    """Check the Neuron stack on this host and its Python environments.

    Exit codes: 0 healthy or warnings only, 1 errors (with --strict: warnings too), 2 bad usage or input, 3 the
    verdict is unknown (a check crashed or could not collect what it needs) or the doctor failed.
    """
    environ = invocation_environ(ctx)
    output = chosen_format(as_json, output_format, FORMATS)
    if list_ids:
        write_id_list(sys.stdout, output == "json")
        raise typer.Exit(exit_codes.OK)
    from neurondoctor.actions.check.check_run import CheckOptions, run_check, validate_options
    from neurondoctor.release_data.catalog import load_catalog
    from neurondoctor.typed_paths import check_directories, check_interpreters

    targets = Targets.named(root, venv, python, release, select, skip)
    if health_conf:
        targets = apply_health_conf(targets, environ)
    check_directories("--venv", targets.venvs)
    check_interpreters("--python", targets.pythons, environ)
    catalog = load_catalog()
    options = CheckOptions(root=targets.root or "/", venvs=targets.venvs, pythons=targets.pythons,
                           release=targets.release, select=targets.select, skip=targets.skip, environ=environ)
    validate_options(options, catalog)
    warn_about_environment(options.environ)
    if yes and not fix:
        raise exit_codes.UserError("--yes only goes with --fix")
    if fix:
        from neurondoctor.cli.fix_command import fix_then_recheck

        report = fix_then_recheck(options, catalog, yes, environ=options.environ)
    else:
        report = run_check(options, catalog=catalog)
    if output == "json":
        from neurondoctor.report.document import render_json

        sys.stdout.write(render_json(report) + "\n")
        for problem in report.input_problems:
            print_user_error(f"{problem.source}: {problem.message}")
    elif output == "markdown":
        from neurondoctor.report.markdown import render_markdown

        write_text(render_markdown(report))
    elif output in ("nhc", "npd"):
        from neurondoctor.report.node_health import render_nhc, render_npd

        write_text(render_nhc(report) if output == "nhc" else render_npd(report))
    else:
        from neurondoctor.report.terminal import render_terminal

        render_terminal(report, sys.stdout, verbose=verbose)
    raise typer.Exit(report.exit_code(strict))


app = single_command(check)
