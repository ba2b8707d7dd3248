"""`neurondoctor health` and `neurondoctor-slurm-health`: the node health check of Slurm, node-problem-detector and
Prometheus (docs/contracts.md §7–8). It runs every minute on every node, so what it needs beyond the command line
is imported inside the command.

Options come from `/etc/neurondoctor/health.conf` (`NEURONDOCTOR_CONFIG` moves it), then the command line, which
overrides the file. The verdict is the check's; `health` only adds the deadline, the formats schedulers read, the
Slurm drain/resume and the status file.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from neurondoctor import exit_codes
from neurondoctor.cli.invocation import invocation_environ, warn_about_environment
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
from neurondoctor.output_text import needs_ascii, printable, write_text

if TYPE_CHECKING:
    from neurondoctor.report.model import Report

FORMATS = ("text", "json", "nhc", "npd", "prometheus")


def _log(line: str, to_syslog: bool = True) -> None:
    """One line per run: syslog (daemon facility, where slurmd's own lines go) and stderr."""
    line = printable(line, needs_ascii(sys.stderr))
    sys.stderr.write(line + "\n")
    if not to_syslog:
        return
    try:
        import syslog

        syslog.openlog("neurondoctor-health", 0, syslog.LOG_DAEMON)
        syslog.syslog(syslog.LOG_INFO, line)
        syslog.closelog()
    except (ImportError, OSError):
        pass


def _render(report: Report, output_format: str) -> str:
    if output_format == "json":
        from neurondoctor.report.document import render_json

        return render_json(report) + "\n"
    if output_format == "prometheus":
        from neurondoctor.report.prometheus import render_prometheus

        return render_prometheus(report)
    from neurondoctor.report.node_health import render_nhc, render_npd

    if output_format == "npd":
        return render_npd(report)
    if output_format == "nhc":
        return render_nhc(report)
    verdict = report.health
    line = f"health: {verdict.state}" + (f" · {'; '.join(verdict.reasons)}" if verdict.reasons else "")
    return printable(line, needs_ascii(sys.stdout)) + "\n"


def health(
    ctx: typer.Context,
    root: RootOption = None,
    venv: VenvOption = None,
    python: PythonOption = None,
    release: ReleaseOption = None,
    select: SelectOption = None,
    skip: SkipOption = None,
    output_format: Annotated[str, typer.Option(
        "--format", metavar="FORMAT", help="text (default), json, nhc, npd (node-problem-detector plugin), "
                                           "prometheus (textfile).")] = "text",
    as_json: JsonOption = False,
    output: Annotated[Optional[str], typer.Option(
        "--output", metavar="FILE", help="Write the output to FILE atomically (the node_exporter textfile) instead "
                                         "of stdout.")] = None,
    slurm: Annotated[bool, typer.Option(
        "--slurm", help="Drain this Slurm node when unhealthy, resume it when it was drained by neurondoctor and is "
                        "healthy again; nothing on unknown.")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="With --slurm: print the scontrol command and run none; write no status file, no --output, "
                          "no syslog line.")] = False,
    deadline: Annotated[Optional[float], typer.Option(
        "--deadline", metavar="S", help="Give up on the check after S seconds and report the previous verdict, "
                                        "stale (default 30, or health.conf's).")] = None,
    since: Annotated[Optional[str], typer.Option(
        "--since", metavar="TIME", help="Judge the kernel log's NEURON_HW_ERR lines since TIME (default: this boot; "
                                        "under --root: YYYY-MM-DD[ HH:MM[:SS]], UTC).")] = None,
    status_file: Annotated[Optional[str], typer.Option(
        "--status-file", metavar="F", help="Keep the verdict here (neurondoctor.status/1; default with --slurm: "
                                           "/var/lib/neurondoctor/health.json).")] = None,
) -> None:
    """The node's Neuron health verdict for Slurm, node-problem-detector and Prometheus.

    Exit codes: 0 ok or degraded, 1 unhealthy, 2 bad usage, 3 unknown (never healthy). Options also come from
    /etc/neurondoctor/health.conf (NEURONDOCTOR_CONFIG moves it); options given here override it.
    """
    from neurondoctor.actions.check.check_run import CheckOptions, validate_options
    from neurondoctor.actions.health.config_file import load_health_config
    from neurondoctor.actions.health.health_run import (
        DEFAULT_STATUS_FILE,
        SAFE_PATH,
        apply_to_slurm,
        run_health,
        write_status,
    )
    from neurondoctor.actions.health.owned_files import is_prometheus_textfile, is_report_document, replace_owned_file
    from neurondoctor.release_data.catalog import load_catalog

    targets = Targets.named(root, venv, python, release, select, skip)
    env = dict(invocation_environ(ctx))
    env.setdefault("PATH", SAFE_PATH)  # slurmd passes no PATH; the check's commands need one
    config = load_health_config(env)
    output_format = chosen_format(as_json, output_format, FORMATS)
    if dry_run and not slurm:
        raise exit_codes.UserError("--dry-run only goes with --slurm")
    if output and output_format not in ("prometheus", "json"):
        raise exit_codes.UserError("--output takes --format prometheus (a node_exporter textfile) or json")
    deadline_s = deadline if deadline is not None else config.deadline_s
    if not 0 < deadline_s < 3600:
        raise exit_codes.UserError(f"--deadline {deadline_s:g}: give seconds above 0")
    chosen = targets.over(config)
    options = CheckOptions(root=chosen.root or "/", venvs=chosen.venvs, pythons=chosen.pythons,
                           release=chosen.release, select=chosen.select, skip=chosen.skip, environ=env,
                           kernel_log_since=since, operator_environments=True, compile_cache=config.compile_cache)
    warn_about_environment(env)
    if since and options.root != "/":
        from neurondoctor.host.kernel_log import parse_since

        try:
            parse_since(since)
        except ValueError as error:
            raise exit_codes.UserError(str(error)) from error
    catalog = load_catalog()
    try:
        validate_options(options, catalog)
    except exit_codes.UserError as error:
        if not config.source or targets.named_any:
            raise
        config.problems.append(f"{config.source}: {error.message}")  # a bad value in the file: unknown, no change
        options = CheckOptions(environ=env, operator_environments=True)
    status_name = status_file or config.status_file
    status_path = Path(status_name) if status_name else (DEFAULT_STATUS_FILE if slurm else None)
    if not dry_run:  # a place named on the command line that cannot take the file fails before anything is judged
        from neurondoctor.output_targets import writable_directory

        for option, named in (("--status-file", status_file), ("--output", output)):
            if named:
                writable_directory(Path(os.path.abspath(named)).parent, f"{option} {named}")
    outcome = run_health(options, catalog, deadline_s, status_path, config.problems)
    decision = apply_to_slurm(outcome, env, config.slurm_conf, dry_run) if slurm else None
    rendered = _render(outcome.report, output_format)
    # --dry-run writes nothing anywhere: the report goes to stdout, no status file, no syslog line.
    if output and not dry_run:
        ours = is_prometheus_textfile if output_format == "prometheus" else is_report_document
        replace_owned_file(Path(output), rendered.encode(), ours)
    else:
        write_text(rendered)
    if status_path is not None and not dry_run:
        write_status(outcome, status_path, create_directory=status_path == DEFAULT_STATUS_FILE)
    verdict = outcome.report.health
    line = f"neurondoctor health: {verdict.state}" + (" (stale)" if outcome.stale else "")
    if decision is not None:
        line += f"; slurm: {decision.action}: {decision.why}"
        if dry_run and decision.argv:
            line += f"; would run: {decision.shown()}"
    if verdict.reasons:
        line += f"; {verdict.reasons[0][:160]}" + (f" (+{len(verdict.reasons) - 1})" if len(verdict.reasons) > 1
                                                     else "")
    _log(line, to_syslog=not dry_run)
    raise typer.Exit(exit_codes.UNKNOWN if outcome.stale else outcome.report.exit_code())


app = single_command(health)
