"""`neurondoctor bundle`: run every collector within its bounds and write one redacted `.tar.gz`.

Bounded (sos report's lessons, peers.md): a timeout per command, a total time budget after which the remaining
collectors are recorded as skipped, a size cap after which members are truncated (recorded), read-only on the
host. `manifest.json` accounts for every collector: what it produced, how long it took, whether it timed out,
failed or was skipped, and its bytes. An archive comes out even when most collectors fail.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import socket
import tarfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from neurondoctor import exit_codes
from neurondoctor.actions.bundle.collectors import (
    BundleContext,
    CollectorTimeout,
    Member,
    PartialCollection,
    Skipped,
    command_collectors,
    file_collectors,
)
from neurondoctor.host.rootfs import RootFS
from neurondoctor.redaction import Redactor

DEFAULT_MAX_SIZE_MB = 100
DEFAULT_TIME_BUDGET = 120.0
DEFAULT_COMMAND_TIMEOUT = 10.0


@dataclass
class CollectorRecord:
    name: str
    status: str
    duration_s: float
    members: list[str] = field(default_factory=list)
    bytes: int = 0
    error: Optional[str] = None
    truncated: list[str] = field(default_factory=list)


@dataclass
class BundleResult:
    archive: Path
    size: int
    records: list[CollectorRecord]
    map_file: Optional[Path]


def _archive_name(hostname: str, redactor: Redactor) -> str:
    return f"neurondoctor-{redactor.filename(hostname)}-{time.strftime('%Y%m%d-%H%M%SZ', time.gmtime())}-" \
           f"{secrets.token_hex(3)}"


class SizeCap:
    """Admits members until the cap; a member that would cross it is cut to what is left (and recorded)."""

    def __init__(self, limit: int) -> None:
        self.left = limit

    def admit(self, member: Member) -> tuple[Member, bool]:
        if len(member.data) <= self.left:
            self.left -= len(member.data)
            return member, False
        kept = member.data[: max(0, self.left)]
        self.left = 0
        return Member(member.name, kept + b"\n[truncated by neurondoctor bundle --max-size]\n"), True


def _run_collector(name: str, collect: Callable[[BundleContext], list[Member]], ctx: BundleContext,
                   cap: SizeCap, members: list[Member]) -> CollectorRecord:
    started = time.monotonic()
    record = CollectorRecord(name, "ok", 0.0)
    produced: list[Member] = []
    try:
        produced = collect(ctx)
    except Skipped as reason:
        record.status, record.error = "skipped", str(reason)
    except CollectorTimeout as timeout:
        record.status, record.error = "timed_out", str(timeout)
        produced = [timeout.member]
    except PartialCollection as partial:
        record.status, record.error = "partial", str(partial)
        produced = partial.members
    except PermissionError as error:
        record.status, record.error = "failed", f"permission denied: {error.filename or error}"
    except Exception as error:  # one broken collector must not cost the archive
        record.status, record.error = "failed", f"{type(error).__name__}: {error}"
    for member in produced:
        admitted, truncated = cap.admit(member)
        members.append(admitted)
        record.members.append(admitted.name)
        record.bytes += len(admitted.data)
        if truncated:
            record.truncated.append(admitted.name)
    record.duration_s = round(time.monotonic() - started, 3)
    return record


def _write_archive(path: Path, prefix: str, members: list[Member]) -> None:
    """Write to a temporary sibling and rename: a half-written archive is never left under the final name."""
    temporary = path.with_name(f".{path.name}.partial")
    with tarfile.open(temporary, "w:gz") as archive:
        for member in members:
            info = tarfile.TarInfo(f"{prefix}/{member.name}")
            info.size = len(member.data)
            info.mtime = int(time.time())
            info.mode = 0o600
            archive.addfile(info, io.BytesIO(member.data))
    os.chmod(temporary, 0o600)
    temporary.rename(path)


@dataclass
class BundleOptions:
    root: str = "/"
    output: Optional[str] = None
    venvs: Sequence[str] = ()
    obfuscate: bool = False
    since: Optional[str] = None
    max_size_mb: float = DEFAULT_MAX_SIZE_MB
    time_budget: float = DEFAULT_TIME_BUDGET
    command_timeout: float = DEFAULT_COMMAND_TIMEOUT
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))


def build_bundle(options: BundleOptions, progress: Callable[[str], None]) -> BundleResult:
    """Collect everything and write the archive; raises UserError for a root that is not a directory."""
    from neurondoctor.actions.check_run import CheckOptions, run_check
    from neurondoctor.report.document import render_json
    from neurondoctor.report.markdown import render_markdown

    if not os.path.isdir(options.root):
        raise exit_codes.UserError(f"--root {options.root}: not a directory")
    root, output, obfuscate = options.root, options.output, options.obfuscate
    max_size_mb, time_budget, command_timeout = options.max_size_mb, options.time_budget, options.command_timeout
    environ = dict(options.environ)
    fs = RootFS(root)
    hostname = socket.gethostname() if fs.is_live else (fs.try_read_text("/etc/hostname", 256) or "image").strip()
    redactor = Redactor(obfuscate=obfuscate, hostnames=[hostname, socket.getfqdn()] if fs.is_live else [hostname])
    started = time.monotonic()
    members: list[Member] = []
    cap = SizeCap(int(max_size_mb * (1 << 20)))
    progress("running the check")
    report = run_check(CheckOptions(root=root, venvs=list(options.venvs), environ=environ))
    ctx = BundleContext(fs=fs, environ=environ, redactor=redactor, environments=report.facts.environments,
                        command_timeout=command_timeout, since=options.since)

    def check_members(_: BundleContext) -> list[Member]:
        return [Member("report.json", redactor.text(render_json(report)).encode()),
                Member("report.md", redactor.text(render_markdown(report)).encode())]

    records = [_run_collector("check-report", check_members, ctx, cap, members)]
    for name, collect in [*file_collectors(), *command_collectors()]:
        if time.monotonic() - started > time_budget:
            records.append(CollectorRecord(name, "skipped", 0.0, error=f"total time budget {time_budget:g} s spent"))
            continue
        progress(f"collecting {name}")
        records.append(_run_collector(name, collect, ctx, cap, members))
    manifest = {
        "schema": "neurondoctor.bundle/1",
        "tool": "neurondoctor",
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "root": root,
        "obfuscated": obfuscate,
        "limits": {"max_size_bytes": int(max_size_mb * (1 << 20)), "time_budget_s": time_budget,
                   "command_timeout_s": command_timeout},
        "duration_s": round(time.monotonic() - started, 3),
        "redactions": redactor.redactions,
        "collectors": [vars(record) for record in records],
    }
    members.append(Member("manifest.json", (json.dumps(manifest, indent=1) + "\n").encode()))
    prefix = _archive_name(hostname, redactor)
    path = Path(output) if output else Path.cwd() / f"{prefix}.tar.gz"
    _write_archive(path, prefix, members)
    map_file = None
    if obfuscate:
        map_file = path.with_name(path.name + ".map.json")
        map_file.write_text(json.dumps({"archive": path.name, "map": redactor.mapping}, indent=1) + "\n")
        os.chmod(map_file, 0o600)
    return BundleResult(path, path.stat().st_size, records, map_file)


def describe_result(result: BundleResult) -> str:
    """The lines that end `bundle`: where the archive is, what each collector did, and the review reminder."""
    statuses: dict[str, int] = {}
    for record in result.records:
        statuses[record.status] = statuses.get(record.status, 0) + 1
    summary = ", ".join(f"{count} {status}" for status, count in sorted(statuses.items()))
    lines = [f"{result.archive} ({result.size / 1024:.0f} KiB; collectors: {summary})"]
    if result.map_file:
        lines.append(f"obfuscation map (not in the archive, keep it private): {result.map_file}")
    lines.append("Secrets were redacted while collecting; review the archive before sharing it.")
    return "\n".join(lines) + "\n"


def manifest_of(archive: Path) -> dict[str, Any]:
    """The manifest.json inside an archive (used by tests and by support tooling)."""
    with tarfile.open(archive) as bundle:
        name = next(member for member in bundle.getnames() if member.endswith("/manifest.json"))
        extracted = bundle.extractfile(name)
        if extracted is None:
            raise ValueError(f"{archive}: manifest.json is not a file")
        document: dict[str, Any] = json.loads(extracted.read())
        return document
