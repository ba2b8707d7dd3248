"""Reads the inspected host's own mount table, never the machine's: under `--root` a compile cache, a venv or /tmp
is on a read-only, noexec or network mount only when the snapshot's table says so.

Which file: `/proc/self/mounts` (what the kernel shows the reading process: on the live host the doctor's own mount
namespace, the one a job started from this shell sees), else `/proc/1/mountinfo` (init's: the host's own namespace),
else `/etc/fstab` (what the host mounts at boot: an AMI or a container image has no /proc, and its fstab is what it
will have). When the root is a live view of this machine (host/live_view.py: the node's / mounted at /host for the
node-problem-detector DaemonSet), `/proc/self` under it names the doctor's own process, whose mounts are the
container's: there init's mountinfo comes first.

Formats: proc(5) `/proc/self/mounts` and fstab(5) are `SPEC POINT TYPE OPTIONS DUMP PASS`; proc_pid_mountinfo(5)
is `ID PARENT MAJOR:MINOR ROOT POINT OPTIONS [OPTIONAL...] - TYPE SOURCE SUPER_OPTIONS`. Spaces and tabs in a mount
point are octal escapes (`\\040`, `\\011`); the kernel escapes newlines and backslashes the same way. Reads are
bounded (MOUNT_TABLE_BYTES, MAX_MOUNT_ENTRIES entries); a line that is not a mount (garbage, a binary blob, a
comment) is skipped and counted, never raised.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Optional

from neurondoctor.facts.mounts import FSTAB, PROC_INIT_MOUNTINFO, PROC_SELF_MOUNTS, MountEntry, MountTable, PathMount
from neurondoctor.host.rootfs import RootFS
from neurondoctor.redaction import redact_secrets

MOUNT_TABLE_BYTES = 8 << 20  # a Kubernetes node with a hundred pods lists a few thousand mounts, ~300 bytes each
MAX_MOUNT_ENTRIES = 20_000
TABLE_ORDER = (PROC_SELF_MOUNTS, PROC_INIT_MOUNTINFO, FSTAB)
LIVE_VIEW_ORDER = (PROC_INIT_MOUNTINFO, PROC_SELF_MOUNTS, FSTAB)
# Compiled by `re` when first used (an escaped mount point, a mountinfo line): not at start-up.
_OCTAL = r"\\([0-7]{3})"
_DEVICE = r"^[0-9]{1,10}:[0-9]{1,10}\Z"
# fstab(5)/mount(8): `user`, `users`, `owner` and `group` imply noexec, nosuid and nodev unless a later option
# says otherwise; the kernel's own tables show the flags in effect.
_IMPLIES_NOEXEC = frozenset({"user", "users", "owner", "group"})


def unescape(field: str) -> str:
    """A mount table field with its octal escapes (`\\040` a space) decoded; other text is kept as it is."""
    return re.sub(_OCTAL, lambda match: chr(int(match.group(1), 8)), field) if "\\" in field else field


def _point(field: str) -> Optional[str]:
    point = unescape(field)
    return point if point.startswith("/") and "\0" not in point else None


def _fstab_options(text: str) -> frozenset[str]:
    options: list[str] = []
    for option in text.split(","):
        if option in _IMPLIES_NOEXEC:
            options += [option, "noexec", "nosuid", "nodev"]
        elif option == "exec" and "noexec" in options:
            options = [item for item in options if item != "noexec"] + ["exec"]
        else:
            options.append(option)
    return frozenset(options)


def parse_mounts(text: str, fstab: bool = False) -> tuple[list[MountEntry], int, bool]:
    """(entries, lines skipped, cut) of a `/proc/self/mounts` or fstab text."""
    entries: list[MountEntry] = []
    skipped = 0
    for line in text.splitlines():
        if len(entries) >= MAX_MOUNT_ENTRIES:
            return entries, skipped, True
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        point = _point(fields[1]) if len(fields) >= 4 else None
        if point is None:  # fstab's swap lines (`none swap`), or garbage
            skipped += not (fstab and len(fields) >= 3 and fields[2] == "swap")
            continue
        options = _fstab_options(fields[3]) if fstab else frozenset(fields[3].split(","))
        entries.append(MountEntry(point, unescape(fields[2]), options))
    return entries, skipped, False


def parse_mountinfo(text: str) -> tuple[list[MountEntry], int, bool]:
    """(entries, lines skipped, cut) of a proc_pid_mountinfo(5) text: the per-mount options and the superblock's
    together (a bind mount can be `ro` over a read-write filesystem, and the other way round)."""
    entries: list[MountEntry] = []
    skipped = 0
    for line in text.splitlines():
        if len(entries) >= MAX_MOUNT_ENTRIES:
            return entries, skipped, True
        fields = line.split()
        if not fields:
            continue
        try:
            separator = fields.index("-", 6)
        except ValueError:
            skipped += 1
            continue
        point = _point(fields[4])
        if point is None or len(fields) < separator + 4 or not re.match(_DEVICE, fields[2]):  # type, source, options
            skipped += 1
            continue
        options = frozenset(fields[5].split(",")) | frozenset(fields[separator + 3].split(","))
        if "ro" in fields[5].split(","):  # the mount's own flag wins over a read-write superblock
            options -= {"rw"}
        entries.append(MountEntry(point, unescape(fields[separator + 1]), options, fields[2]))
    return entries, skipped, False


def _parsed(path: str, text: str) -> tuple[list[MountEntry], int, bool]:
    if path.endswith("mountinfo"):
        return parse_mountinfo(text)
    return parse_mounts(text, fstab=path == FSTAB)


def read_mount_table(fs: RootFS, order: Sequence[str] = TABLE_ORDER) -> MountTable:
    """The first table of `order` that reads and holds at least one mount; `problem` says what was wrong with the
    ones before it (a FIFO, garbage, unreadable), so a report can say why a later one was used."""
    problems: list[str] = []
    for path in order:
        try:
            text = fs.read_text(path, limit=MOUNT_TABLE_BYTES)
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as error:
            problems.append(f"{path}: {getattr(error, 'strerror', None) or error}")
            continue
        entries, skipped, cut = _parsed(path, text)
        if not entries:
            problems.append(f"{path}: no mount in it ({skipped} line(s) not a mount)")
            continue
        if skipped:
            problems.append(f"{path}: {skipped} line(s) not a mount, skipped")
        return MountTable(source=path, problem="; ".join(problems) or None,
                          cut=f"stopped after {MAX_MOUNT_ENTRIES:,} entries" if cut else None,
                          _entries=tuple(entries))
    return MountTable(problem="; ".join(problems) or "no /proc/self/mounts, /proc/1/mountinfo or /etc/fstab")


def resolved_inner(fs: RootFS, inner: str) -> Optional[str]:
    """The in-root path `inner` leads to: links followed inside the root up to its nearest existing folder, the
    part that does not exist yet kept as written (a cache neuronx-cc will create). None on a link loop."""
    path = inner.rstrip("/") or "/"
    missing: list[str] = []
    while not fs.exists(path):
        if path == "/":
            return None
        path, _, name = path.rpartition("/")
        path = path or "/"
        missing.insert(0, name)
    machine = fs.resolve(path)
    found = fs.inner_path(machine) if machine is not None else None
    if found is None:
        return None
    return "/".join([found.rstrip("/"), *missing]) if missing else found


def path_mount(fs: RootFS, table: MountTable, inner: str, shown: Optional[str] = None) -> Optional[PathMount]:
    """The mount `inner` (an in-root path) lies on, its links followed inside the root, redacted as a report shows
    it; None when the table does not say."""
    resolved = resolved_inner(fs, inner)
    entry = table.mount_of(resolved) if resolved is not None and table.source else None
    if entry is None or resolved is None or table.source is None:
        return None
    # What a report shows is redacted as it is made (a mount point or a cache path holding a key).
    return PathMount(path=redact_secrets(shown or inner), resolved=redact_secrets(resolved),
                     point=redact_secrets(entry.point), filesystem=redact_secrets(entry.filesystem),
                     options=sorted(redact_secrets(option) for option in entry.options), table=table.source)


def mounts_of(fs: RootFS, table: MountTable, machine_paths: Sequence[str]) -> list[PathMount]:
    """The mounts of paths as the report shows them (an environment's folder: a machine path, under the root when
    it lies there); a path outside the root is not the host's, and is left out."""
    found = []
    for path in dict.fromkeys(machine_paths):
        inner = path if fs.is_live else fs.inner_path(path)
        mount = path_mount(fs, table, inner, shown=path) if inner is not None else None
        if mount is not None:
            found.append(mount)
    return found
