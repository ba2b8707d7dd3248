"""The command line: every command, one typer application (docs/contracts.md §7).

One parser for all commands gives them one help layout (`-h` or `--help`), one error line and one usage exit (2).
Heavy modules are imported inside the commands that need them.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Annotated, Any, Callable, Optional

import typer
from typer.core import TyperGroup

from neurondoctor import __version__, exit_codes
from neurondoctor.cli.cache_command import cache_app
from neurondoctor.cli.check_command import check
from neurondoctor.cli.health_command import health
from neurondoctor.cli.help_format import use_plain_metavars
from neurondoctor.cli.invocation import Interrupted, StdoutLost, is_stdout_error
from neurondoctor.cli.output_format import FORMAT_HELP, chosen_format
from neurondoctor.output_text import write_text

if TYPE_CHECKING:
    from neurondoctor.release_data.catalog import ReleaseCatalog
    from neurondoctor.report.model import ProbeReport


class CommandGroup(TyperGroup):
    """The top group: a stdout that cannot take the output and a Ctrl-C leave the commands as the doctor's own
    exceptions, which `cli.run` turns into exit 3 and 130 with one line (typer would make the first exit 1, the
    verdict "unhealthy", and say nothing of the second)."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as interrupt:
            raise Interrupted from interrupt
        except OSError as error:
            if is_stdout_error(error):
                raise StdoutLost(error) from error
            raise


use_plain_metavars()
app = typer.Typer(cls=CommandGroup, no_args_is_help=True, rich_markup_mode=None, pretty_exceptions_enable=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Checks that the layers of an AWS Neuron host agree, and says the exact fix.")
manifests_app = typer.Typer(no_args_is_help=True, help="The bundled Neuron release data.")
app.add_typer(manifests_app, name="manifests")
fleet_app = typer.Typer(no_args_is_help=True, help="Many nodes' reports at once.")
app.add_typer(fleet_app, name="fleet")


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"neurondoctor {__version__}")
        raise typer.Exit(exit_codes.OK)


@app.callback()
def main_options(
    version: Annotated[bool, typer.Option("-V", "--version", callback=_version_callback, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """neurondoctor: keeps Trainium and Inferentia hosts healthy."""


app.command("check")(check)
app.command("health")(health)
app.add_typer(cache_app, name="cache")


venv_app = typer.Typer(no_args_is_help=True, help="Build guarded Neuron environments.")
app.add_typer(venv_app, name="venv")


@venv_app.command("create")
def venv_create(
    path: str = typer.Argument(..., metavar="DIR", help="Where the environment goes."),
    release: str = typer.Option(..., "--release", metavar="X.Y.Z", help="Neuron release, e.g. 2.31.1."),
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


probe_app = typer.Typer(no_args_is_help=True, help="Probes that run in the target environment.")
app.add_typer(probe_app, name="probe")


def _emit_probe(kind: str, python: Optional[str], as_json: bool, run: Callable[[Callable[[str], None]], ProbeReport],
                render_text: Callable[[ProbeReport], str]) -> None:
    """Run a probe and print its result; with --json a probe that could not run still prints one document (its
    verdict unknown, its reason) and exits with the error's code, the one-line error going to stderr."""
    from neurondoctor.cli.invocation import print_user_error
    from neurondoctor.cli.progress import progress_for_stderr
    from neurondoctor.report.document import render_json
    from neurondoctor.report.model import failed_probe_report
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


@probe_app.command("ops")
def probe_ops(
    model_spec: str = typer.Argument(..., metavar="MODEL",
                                     help="file.py:factory, module:factory or builtin:mlp|transformer|convnet"),
    python: Optional[str] = typer.Option(None, "--python", metavar="PYTHON",
                                         help="Target interpreter (default: the active venv)."),
    mode: str = typer.Option("inventory", "--mode", metavar="inventory|xla",
                             help="inventory (every aten op of one step, classified against the release data) or "
                                  "xla (the ops that really fall back to CPU on an XLA device)."),
    as_json: bool = typer.Option(False, "--json", help="One JSON document on stdout."),
    output_format: str = typer.Option("text", "--format", metavar="FORMAT", help=FORMAT_HELP),
    timeout: float = typer.Option(600.0, "--timeout", metavar="SECONDS",
                                  help="Seconds before the model step is stopped."),
) -> None:
    """List the ops of a model's training step and which of them run on CPU instead of the device."""
    import os

    from neurondoctor.actions.probe.ops_command import ProbeOpsOptions, run_probe_ops
    from neurondoctor.report.probe_text import render_inventory_text

    as_json = chosen_format(as_json, output_format) == "json"
    _emit_probe("ops", python, as_json, lambda progress: run_probe_ops(ProbeOpsOptions(
        model_spec=model_spec, python=python, mode=mode, timeout=timeout, environ=dict(os.environ),
        progress=progress)),
                render_inventory_text)


@probe_app.command("shapes")
def probe_shapes(
    model_spec: str = typer.Argument(..., metavar="MODEL",
                                     help="file.py:factory or module:factory; a 4th item of what the factory "
                                              "returns lists the inputs to try"),
    python: Optional[str] = typer.Option(None, "--python", metavar="PYTHON", help="Target interpreter with torch-xla."),
    as_json: bool = typer.Option(False, "--json", help="One JSON document on stdout."),
    output_format: str = typer.Option("text", "--format", metavar="FORMAT", help=FORMAT_HELP),
    timeout: float = typer.Option(600.0, "--timeout", metavar="SECONDS",
                                  help="Seconds before the model steps are stopped."),
) -> None:
    """Count the graphs a training step compiles as batch and sequence length vary; suggest buckets."""
    import os

    from neurondoctor.actions.probe.shapes_command import ProbeShapesOptions, run_probe_shapes
    from neurondoctor.report.probe_text import render_shapes_text

    as_json = chosen_format(as_json, output_format) == "json"
    _emit_probe("shapes", python, as_json, lambda progress: run_probe_shapes(ProbeShapesOptions(
        model_spec=model_spec, python=python, timeout=timeout, environ=dict(os.environ), progress=progress)),
                render_shapes_text)


@probe_app.command("canary")
def probe_canary(
    python: Optional[str] = typer.Option(None, "--python", metavar="PYTHON",
                                         help="Target interpreter (default: the active venv)."),
    root: str = typer.Option("/", "--root", metavar="DIR", help="Where to look for /dev/neuron* (default /)."),
    cpu_backend: bool = typer.Option(False, "--cpu-backend", help="Compile only; no device needed."),
    runs: int = typer.Option(100, "--runs", metavar="N", help="Runs for the latency percentiles."),
    as_json: bool = typer.Option(False, "--json", help="One JSON document on stdout."),
    output_format: str = typer.Option("text", "--format", metavar="FORMAT", help=FORMAT_HELP),
    timeout: float = typer.Option(1800.0, "--timeout", metavar="SECONDS", help="Seconds before the canary is stopped."),
    perf: bool = typer.Option(False, "--perf", help="Time a BF16 matmul and a memory copy on every NeuronCore."),
    quick: bool = typer.Option(False, "--quick", help="With --perf: small sizes, seconds per core."),
) -> None:
    """Trace a small model with torch_neuronx, run it on a NeuronCore, compare with CPU, save/load, time it.
    With --perf: time a fixed BF16 matmul and a device-memory copy on every NeuronCore, against the published
    per-chip figures and against each other."""
    import os

    from neurondoctor.actions.probe.canary_command import CanaryOptions, run_canary
    from neurondoctor.report.probe_text import render_canary_text, render_perf_text

    as_json = chosen_format(as_json, output_format) == "json"
    if quick and not perf:
        raise exit_codes.UserError("--quick only goes with --perf")
    _emit_probe("canary", python, as_json, lambda progress: run_canary(CanaryOptions(
        python=python, root=root, cpu_backend=cpu_backend, runs=runs, timeout=timeout, environ=dict(os.environ),
        progress=progress, perf=perf, quick=quick)),
                render_perf_text if perf else render_canary_text)


@app.command()
def explain(
    source: str = typer.Argument("-", metavar="LOGFILE|-|FINDING-ID",
                                 help="A compiler/runtime log, - for stdin (default), or a finding id."),
    as_json: bool = typer.Option(False, "--json", help="One JSON document: {category, op, variant, ways_out}."),
    output_format: str = typer.Option("text", "--format", metavar="FORMAT", help=FORMAT_HELP),
) -> None:
    """What an error text (or a finding id) means and the ways out; exit 0 recognised, 3 not, 2 unreadable."""
    from neurondoctor.cli.explain_command import run_explain

    raise typer.Exit(run_explain(source, chosen_format(as_json, output_format) == "json"))


@app.command()
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


@manifests_app.command("list")
def manifests_list() -> None:
    """List the known Neuron releases with their driver, runtime, compiler and torch-neuronx versions."""
    from neurondoctor.release_data.catalog import load_catalog
    from neurondoctor.release_data.release_table import render_release_list

    catalog = load_catalog()
    write_text(render_release_list(catalog))
    _report_load_problems(catalog)


@manifests_app.command("show")
def manifests_show(release: str = typer.Argument(..., metavar="X.Y.Z", help="A release such as 2.31.1.")) -> None:
    """Show every package of one release with its instances and Python versions."""
    from neurondoctor.release_data.catalog import load_catalog
    from neurondoctor.release_data.release_table import render_release

    catalog = load_catalog()
    if release not in catalog.releases:
        raise exit_codes.UserError(f"{release}: not a known Neuron release (newest known: {catalog.latest})")
    write_text(render_release(catalog, release))
    _report_load_problems(catalog)


@manifests_app.command("status")
def manifests_status(as_json: bool = typer.Option(False, "--json", help="One JSON document on stdout."),
                     output_format: str = typer.Option("text", "--format", metavar="FORMAT", help=FORMAT_HELP),
                     ) -> None:
    """Which release data is in use (bundled, `manifests update`'s copy, NEURONDOCTOR_MANIFESTS), its newest
    release, the manifest's date and age, and where it came from."""
    import json
    import os

    from neurondoctor.release_data.manifest_status import data_status, render_status, status_document

    as_json = chosen_format(as_json, output_format) == "json"
    status = data_status(os.environ)
    if as_json:
        sys.stdout.write(json.dumps(status_document(status)) + "\n")
    else:
        write_text(render_status(status))


@manifests_app.command("update")
def manifests_update(
    url: Optional[str] = typer.Option(None, "--url", metavar="URL", help="Where to fetch n2-manifest.json (default: "
                                      "$NEURONDOCTOR_MANIFEST_URL, else AWS's)."),
    file: Optional[str] = typer.Option(None, "--file", metavar="FILE",
                                       help="Use this n2-manifest.json instead (air-gapped hosts)."),
    timeout: float = typer.Option(20.0, "--timeout", metavar="SECONDS",
                                  help="Seconds the whole download may take (positive)."),
) -> None:
    """Fetch a newer AWS release manifest, validate it, and use it from now on (never older than the one in use)."""
    import os

    from neurondoctor.release_data.catalog import (
        MANIFEST_URL_ENV,
        bundled_manifest_dir,
        cache_manifest_dir,
        load_catalog,
    )
    from neurondoctor.release_data.manifest_update import (
        UpdateError,
        fetch_manifest,
        install_manifest,
        newest_in_use,
        read_manifest_file,
    )

    if url and file:
        raise exit_codes.UserError("--url and --file: give one of them")
    bundled = load_catalog(bundled_manifest_dir())
    cache = cache_manifest_dir(os.environ)
    # an organisation's mirror of the manifest (air-gapped fleets), named once for every host
    source = file or url or os.environ.get(MANIFEST_URL_ENV) or str(bundled.compat.get("manifest_source_url", ""))
    try:
        data = read_manifest_file(file) if file else fetch_manifest(source, timeout=timeout)
        result = install_manifest(data, source, cache, floor_version=newest_in_use(bundled_manifest_dir(), cache))
    except UpdateError as error:
        raise exit_codes.UserError(str(error)) from error
    before = f" (was {result.replaced})" if result.replaced else ""
    typer.echo(f"release data {result.manifest_version}{before}: {result.releases} releases in {result.directory}")


def _report_load_problems(catalog: ReleaseCatalog) -> None:
    problems = catalog.problems
    if problems:
        raise exit_codes.UserError("; ".join(f"{problem.path}: {problem.message}" for problem in problems))


@fleet_app.command("summarize")
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
    import json

    from neurondoctor.actions.fleet.summary import summarize_paths
    from neurondoctor.report.fleet import render_fleet_markdown, render_fleet_text

    output_format = chosen_format(as_json, output_format, ("text", "markdown", "json"))
    for given in paths:  # a typo is a usage error, not a fleet of 0 nodes
        if not os.path.lexists(given):
            raise exit_codes.UserError(f"{given}: no such file or directory")
    summary = summarize_paths(paths)
    if output_format == "json":
        sys.stdout.write(json.dumps(summary.to_json()) + "\n")
    else:
        write_text(render_fleet_markdown(summary) if output_format == "markdown" else render_fleet_text(summary))
    raise typer.Exit(summary.exit_code())


@fleet_app.command("check")
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
    import json

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
        sys.stdout.write(json.dumps(preflight.to_json()) + "\n")
    else:
        write_text(render_preflight_text(preflight))
    raise typer.Exit(preflight.exit_code())


@fleet_app.command("nccom-step", hidden=True, context_settings={"allow_extra_args": True,
                                                                  "ignore_unknown_options": True})
def fleet_nccom_step(
    context: typer.Context,
    root_comm: Optional[str] = typer.Option(None, "--root-comm", metavar="HOST:PORT"),
) -> None:
    """What `fleet check --collectives` runs on a node: nccom-test with the arguments after `--`, one JSON document
    out (its table and its --report-to-json-file report)."""
    import json

    from neurondoctor.actions.fleet.collectives import nccom_step

    sys.stdout.write(json.dumps(nccom_step([str(word) for word in context.args], root_comm)) + "\n")


@app.command()
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
    as_json: bool = typer.Option(False, "--json", help="One JSON document on stdout."),
    output_format: str = typer.Option("text", "--format", metavar="FORMAT", help=FORMAT_HELP),
    verbose: bool = typer.Option(False, "-v", "--verbose", help="Log every command's output (a failed command's "
                                 "last lines are in the status file either way)."),
) -> None:
    """Set up a Neuron host for a release, for cloud-init user-data and AMI builds: the Neuron repository, kernel
    headers, the release's driver, runtime, collectives and tools (held), a driver reload, the guarded venv, then
    check and the canary. Plans by default; --apply runs it. Idempotent. Exit code = health."""
    import json

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
        sys.stdout.write(json.dumps(bootstrap_document(options, outcome, written)) + "\n")
    else:
        write_text(render_bootstrap_text(options, outcome, written))
    raise typer.Exit(health_exit_code(outcome.health))
