"""`neurondoctor bootstrap`: set up a Neuron host for a release (cloud-init user-data, AMI builds)."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from neurondoctor.cli.output_format import FormatOption, JsonOption, chosen_format
from neurondoctor.cli.typer_apps import single_command
from neurondoctor.output_text import write_text


def bootstrap(
    release: str = typer.Option(..., "--release", metavar="X.Y.Z", help="The Neuron release to set up, e.g. 2.33.0."),
    venv: str = typer.Option(..., "--venv", metavar="DIR", help="Where the guarded PyTorch environment goes."),
    root: str = typer.Option("/", "--root", metavar="DIR",
                             help="Plan for the tree under DIR (a mounted image, a fixture root); "
                             "with --apply the commands run in `chroot DIR`."),
    image: bool = typer.Option(False, "--image", help="An image build: no device expected (no driver reload, no "
                               "canary, no device checks)."),
    apply: bool = typer.Option(False, "--apply", help="Run the plan (as root), then check."),
    status_file: Optional[str] = typer.Option(None, "--status-file", metavar="FILE", help="Where the result goes "
                                              "(default with --apply: /var/lib/neurondoctor/bootstrap.json)."),
    as_json: JsonOption = False,
    output_format: FormatOption = "text",
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Log every command's output (a failed command's "
                                 "last lines are in the status file either way)."),
) -> None:
    """Set up a Neuron host for a release, for cloud-init user-data and AMI builds: the Neuron repository, kernel
    headers, the release's driver, runtime, collectives and tools (held), a driver reload, the guarded venv, then
    check and the canary. Plans by default; --apply runs it. Idempotent. Exit code = health."""
    from neurondoctor import json_data
    from neurondoctor.actions.bootstrap.bootstrap_run import BootstrapOptions, run_bootstrap, write_status
    from neurondoctor.cli.bootstrap_output import bootstrap_document, render_bootstrap_text
    from neurondoctor.release_data.catalog import load_catalog
    from neurondoctor.report.health import health_exit_code

    as_json = chosen_format(as_json, output_format) == "json"
    options = BootstrapOptions(release=release, venv=venv, root=root, image=image, apply=apply,
                               status_file=status_file, verbose=verbose)
    outcome = run_bootstrap(options, load_catalog(), sys.stderr)
    written = write_status(options, outcome)
    if as_json:
        sys.stdout.write(json_data.dumps(bootstrap_document(options, outcome, written)) + "\n")
    else:
        write_text(render_bootstrap_text(options, outcome, written))
    raise typer.Exit(health_exit_code(outcome.health))


app = single_command(bootstrap)
