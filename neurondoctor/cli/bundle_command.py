"""`neurondoctor bundle`: one redacted support archive."""

from __future__ import annotations

from typing import Optional

import typer

from neurondoctor.cli.typer_apps import single_command
from neurondoctor.output_text import write_text


def bundle(
    output: Optional[str] = typer.Option(None, "-o", "--output", metavar="FILE",
                                         help="Archive path (default: ./neurondoctor-…)."),
    root: str = typer.Option("/", "--root", metavar="DIR", help="Collect from the Linux tree under DIR."),
    venv: list[str] = typer.Option([], "--venv", metavar="DIR", help="Also inspect this environment (repeatable)."),
    obfuscate: bool = typer.Option(False, "--obfuscate", help="Map hostnames, IPs, instance and account ids."),
    since: Optional[str] = typer.Option(None, "--since", metavar="WHEN",
                                        help="Kernel log window for journalctl, e.g. '2 hours ago'."),
    max_size: float = typer.Option(100.0, "--max-size", metavar="MB", help="Cap on collected data, in MB."),
    max_time: float = typer.Option(120.0, "--max-time", metavar="SECONDS", help="Total time budget in seconds."),
    command_timeout: float = typer.Option(10.0, "--command-timeout", metavar="SECONDS", help="Seconds per command."),
    force: bool = typer.Option(False, "--force", help="Replace the regular file named by -o if it exists."),
) -> None:
    """Write one redacted support archive: the check, command outputs, logs, package lists, a manifest."""
    from neurondoctor.actions.bundle.bundle_command import BundleOptions, build_bundle, describe_result
    from neurondoctor.cli.progress import PlainProgress
    from neurondoctor.typed_paths import check_directories

    check_directories("--venv", venv)
    progress = PlainProgress()
    result = build_bundle(BundleOptions(root=root, output=output, venvs=venv, obfuscate=obfuscate, since=since,
                                        max_size_mb=max_size, time_budget=max_time, command_timeout=command_timeout,
                                        force=force),
                          progress.step)
    write_text(describe_result(result))




app = single_command(bundle)
