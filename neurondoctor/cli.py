"""The command line (ARCHITECTURE.md §7). Heavy modules are imported inside the commands that need them."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from neurondoctor import __version__

app = typer.Typer(add_completion=False, no_args_is_help=True, rich_markup_mode=None,
                  help="Checks that the layers of an AWS Neuron host agree, and says the exact fix.")
manifests_app = typer.Typer(no_args_is_help=True, help="The bundled Neuron release data.")
app.add_typer(manifests_app, name="manifests")

FORMATS = ("text", "json", "markdown")


def _fail_usage(message: str) -> None:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(2)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"neurondoctor {__version__}")
        raise typer.Exit(0)


@app.callback()
def main_options(
    version: bool = typer.Option(False, "--version", callback=_version_callback, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """neurondoctor: keeps Trainium and Inferentia hosts healthy."""


@app.command()
def check(
    root: str = typer.Option("/", "--root", help="Inspect the Linux tree under DIR (a mounted AMI, a rootfs)."),
    venv: list[str] = typer.Option([], "--venv", help="Inspect this environment statically (repeatable)."),
    python: list[str] = typer.Option([], "--python", help="Inspect this interpreter's environment live."),
    release: Optional[str] = typer.Option(None, "--release", help="Judge against this Neuron release."),
    output_format: str = typer.Option("text", "--format", help="text, json or markdown."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json: one JSON document on stdout."),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 on warnings too."),
    select: list[str] = typer.Option([], "--select", help="Only these checks, finding ids or categories."),
    skip: list[str] = typer.Option([], "--skip", help="Leave out these checks, finding ids or categories."),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Facts and per-check timings."),
) -> None:
    """Check the Neuron stack on this host and its Python environments."""
    from pathlib import Path

    from neurondoctor.check_run import CheckOptions, run_check
    from neurondoctor.release_data.catalog import load_catalog
    from neurondoctor.rules.registry import known_selector

    chosen = "json" if as_json else output_format
    if chosen not in FORMATS:
        _fail_usage(f"--format {chosen!r}: choose one of {', '.join(FORMATS)}")
    if not Path(root).is_dir():
        _fail_usage(f"--root {root}: not a directory")
    for item in [*select, *skip]:
        if not known_selector(item):
            _fail_usage(f"--select/--skip {item!r}: not a check, finding id or category")
    catalog = load_catalog()
    if release is not None and release not in catalog.releases:
        _fail_usage(f"--release {release}: not a known Neuron release (newest known: {catalog.latest}; "
                    "see `neurondoctor manifests list`)")
    report = run_check(CheckOptions(root=root, venvs=venv, pythons=python, release=release, select=select,
                                    skip=skip), catalog=catalog)
    if chosen == "json":
        import json

        sys.stdout.write(json.dumps(report.to_json(), default=str) + "\n")
        for problem in report.input_problems:
            sys.stderr.write(f"error: {problem.source}: {problem.message}\n")
    elif chosen == "markdown":
        from neurondoctor.report.markdown import render_markdown

        sys.stdout.write(render_markdown(report))
    else:
        from neurondoctor.report.terminal import render_terminal

        render_terminal(report, sys.stdout, verbose=verbose)
    raise typer.Exit(report.exit_code(strict))


@manifests_app.command("list")
def manifests_list() -> None:
    """List the known Neuron releases with their driver, runtime, compiler and torch-neuronx versions."""
    from neurondoctor.release_data.catalog import load_catalog
    from neurondoctor.release_data.release_table import render_release_list

    catalog = load_catalog()
    sys.stdout.write(render_release_list(catalog))
    _report_load_problems(catalog)


@manifests_app.command("show")
def manifests_show(release: str = typer.Argument(..., help="A release such as 2.31.1.")) -> None:
    """Show every package of one release with its instances and Python versions."""
    from neurondoctor.release_data.catalog import load_catalog
    from neurondoctor.release_data.release_table import render_release

    catalog = load_catalog()
    if release not in catalog.releases:
        _fail_usage(f"{release}: not a known Neuron release (newest known: {catalog.latest})")
    sys.stdout.write(render_release(catalog, release))
    _report_load_problems(catalog)


def _report_load_problems(catalog: object) -> None:
    problems = getattr(catalog, "problems", [])
    for problem in problems:
        typer.echo(f"error: {problem.path}: {problem.message}", err=True)
    if problems:
        raise typer.Exit(2)


def main() -> None:
    app(prog_name="neurondoctor")
