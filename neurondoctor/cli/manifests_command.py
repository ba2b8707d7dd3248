"""`neurondoctor manifests list|show|status|update`: the bundled Neuron release data."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Optional

import typer

from neurondoctor import exit_codes
from neurondoctor.cli.output_format import FormatOption, JsonOption, chosen_format
from neurondoctor.cli.typer_apps import command_group
from neurondoctor.output_text import write_text

if TYPE_CHECKING:
    from neurondoctor.release_data.catalog import ReleaseCatalog

app = command_group("The bundled Neuron release data.")


@app.command("list")
def manifests_list() -> None:
    """List the known Neuron releases with their driver, runtime, compiler and torch-neuronx versions."""
    from neurondoctor.release_data.catalog import load_catalog
    from neurondoctor.release_data.release_table import render_release_list

    catalog = load_catalog()
    write_text(render_release_list(catalog))
    _report_load_problems(catalog)


@app.command("show")
def manifests_show(release: str = typer.Argument(..., metavar="X.Y.Z", help="A release such as 2.31.1.")) -> None:
    """Show every package of one release with its instances and Python versions."""
    from neurondoctor.release_data.catalog import load_catalog
    from neurondoctor.release_data.release_table import render_release

    catalog = load_catalog()
    if release not in catalog.releases:
        raise exit_codes.UserError(f"{release}: not a known Neuron release (newest known: {catalog.latest})")
    write_text(render_release(catalog, release))
    _report_load_problems(catalog)


@app.command("status")
def manifests_status(as_json: JsonOption = False,
                     output_format: FormatOption = "text",
                     verbose: bool = typer.Option(False, "-v", "--verbose",
                                                  help="Every copy, the hand-kept releases, the support rules and "
                                                       "device formats (for maintainers)."),
                     ) -> None:
    """Which Neuron releases the doctor knows, how old that data is and how to get newer; -v for maintainers: which
    copy is in use (bundled, `manifests update`'s, NEURONDOCTOR_MANIFESTS) and where each fact came from."""
    import os

    from neurondoctor import json_data
    from neurondoctor.release_data.manifest_status import data_status, render_status, status_document

    as_json = chosen_format(as_json, output_format) == "json"
    status = data_status(os.environ)
    if as_json:
        sys.stdout.write(json_data.dumps(status_document(status)) + "\n")
    else:
        write_text(render_status(status, verbose=verbose))


@app.command("update")
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


