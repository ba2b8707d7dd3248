"""`neurondoctor fleet summarize|check`: many nodes' reports at once, and the cluster preflight."""

from __future__ import annotations

import os
import sys
from typing import Optional

import typer

from neurondoctor import exit_codes
from neurondoctor.cli.output_format import chosen_format
from neurondoctor.cli.typer_apps import command_group
from neurondoctor.output_text import write_text

app = command_group("Many nodes' reports at once.")


@app.command("summarize")
def fleet_summarize(
    paths: list[str] = typer.Argument(..., metavar="PATH...",
                                      help="REPORT.json, REPORTS.jsonl or a directory of them (repeatable)."),
    as_json: bool = typer.Option(False, "--json", help="One neurondoctor.fleet/1 document on stdout."),
    output_format: str = typer.Option("text", "--format", metavar="FORMAT",
                                      help="text, markdown (for a ticket or a wiki page) or json (as --json)."),
) -> None:
    """Nodes per release, version drift per component (the majority and the nodes that differ), failing findings
    with their nodes, nodes whose verdict is unknown, unreadable reports. Exit 1 when the fleet is not uniform or a
    node is unhealthy, else 3 when a node is unknown or a report unreadable, else 0."""
    from neurondoctor import json_data
    from neurondoctor.actions.fleet.summary import summarize_paths
    from neurondoctor.report.fleet import render_fleet_markdown, render_fleet_text

    output_format = chosen_format(as_json, output_format, ("text", "markdown", "json"))
    for given in paths:  # a typo is a usage error, not a fleet of 0 nodes
        if not os.path.lexists(given):
            raise exit_codes.UserError(f"{given}: no such file or directory")
    summary = summarize_paths(paths)
    if output_format == "json":
        sys.stdout.write(json_data.dumps(summary.to_json()) + "\n")
    else:
        write_text(render_fleet_markdown(summary) if output_format == "markdown" else render_fleet_text(summary))
    raise typer.Exit(summary.exit_code())


@app.command("check")
def fleet_check(
    slurm: bool = typer.Option(False, "--slurm", help="Run on Slurm (the only engine): inside an allocation, or on "
                                                      "the nodes named."),
    nodes: Optional[str] = typer.Option(None, "--nodes", metavar="LIST", help="Slurm node list, e.g. trn-[1-4]."),
    partition: Optional[str] = typer.Option(None, "--partition", metavar="P", help="Every node of partition P."),
    deadline: float = typer.Option(60.0, "--deadline", metavar="SECONDS",
                                   help="Each node's answer within this (default 60); later is unreachable."),
    collectives: bool = typer.Option(False, "--collectives",
                                     help="Also run nccom-test all-reduce within and between nodes (needs devices)."),
    drain: bool = typer.Option(False, "--drain", help="Drain the nodes at fault (reason neurondoctor-preflight: ...)."),
    save_reports: Optional[str] = typer.Option(None, "--save-reports", metavar="DIR",
                                               help="Keep every node's report as DIR/NODE.json."),
    remote_command: str = typer.Option("neurondoctor", "--remote-command", metavar="PATH",
                                       help="The neurondoctor command on the nodes (default: from their PATH)."),
    root: Optional[str] = typer.Option(None, "--root", metavar="DIR", help="Passed to every node's check."),
    venv: list[str] = typer.Option([], "--venv", metavar="DIR", help="Passed to every node's check (repeatable)."),
    release: Optional[str] = typer.Option(None, "--release", metavar="X.Y.Z", help="Passed to every node's check."),
    as_json: bool = typer.Option(False, "--json", help="One neurondoctor.fleet/1 document with preflight on stdout."),
    output_format: str = typer.Option("text", "--format", metavar="FORMAT", help="text or json (as --json)."),
) -> None:
    """Cluster preflight: every node's own check through srun, then what the nodes must share (release and
    packages, neuronx-cc, NEURON_CC_FLAGS, LNC, the root communicator, the compile cache, instance type, EFA and
    devices), naming the nodes that differ from the majority. Exit 1 a node at fault, 3 a node unreachable or
    unknown, else 0."""
    from neurondoctor import json_data
    from neurondoctor.actions.fleet.preflight_run import PreflightOptions, forwarded_flags, run_preflight
    from neurondoctor.report.preflight import render_preflight_text

    output_format = chosen_format(as_json, output_format)
    if not slurm:
        raise exit_codes.UserError("fleet check needs --slurm: Slurm is the engine it runs on")
    from neurondoctor.cli.progress import progress_for_stderr

    progress = progress_for_stderr()
    options = PreflightOptions(nodes=nodes, partition=partition, deadline_s=deadline, drain=drain,
                               collectives=collectives, save_reports=save_reports, remote_command=remote_command,
                               forwarded=forwarded_flags(release, venv, root), progress=progress.step)
    try:
        preflight = run_preflight(options, os.environ)
    except BaseException:
        progress.close(failed=True)
        raise
    progress.close()
    if output_format == "json":
        sys.stdout.write(json_data.dumps(preflight.to_json()) + "\n")
    else:
        write_text(render_preflight_text(preflight))
    raise typer.Exit(preflight.exit_code())


@app.command("nccom-step", hidden=True, context_settings={"allow_extra_args": True,
                                                                  "ignore_unknown_options": True})
def fleet_nccom_step(
    context: typer.Context,
    root_comm: Optional[str] = typer.Option(None, "--root-comm", metavar="HOST:PORT"),
) -> None:
    """What `fleet check --collectives` runs on a node: nccom-test with the arguments after `--`, one JSON document
    out (its table and its --report-to-json-file report)."""
    from neurondoctor import json_data
    from neurondoctor.actions.fleet.collectives import nccom_step

    sys.stdout.write(json_data.dumps(nccom_step([str(word) for word in context.args], root_comm)) + "\n")


