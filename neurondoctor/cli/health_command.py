"""`neurondoctor health` and `neurondoctor-slurm-health`: the node health check of Slurm, node-problem-detector and
Prometheus (docs/contracts.md §7–8), on argparse like `check` (it runs every minute on every node).

Options come from `/etc/neurondoctor/health.conf` (`NEURONDOCTOR_CONFIG` moves it), then the command line, which
overrides the file. The verdict is the check's; `health` only adds the deadline, the formats schedulers read, the
Slurm drain/resume and the status file.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Optional

from neurondoctor import exit_codes
from neurondoctor.actions.health.config import (
    CONFIG_ENV,
    MAX_CONFIG_BYTES,
    HealthConfig,
    config_path,
    parse_health_config,
)
from neurondoctor.cli import warn_about_environment
from neurondoctor.cli.check_command import add_target_arguments
from neurondoctor.output_text import needs_ascii, printable, write_text
from neurondoctor.regular_files import read_regular_file

if TYPE_CHECKING:
    from neurondoctor.report.model import Report

FORMATS = ("text", "json", "nhc", "npd", "prometheus")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="neurondoctor health",
        description="The node's Neuron health verdict for Slurm, node-problem-detector and Prometheus. Exit codes: "
                    "0 ok or degraded, 1 unhealthy, 2 bad usage, 3 unknown (never healthy). Options also come from "
                    "/etc/neurondoctor/health.conf (NEURONDOCTOR_CONFIG moves it); flags override it.")
    add_target_arguments(parser, None)  # None: health.conf's root, else /
    parser.add_argument("--format", dest="output_format", default="text", choices=FORMATS,
                        help="text (default), json, nhc, npd (node-problem-detector plugin), prometheus (textfile)")
    parser.add_argument("--json", dest="as_json", action="store_true", help="same as --format json")
    parser.add_argument("--output", metavar="FILE",
                        help="write the output to FILE atomically (the node_exporter textfile) instead of stdout")
    parser.add_argument("--slurm", action="store_true",
                        help="drain this Slurm node when unhealthy, resume it when it was drained by neurondoctor "
                             "and is healthy again; nothing on unknown")
    parser.add_argument("--dry-run", action="store_true",
                        help="with --slurm: print the scontrol command and run none; write no status file, no "
                             "--output, no syslog line")
    parser.add_argument("--deadline", type=float, metavar="S",
                        help="give up on the check after S seconds and report the previous verdict, stale "
                             "(default 30, or health.conf's)")
    parser.add_argument("--since", metavar="TIME",
                        help="judge the kernel log's NEURON_HW_ERR lines since TIME (default: this boot; under "
                             "--root: YYYY-MM-DD[ HH:MM[:SS]], UTC)")
    parser.add_argument("--status-file", metavar="F",
                        help="keep the verdict here (neurondoctor.status/1; default with --slurm: "
                             "/var/lib/neurondoctor/health.json)")
    return parser


def _foreign_link(path: Path) -> Optional[str]:
    """Why a config that is a link to a file neither root nor this user owns is not read, else None: root trusts
    the options of a root-owned file, not those of a file another user can write (issue 25 §5)."""
    if not path.is_symlink():
        return None
    owner = path.stat().st_uid
    if owner in (0, os.geteuid()):
        return None
    return f"{path}: a link to a file owned by uid {owner}, not by root: not read"


def load_health_config(environ: Mapping[str, str]) -> HealthConfig:
    """health.conf as the file says, or the problems that make the verdict unknown: missing when named, a foreign
    link, past MAX_CONFIG_BYTES (never cut: a `skip` past the cut would be lost), unreadable."""
    path = config_path(environ)
    try:
        refusal = _foreign_link(path)
        if refusal:
            return HealthConfig(problems=[refusal])
        data = read_regular_file(path, MAX_CONFIG_BYTES + 1)
    except FileNotFoundError:
        config = HealthConfig()
        if environ.get(CONFIG_ENV):
            config.problems.append(f"{path}: no such file ({CONFIG_ENV} names it)")
        return config
    except OSError as error:
        return HealthConfig(problems=[f"{path}: cannot be read: {error.strerror or error}"])
    if len(data) > MAX_CONFIG_BYTES:
        return HealthConfig(problems=[f"{path}: larger than {MAX_CONFIG_BYTES >> 10} KiB: not read"])
    return parse_health_config(data.decode("utf-8", errors="replace"), str(path))


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
    health = report.health
    line = f"health: {health.state}" + (f" · {'; '.join(health.reasons)}" if health.reasons else "")
    return printable(line, needs_ascii(sys.stdout)) + "\n"


def run(argv: Sequence[str], environ: Optional[Mapping[str, str]] = None) -> int:
    from neurondoctor.actions.check.check_run import CheckOptions, validate_options
    from neurondoctor.actions.health.health_run import (
        DEFAULT_STATUS_FILE,
        SAFE_PATH,
        apply_to_slurm,
        run_health,
        write_status,
    )
    from neurondoctor.actions.health.owned_files import is_prometheus_textfile, is_report_document, replace_owned_file
    from neurondoctor.release_data.catalog import load_catalog

    args = build_parser().parse_args(list(argv))
    env = dict(os.environ if environ is None else environ)
    env.setdefault("PATH", SAFE_PATH)  # slurmd passes no PATH; the check's commands need one
    config = load_health_config(env)
    output_format = "json" if args.as_json else args.output_format
    if args.dry_run and not args.slurm:
        raise exit_codes.UserError("--dry-run only goes with --slurm")
    if args.output and output_format not in ("prometheus", "json"):
        raise exit_codes.UserError("--output takes --format prometheus (a node_exporter textfile) or json")
    deadline = args.deadline if args.deadline is not None else config.deadline_s
    if not 0 < deadline < 3600:
        raise exit_codes.UserError(f"--deadline {deadline:g}: give seconds above 0")
    options = CheckOptions(root=args.root or config.root, venvs=args.venv or config.venvs,
                           pythons=args.python or config.pythons, release=args.release or config.release,
                           select=args.select or config.select, skip=args.skip or config.skip, environ=env,
                           kernel_log_since=args.since, operator_environments=True)
    warn_about_environment(env)
    if args.since and options.root != "/":
        from neurondoctor.host.kernel_log import parse_since

        try:
            parse_since(args.since)
        except ValueError as error:
            raise exit_codes.UserError(str(error)) from error
    catalog = load_catalog()
    try:
        validate_options(options, catalog)
    except exit_codes.UserError as error:
        if not config.source or args.root or args.release or args.select or args.skip:
            raise
        config.problems.append(f"{config.source}: {error.message}")  # a bad value in the file: unknown, no change
        options = CheckOptions(environ=env, operator_environments=True)
    status_name = args.status_file or config.status_file
    status_file = Path(status_name) if status_name else (DEFAULT_STATUS_FILE if args.slurm else None)
    outcome = run_health(options, catalog, deadline, status_file, config.problems)
    decision = apply_to_slurm(outcome, env, config.slurm_conf, args.dry_run) if args.slurm else None
    rendered = _render(outcome.report, output_format)
    # --dry-run writes nothing anywhere (issue 27 §3): the report goes to stdout, no status file, no syslog line.
    if args.output and not args.dry_run:
        ours = is_prometheus_textfile if output_format == "prometheus" else is_report_document
        replace_owned_file(Path(args.output), rendered.encode(), ours)
    else:
        write_text(rendered)
    if status_file is not None and not args.dry_run:
        write_status(outcome, status_file, create_directory=status_file == DEFAULT_STATUS_FILE)
    health = outcome.report.health
    line = f"neurondoctor health: {health.state}" + (" (stale)" if outcome.stale else "")
    if decision is not None:
        line += f"; slurm: {decision.action}: {decision.why}"
        if args.dry_run and decision.argv:
            line += f"; would run: {decision.shown()}"
    if health.reasons:
        line += f"; {health.reasons[0][:160]}" + (f" (+{len(health.reasons) - 1})" if len(health.reasons) > 1 else "")
    _log(line, to_syslog=not args.dry_run)
    return exit_codes.UNKNOWN if outcome.stale else outcome.report.exit_code()


def slurm_main() -> None:
    """`neurondoctor-slurm-health`: Slurm's HealthCheckProgram, which is given no arguments."""
    sys.argv = [sys.argv[0], "health", "--slurm", *sys.argv[1:]]
    from neurondoctor.cli import main

    main()
