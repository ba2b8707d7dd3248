"""`cache status`: every compile cache this host and environment configure, counted (docs/cache.md).

Each location is the host's (`--root`): neuronx-cc's (`--cache_dir` in NEURON_CC_FLAGS, NEURON_COMPILE_CACHE_URL,
the default), and vLLM's; or the directories named on the command line. A remote URL (`s3://…`) is named and never
contacted. Nothing is parsed beyond names and sizes, so a cache of 100,000 entries is counted in seconds. A location
is shown with its secrets redacted (a URL's credentials), in the text and in the document.
"""

from __future__ import annotations

import dataclasses
import datetime
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from neurondoctor import exit_codes
from neurondoctor.actions.cache.failure_meanings import explain_failures
from neurondoctor.facts.cache_index import ENTRY_STATES, LAYOUT_VLLM, CacheIndex, KeyedCache
from neurondoctor.facts.mounts import PathMount
from neurondoctor.host.cache_index import index_cache
from neurondoctor.host.compile_cache import SHOWN_WHEN_PRESENT, cache_location, cache_locations
from neurondoctor.host.rootfs import RootFS
from neurondoctor.output_text import field_text
from neurondoctor.redaction import redact_secrets

SCHEMA = "neurondoctor.cache/1"


@dataclass
class CacheLocation:
    """A cache and where it was configured; `index` is None for a remote one. `path` is as shown (redacted); the
    index's `host_path` is where the count was made (the bundle reads failed entries' logs there)."""

    path: str
    source: str
    remote: bool
    index: Optional[CacheIndex]
    mount: Optional[PathMount] = None  # from the host's mount table: a read-only or a network mount is said


def cache_status(root: str, environ: Mapping[str, str], paths: Sequence[str] = (),
                 deadline_s: Optional[float] = None) -> list[CacheLocation]:
    """Each cache counted whole (`deadline_s` bounds each count: the bundle's time budget)."""
    from neurondoctor.host.live_view import LiveView
    from neurondoctor.host.mount_table import path_mount

    fs = RootFS(root)
    named = [(path, "named") for path in paths] or cache_locations(environ, environ.get("HOME"))
    table = None
    found = []
    for path, source in named:
        remote = "://" in path
        inner = os.path.abspath(path) if not remote else path  # a named path is inside the root, as the others
        index = None if remote else index_cache(fs, inner, deadline_s=deadline_s)
        explain_failures(index)
        if index is not None and not index.exists and source in SHOWN_WHEN_PRESENT:
            continue
        location = CacheLocation(redact_secrets(path), source, remote, index)
        if index is not None and index.exists:
            table = table if table is not None else LiveView(fs).mount_table()
            location.mount = path_mount(fs, table, inner, redact_secrets(path))
        found.append(location)
    return found


def local_cache(named: Optional[str], environ: Mapping[str, str], action: str) -> str:
    """The cache `verify` or `prune` works on: the one named, else the one neuronx-cc uses here; a remote one is
    refused (UserError)."""
    path = named or cache_location(environ)[0]
    if "://" in path:
        raise exit_codes.UserError(f"{path} is a remote cache: {action} works on a local one (name it as DIR)")
    return path


def status_document(root: str, locations: Sequence[CacheLocation]) -> dict[str, Any]:
    """`neurondoctor.cache/1`: each location with its index (docs/cache.md)."""
    return {"schema": SCHEMA, "root": root,
            "caches": [{**(_index_fields(location.index) if location.index else {"exists": None}),
                        "path": location.path, "source": location.source, "remote": location.remote,
                        "mount": _mount_fields(location.mount)}
                       for location in locations]}


def _mount_fields(mount: Optional[PathMount]) -> Optional[dict[str, Any]]:
    if mount is None:
        return None
    return {"point": mount.point, "filesystem": mount.filesystem, "read_only": mount.read_only,
            "network": mount.network, "table": mount.table}


def _mount_text(mount: Optional[PathMount]) -> str:
    """What the mount changes for a cache: nothing is written on a read-only one; a network one is shared with
    other nodes, whose compiles hold locks this node cannot see."""
    if mount is None:
        return ""
    said = []
    if mount.read_only:
        said.append(f"on a read-only mount ({mount.point}): nothing compiled is kept")
    if mount.network:
        said.append(f"on {mount.filesystem} ({mount.point}): other nodes may share it and hold its locks")
    return "".join(f" · {field_text(item)}" for item in said)


def _keyed_lines(keyed: KeyedCache) -> list[str]:
    if keyed.layout == LAYOUT_VLLM:
        return [f"  vLLM Neuron layout: {_entries(keyed.entries)} under 32-character keys · "
                f"{keyed.lock_files:,} lock file(s) · {size_text(keyed.bytes)}; what an entry holds is not "
                "published, so its state is not judged"]
    return [f"  TorchNeuron NEFF cache: {keyed.done or 0:,} NEFF(s) · {keyed.incomplete or 0:,} unfinished "
            f"write(s) (.tmp) · {size_text(keyed.bytes)}"]


def _index_fields(index: CacheIndex) -> dict[str, Any]:
    fields = dataclasses.asdict(index)
    fields.pop("entries")  # kept for `cache prune` only
    fields["host_path"] = index.host_path and redact_secrets(index.host_path)
    return {key: value for key, value in fields.items() if not key.startswith("_")}


def size_text(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} TiB"  # pragma: no cover - the loop returns at GiB


def _entries(count: int) -> str:
    return f"{count:,} entry" if count == 1 else f"{count:,} entries"


def _day(stamp: Optional[float]) -> str:
    return datetime.datetime.fromtimestamp(stamp, datetime.timezone.utc).strftime("%Y-%m-%d") if stamp else "?"


def render_status_text(locations: Sequence[CacheLocation]) -> str:
    """Every name, path, log line and command in it is the host's: each is one field (`field_text`)."""
    lines = []
    for location in locations:
        head = f"{field_text(location.path)} ({location.source})"
        index = location.index
        if index is None:
            lines.append(f"{head}: remote, not contacted")
            continue
        if index.problem:
            lines.append(f"{head}: {field_text(index.problem)}")
            continue
        if not index.exists:
            lines.append(f"{head}: not present")
            continue
        lines.append(f"{head}: {_entries(index.counted)}" + (f" ({index.cut})" if index.cut else "")
                     + _mount_text(location.mount))
        if index.keyed is not None:
            lines += _keyed_lines(index.keyed)
        width = max((len(field_text(compiler.name)) for compiler in index.compilers), default=0)
        for compiler in index.compilers:
            states = " · ".join(f"{compiler.states[state]:,} {state}" for state in ENTRY_STATES)
            extra = [f"{compiler.links:,} links (not followed)"] if compiler.links else []
            extra += ["registry"] if compiler.registry else []
            lines.append(f"  {field_text(compiler.name):<{width}}  {_entries(compiler.entries)}: {states}"
                         + "".join(f" · {item}" for item in extra)
                         + f" · {size_text(compiler.bytes)} · {_day(compiler.oldest)} to {_day(compiler.newest)}")
            for name in compiler.failed_entries:
                lines.append(f"    failed {field_text(name)}: {field_text(compiler.failed_errors.get(name, ''))}")
                if name in compiler.failed_meanings:
                    lines.append(f"      meaning: {field_text(compiler.failed_meanings[name])}")
        for lock in index.locks:
            holder = (f"held by {lock.holder_pid} ({field_text(lock.holder_command or '?')})" if lock.holder_pid
                      else "held by no process on this host")
            age = f", {lock.age_s / 60:.0f} min old" if lock.age_s is not None else ""
            lines.append(f"  lock {field_text(lock.entry)}/{field_text(lock.name)}: {holder}{age}")
        if index.other_names:
            lines.append(f"  {index.other_names:,} other names (not neuronxcc-* compiler directories)")
        lines += [f"  unreadable: {field_text(problem)}" for problem in index.unreadable]
    return "\n".join(lines) + "\n"
