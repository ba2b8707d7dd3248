"""`neurondoctor probe ops|shapes|canary`: probes that run inside the target environment."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Callable, Optional

import typer

from neurondoctor import exit_codes
from neurondoctor.cli.output_format import FormatOption, JsonOption, chosen_format
from neurondoctor.cli.typer_apps import command_group
from neurondoctor.output_text import write_text

if TYPE_CHECKING:
    from neurondoctor.report.probe_report import ProbeReport

app = command_group("Probes that run in the target environment.")


def _emit_probe(kind: str, python: Optional[str], as_json: bool, run: Callable[[Callable[[str], None]], ProbeReport],
                render_text: Callable[[ProbeReport], str]) -> None:
    """Run a probe and print its result; with --json a probe that could not run still prints one document (its
    verdict unknown, its reason) and exits with the error's code, the one-line error going to stderr."""
    from neurondoctor.cli.invocation import print_user_error
    from neurondoctor.cli.progress import progress_for_stderr
    from neurondoctor.report.document import render_json
    from neurondoctor.report.probe_report import failed_probe_report
    from neurondoctor.typed_paths import check_interpreters

    check_interpreters("--python", [python] if python else [], os.environ)  # a typo is no probe document
    shown = progress_for_stderr()
    try:
        failed = True
        try:
            report = run(shown.step)
            failed = False
        finally:
            shown.close(failed)  # before any error line, which stays the last one on stderr
    except exit_codes.UserError as error:
        if not as_json:
            raise
        sys.stdout.write(render_json(failed_probe_report(kind, python or "", error.label, error.message)) + "\n")
        print_user_error(error.message, error.label)
        raise typer.Exit(error.exit_code) from None
    if as_json:
        sys.stdout.write(render_json(report) + "\n")
    else:
        write_text(render_text(report))
    raise typer.Exit(report.exit_code())


@app.command("ops")
def probe_ops(
    model_spec: str = typer.Argument(..., metavar="MODEL",
                                     help="file.py:factory, module:factory or builtin:mlp|transformer|convnet"),
    python: Optional[str] = typer.Option(None, "--python", metavar="PYTHON",
                                         help="Target interpreter (default: the active venv)."),
    mode: str = typer.Option("inventory", "--mode", metavar="inventory|xla",
                             help="inventory (every aten op of one step, classified against the release data) or "
                                  "xla (the ops that really fall back to CPU on an XLA device)."),
    as_json: JsonOption = False,
    output_format: FormatOption = "text",
    timeout: float = typer.Option(600.0, "--timeout", metavar="SECONDS",
                                  help="Seconds before the model step is stopped."),
) -> None:
    """List the ops of a model's training step and which of them run on CPU instead of the device."""
    from neurondoctor.actions.probe.ops_command import ProbeOpsOptions, run_probe_ops
    from neurondoctor.report.probe_text import render_inventory_text

    def run(progress: Callable[[str], None]) -> ProbeReport:
        return run_probe_ops(ProbeOpsOptions(model_spec=model_spec, python=python, mode=mode, timeout=timeout,
                                             environ=dict(os.environ), progress=progress))

    _emit_probe("ops", python, chosen_format(as_json, output_format) == "json", run, render_inventory_text)


@app.command("shapes")
def probe_shapes(
    model_spec: str = typer.Argument(..., metavar="MODEL",
                                     help="file.py:factory or module:factory; a 4th item of what the factory "
                                              "returns lists the inputs to try"),
    python: Optional[str] = typer.Option(None, "--python", metavar="PYTHON", help="Target interpreter with torch-xla."),
    as_json: JsonOption = False,
    output_format: FormatOption = "text",
    timeout: float = typer.Option(600.0, "--timeout", metavar="SECONDS",
                                  help="Seconds before the model steps are stopped."),
) -> None:
    """Count the graphs a training step compiles as batch and sequence length vary; suggest buckets."""
    from neurondoctor.actions.probe.shapes_command import ProbeShapesOptions, run_probe_shapes
    from neurondoctor.report.probe_text import render_shapes_text

    def run(progress: Callable[[str], None]) -> ProbeReport:
        return run_probe_shapes(ProbeShapesOptions(model_spec=model_spec, python=python, timeout=timeout,
                                                   environ=dict(os.environ), progress=progress))

    _emit_probe("shapes", python, chosen_format(as_json, output_format) == "json", run, render_shapes_text)


@app.command("canary")
def probe_canary(
    python: Optional[str] = typer.Option(None, "--python", metavar="PYTHON",
                                         help="Target interpreter (default: the active venv)."),
    root: str = typer.Option("/", "--root", metavar="DIR", help="Where to look for /dev/neuron* (default /)."),
    cpu_backend: bool = typer.Option(False, "--cpu-backend", help="Compile only; no device needed."),
    runs: int = typer.Option(100, "--runs", metavar="N", help="Runs for the latency percentiles."),
    as_json: JsonOption = False,
    output_format: FormatOption = "text",
    timeout: float = typer.Option(1800.0, "--timeout", metavar="SECONDS", help="Seconds before the canary is stopped."),
    perf: bool = typer.Option(False, "--perf", help="Time a BF16 matmul and a memory copy on every NeuronCore."),
    quick: bool = typer.Option(False, "--quick", help="With --perf: small sizes, seconds per core."),
) -> None:
    """Trace a small model with torch_neuronx, run it on a NeuronCore, compare with CPU, save/load, time it.
    With --perf: time a fixed BF16 matmul and a device-memory copy on every NeuronCore, against the published
    per-chip figures and against each other."""
    from neurondoctor.actions.probe.canary_command import CanaryOptions, run_canary
    from neurondoctor.report.probe_text import render_canary_text, render_perf_text

    as_json = chosen_format(as_json, output_format) == "json"
    if quick and not perf:
        raise exit_codes.UserError("--quick only goes with --perf")
    _emit_probe("canary", python, as_json, lambda progress: run_canary(CanaryOptions(
        python=python, root=root, cpu_backend=cpu_backend, runs=runs, timeout=timeout, environ=dict(os.environ),
        progress=progress, perf=perf, quick=quick)),
                render_perf_text if perf else render_canary_text)


