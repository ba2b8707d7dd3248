"""`neurondoctor venv create`: a fresh, pinned, guarded environment for a Neuron release."""

from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from neurondoctor import exit_codes
from neurondoctor.cli.typer_apps import command_group
from neurondoctor.output_text import write_text

app = command_group("Build guarded Neuron environments.")


@app.command("create")
def venv_create(
    path: str = typer.Argument(..., metavar="DIR", help="Where the environment goes."),
    release: Optional[str] = typer.Option(
        None, "--release", metavar="X.Y.Z",
        help="Neuron release, e.g. 2.31.1 (default: the newest the data knows for this host and Python)."),
    framework: str = typer.Option(
        "pytorch", "--framework", metavar="NAME",
        help="pytorch (PyTorch/XLA, every instance) or pytorch-native (TorchNeuron: Trn2/Trn3, Python 3.12-3.14)."),
    torch: Optional[str] = typer.Option(None, "--torch", metavar="X.Y",
                                        help="torch X.Y when the release offers several."),
    python: Optional[str] = typer.Option(None, "--python", metavar="PYTHON",
                                         help="Interpreter to build on (default python3)."),
    installer: Optional[str] = typer.Option(None, "--installer", metavar="uv|pip",
                                            help="uv (default when present) or pip."),
    index_url: Optional[str] = typer.Option(None, "--index-url", metavar="URL",
                                            help="A mirror to use instead of PyPI."),
    extra_index_url: list[str] = typer.Option([], "--extra-index-url", metavar="URL",
                                              help="Further index (repeatable)."),
    find_links: list[str] = typer.Option([], "--find-links", metavar="DIR", help="Local wheel directory (repeatable)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and the commands; build nothing."),
    force: bool = typer.Option(False, "--force", help="Replace an existing environment once the new one is built."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="On a failure, the installer's command and output."),
) -> None:
    """Build a fresh, pinned, guarded environment for a Neuron release, then check it."""
    from neurondoctor.actions.venv.create import VenvCreateOptions, create_venv, describe_plan, prepare_venv
    from neurondoctor.cli.progress import progress_for_stderr
    from neurondoctor.report.terminal import render_terminal
    from neurondoctor.typed_paths import check_directories, check_interpreters

    check_interpreters("--python", [python] if python else [], os.environ)
    check_directories("--find-links", find_links)
    prepared = prepare_venv(VenvCreateOptions(
        path=path, release=release, framework=framework, torch=torch, python=python, installer=installer,
        index_url=index_url, extra_index_urls=extra_index_url, find_links=find_links, force=force))
    if dry_run:
        write_text(describe_plan(prepared))
        raise typer.Exit(exit_codes.OK)
    progress = progress_for_stderr()
    failed = True
    try:
        report = create_venv(prepared, progress, verbose)
        failed = False
    except KeyboardInterrupt:
        typer.echo("interrupted: the partial environment was removed", err=True)
        raise typer.Exit(exit_codes.INTERRUPTED) from None
    finally:
        progress.close(failed)
    render_terminal(report, sys.stdout)
    raise typer.Exit(report.exit_code())


