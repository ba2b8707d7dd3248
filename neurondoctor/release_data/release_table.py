"""Plain-text tables for `manifests list` and `manifests show` (no colour, so they pipe into grep)."""

from __future__ import annotations

from neurondoctor.release_data.catalog import PackageEntry, ReleaseCatalog

LIST_COLUMNS = (
    ("dkms", "aws-neuronx-dkms"),
    ("runtime-lib", "aws-neuronx-runtime-lib"),
    ("collectives", "aws-neuronx-collectives"),
    ("tools", "aws-neuronx-tools"),
    ("neuronx-cc", "neuronx-cc"),
    ("torch-neuronx", "torch-neuronx"),
    ("libneuronxla", "libneuronxla"),
)


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(row[index]) for row in [header, *rows]) for index in range(len(header))]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in [header, *rows]]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(lines) + "\n"


def _versions(entries: list[PackageEntry]) -> str:
    if not entries:
        return "-"
    return ", ".join(entry.version + ("*" if entry.carried_from else "") for entry in entries)


def render_release_list(catalog: ReleaseCatalog) -> str:
    header = ["release", *(title for title, _ in LIST_COLUMNS), "python"]
    rows = []
    for release in catalog.release_names:
        compiler = catalog.entries(release, "neuronx-cc")
        cells = ("?" if catalog.not_known_in(release, name) else _versions(catalog.entries(release, name))
                 for _, name in LIST_COLUMNS)
        rows.append([release, *cells,
                     ", ".join(compiler[0].python) if compiler else "?" if release in catalog.partial else "-"])
    source = catalog.sdk.get("source", {})
    footer = (f"\n{len(rows)} releases; data: {catalog.source_dir} (AWS manifest "
              f"{catalog.sdk.get('manifest_version', '?')}, {source.get('manifest_date', '?')}). "
              "* = installed from an earlier release by the official instructions."
              + (f" ? = not known: {', '.join(sorted(catalog.partial))} is known only in part (manifests status)."
                 if catalog.partial else "") + "\n")
    return _table(header, rows) + footer


def render_release(catalog: ReleaseCatalog, release: str) -> str:
    entries = sorted(catalog.releases.get(release, ()), key=lambda entry: entry.name)
    rows = [[entry.manifest_name, entry.version, ", ".join(entry.instances) or "-", ", ".join(entry.python) or "-",
             f"from {entry.carried_from}" if entry.carried_from else ""] for entry in entries]
    title = f"Neuron {release}: {len(rows)} packages\n\n"
    return title + _table(["package", "version", "instances", "python", "note"], rows)
