"""`neurondoctor upgrade`: move a host and its environments to another Neuron release, and back."""

from __future__ import annotations

import sys
from typing import Optional

import typer

from neurondoctor.cli.output_format import FormatOption, JsonOption, chosen_format
from neurondoctor.cli.typer_apps import single_command
from neurondoctor.output_text import write_text


def upgrade(
    to: str = typer.Option(..., "--to", metavar="X.Y.Z", help="The Neuron release to move to, e.g. 2.33.0."),
    root: str = typer.Option("/", "--root", metavar="DIR", help="Plan for the tree under DIR (a mounted image, a "
                             "fixture root); with --apply the commands run in `chroot DIR`."),
    venv: list[str] = typer.Option([], "--venv", metavar="PATH", help="An environment to move too (repeatable)."),
    python: list[str] = typer.Option([], "--python", metavar="EXE", help="An interpreter whose environment moves "
                                     "too (repeatable)."),
    apply: bool = typer.Option(False, "--apply", help="Run the plan step by step (as root), then check."),
    rollback: bool = typer.Option(False, "--rollback", help="Undo, last first, every step the status file records "
                                  "as done (as root), then check."),
    stop_holders: bool = typer.Option(False, "--stop-holders", help="Let --apply stop the processes that hold "
                                      "NeuronCores (named in the plan); without it --apply refuses while they run."),
    status_file: Optional[str] = typer.Option(None, "--status-file", metavar="FILE", help="Where the run is recorded "
                                              "(default with --apply/--rollback: /var/lib/neurondoctor/upgrade.json)."),
    as_json: JsonOption = False,
    output_format: FormatOption = "text",
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Log every command's output."),
) -> None:
    """Move this host (driver, runtime, collectives, tools) and the named environments to another Neuron release,
    step by step with each step's undo; or go back with --rollback. Plans by default (writes nothing). Exit 0
    planned or applied, 1 a step failed or the preflight refused, 2 usage, 3 could not judge."""
    from neurondoctor import json_data
    from neurondoctor.actions.upgrade.upgrade_run import UpgradeOptions, run_upgrade
    from neurondoctor.cli.upgrade_output import render_upgrade_text, upgrade_document
    from neurondoctor.release_data.catalog import load_catalog

    as_json = chosen_format(as_json, output_format) == "json"
    options = UpgradeOptions(target=to, root=root, venvs=venv, pythons=python, apply=apply, rollback=rollback,
                             stop_holders=stop_holders, status_file=status_file, verbose=verbose)
    outcome = run_upgrade(options, load_catalog(), sys.stderr)
    if as_json:
        sys.stdout.write(json_data.dumps(upgrade_document(options, outcome)) + "\n")
    else:
        write_text(render_upgrade_text(options, outcome))
    raise typer.Exit(outcome.exit_code)


app = single_command(upgrade)
