"""`neurondoctor bundle`: run every collector within its bounds and write one redacted `.tar.gz`.

Bounded (sos report's lessons): a timeout per command, a total time budget after which the remaining
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
import stat
import tarfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

from neurondoctor import exit_codes, json_data
from neurondoctor.actions.bundle.collectors import (
    BundleContext,
    CollectorTimeout,
    Member,
    PartialCollection,
    Skipped,
    command_collectors,
    file_collectors,
)
from neurondoctor.actions.bundle.log_explanations import explained_logs
from neurondoctor.host.instance_identity import read_hostname
from neurondoctor.host.rootfs import RootFS
from neurondoctor.output_targets import target_mode, writable_directory, write_failure
from neurondoctor.output_text import field_text
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
    explained: list[dict[str, Any]] = field(default_factory=list)  # explained.json's verdicts, for the last lines


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


def check_output_path(path: Path, force: bool) -> None:
    """Refuse a target the bundle must not replace: a directory, a device or anything not a regular file (never,
    `--force` or not), an existing file (unless `--force` names it), or a missing parent directory."""
    mode = target_mode(path, f"-o {path}")
    if mode is not None:
        if stat.S_ISDIR(mode):
            raise exit_codes.UserError(f"-o {path}: is a directory; name the archive file")
        if not stat.S_ISREG(mode):
            raise exit_codes.UserError(f"-o {path}: exists and is not a regular file; refusing to replace it")
        if not force:
            raise exit_codes.UserError(f"-o {path}: already exists; pass --force to replace it")
    writable_directory(path.parent, f"-o {path}")


def _write_archive(path: Path, prefix: str, members: list[Member], force: bool) -> None:
    """Write to a temporary sibling and move it into place: a half-written archive is never left behind, under
    the final name or the temporary one; without --force a file that appeared meanwhile is not replaced."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as archive:
            for member in members:
                info = tarfile.TarInfo(f"{prefix}/{member.name}")
                info.size = len(member.data)
                info.mtime = int(time.time())
                info.mode = 0o600
                archive.addfile(info, io.BytesIO(member.data))
        if force:
            check_output_path(path, force=True)
            os.replace(temporary, path)
        else:
            os.link(temporary, path)  # fails if anything appeared at the path meanwhile: never clobbers it
            os.unlink(temporary)
    except FileExistsError as error:
        raise exit_codes.UserError(f"-o {path}: appeared while the bundle was written; not replaced") from error
    except OSError as error:
        raise write_failure(str(path), error) from error
    finally:
        if temporary.exists():
            temporary.unlink()


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
    force: bool = False
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))


def build_bundle(options: BundleOptions, progress: Callable[[str], None]) -> BundleResult:
    """Collect everything and write the archive; raises UserError for a root that is not a directory."""
    from neurondoctor.actions.check.check_run import CheckOptions, run_check
    from neurondoctor.report.document import render_json
    from neurondoctor.report.markdown import render_markdown

    if not os.path.isdir(options.root):
        raise exit_codes.UserError(f"--root {options.root}: not a directory")
    environ = dict(options.environ)
    fs = RootFS(options.root)
    hostname = read_hostname(fs) or "image"
    hostnames = [hostname, socket.getfqdn()] if fs.is_live else [hostname]
    redactor = Redactor(obfuscate=options.obfuscate, hostnames=hostnames)
    path = Path(options.output).absolute() if options.output else None
    if path is not None:
        check_output_path(path, options.force)
    started = time.monotonic()
    members: list[Member] = []
    max_size_bytes = int(options.max_size_mb * (1 << 20))
    cap = SizeCap(max_size_bytes)
    progress("running the check")
    report = run_check(CheckOptions(root=options.root, venvs=list(options.venvs), environ=environ))
    ctx = BundleContext(fs=fs, environ=environ, redactor=redactor, environments=report.facts.environments,
                        command_timeout=options.command_timeout, since=options.since,
                        deadline=started + options.time_budget)

    def check_members(_: BundleContext) -> list[Member]:
        return [Member("report.json", redactor.text(render_json(report)).encode()),
                Member("report.md", redactor.text(render_markdown(report)).encode())]

    records = [_run_collector("check-report", check_members, ctx, cap, members)]
    for name, collect in [*file_collectors(), *command_collectors()]:
        if time.monotonic() - started > options.time_budget:
            records.append(CollectorRecord(name, "skipped", 0.0,
                                           error=f"total time budget {options.time_budget:g} s spent"))
            continue
        progress(f"collecting {name}")
        records.append(_run_collector(name, collect, ctx, cap, members))
    if time.monotonic() - started <= options.time_budget:  # what the logs say broke, read from the members above
        progress("explaining the logs")
        collected = list(members)
        records.append(_run_collector("explained-logs", lambda context: explained_logs(context, collected), ctx,
                                      cap, members))
    manifest = {
        "schema": "neurondoctor.bundle/1",
        "tool": "neurondoctor",
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "root": options.root,
        "obfuscated": options.obfuscate,
        "limits": {"max_size_bytes": max_size_bytes, "time_budget_s": options.time_budget,
                   "command_timeout_s": options.command_timeout},
        "duration_s": round(time.monotonic() - started, 3),
        "redactions": redactor.redactions,
        "collectors": [vars(record) for record in records],
    }
    members.append(Member("manifest.json", (json_data.dumps(manifest, indent=1) + "\n").encode()))
    prefix = _archive_name(hostname, redactor)
    path = path or Path.cwd() / f"{prefix}.tar.gz"
    _write_archive(path, prefix, members, options.force)
    map_file = None
    if options.obfuscate:
        map_file = _write_map(path, redactor)
    return BundleResult(path, path.stat().st_size, records, map_file, _explained(members))


def _explained(members: list[Member]) -> list[dict[str, Any]]:
    """explained.json's verdicts; none when it is absent or the size cap cut it."""
    data = next((member.data for member in members if member.name == "explained.json"), b"")
    try:
        document = json.loads(data) if data else {}
    except ValueError:
        return []
    found = document.get("explained") if isinstance(document, dict) else None
    return [entry for entry in found if isinstance(entry, dict)] if isinstance(found, list) else []


def _write_map(archive: Path, redactor: Redactor) -> Path:
    """The obfuscation map beside the archive, under a name that never replaces an earlier map."""
    document = (json_data.dumps({"archive": archive.name, "map": redactor.mapping}, indent=1) + "\n").encode()
    for attempt in range(100):
        candidate = archive.with_name(archive.name + (".map.json" if attempt == 0 else f".map-{attempt}.json"))
        try:
            descriptor = os.open(candidate, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(document)
        return candidate
    raise exit_codes.UserError(f"could not write the obfuscation map beside {archive}")


def describe_result(result: BundleResult) -> str:
    """The lines that end `bundle`: where the archive is, what each collector did, and the review reminder."""
    statuses: dict[str, int] = {}
    for record in result.records:
        statuses[record.status] = statuses.get(record.status, 0) + 1
    summary = ", ".join(f"{count} {status}" for status, count in sorted(statuses.items()))
    lines = [f"{result.archive} ({result.size / 1024:.0f} KiB; collectors: {summary})"]
    if result.explained:  # each field is data (a member's name is a directory under /tmp): one line each, always
        lines.append(f"What the logs say ({len(result.explained)} recognised, explained.json has each with its ways "
                     "out):")
        lines.extend(f"  {field_text(entry['member'])[:160]}: {field_text(entry['category'])}: "
                     f"{field_text(entry['why'])[:200]}" for entry in result.explained[:5])
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
