"""Whether what this machine's kernel says about a path under `--root` (`statvfs`: free disk, a read-only flag;
`access`) is a fact about the inspected host, or about the machine running the doctor.

Under `--root /` it is the host's. Under another root it is only where the root is a live view of this very machine,
as when the node-problem-detector DaemonSet runs `health --root /host` with the node's / mounted at /host. Two
things must hold, both read from the snapshot and compared with this machine:

1. The same boot of the same kernel: the root's `proc/sys/kernel/random/boot_id` equals this machine's. A random
   UUID made at each boot (proc_sys_kernel(5)): a copied snapshot, a mounted AMI, a container image or a tree
   from another machine has another one, or none. Device numbers are only comparable within one boot.
2. The path is on the filesystem the snapshot says: the device (`major:minor`) this machine's `stat` gives for the
   path equals the one the root's live mount table (`proc/1/mountinfo`, init's namespace) names for the mount that
   holds it. Then `statvfs` here reports that very filesystem, whatever folder the root is seen through; a copy of
   a live /proc made this boot but lying on another disk fails here.

Otherwise free disk, read-only-ness from `statvfs`, writability and limits are not known, and the report says why in
one line; the snapshot's own mount table still answers read-only and noexec (host/mount_table.py).
"""

from __future__ import annotations

import os
from typing import Optional

from neurondoctor.facts.mounts import PROC_INIT_MOUNTINFO, MountTable
from neurondoctor.host.mount_table import LIVE_VIEW_ORDER, TABLE_ORDER, read_mount_table, resolved_inner
from neurondoctor.host.rootfs import RootFS

BOOT_ID = "/proc/sys/kernel/random/boot_id"


def _boot_id(text: Optional[str]) -> Optional[str]:
    value = (text or "").strip()
    return value if 0 < len(value) <= 64 else None


def machine_boot_id() -> Optional[str]:
    """This machine's boot id (read to compare with the root's, never reported as the host's)."""
    try:
        with open(BOOT_ID, encoding="ascii", errors="replace") as found:
            return _boot_id(found.read(128))
    except OSError:
        return None


def same_boot(fs: RootFS) -> Optional[str]:
    """None when the root shows this machine's running kernel (its boot id is this machine's), else why not."""
    if fs.is_live:
        return None
    theirs = _boot_id(fs.try_read_text(BOOT_ID, limit=128))
    if theirs is None:
        return f"the root has no {BOOT_ID.lstrip('/')}: a copy or an image, not this running machine"
    mine = machine_boot_id()
    if mine is None:
        return f"this machine's {BOOT_ID} cannot be read to compare"
    if theirs != mine:
        return "the root is not this running machine (its boot id is another)"
    return None


class LiveView:
    """Judges, path by path, whether this machine's figures for a path under the root are the host's. The root's
    live mount table is read once, when the first path needs it."""

    def __init__(self, fs: RootFS) -> None:
        self.fs = fs
        self.boot = same_boot(fs)
        self._table: Optional[MountTable] = None

    @property
    def live(self) -> bool:
        """Whether the root is this running machine (`--root /`, or the same boot seen through a folder)."""
        return self.boot is None

    def mount_table(self) -> MountTable:
        """The host's mount table, read in the order its kind of root needs (host/mount_table.py)."""
        table = read_mount_table(self.fs, LIVE_VIEW_ORDER if self.live and not self.fs.is_live else TABLE_ORDER)
        if table.source == PROC_INIT_MOUNTINFO:
            self._table = table  # the one `not_measured` reads: a live view reads init's table first
        return table

    def _live_table(self) -> MountTable:
        if self._table is None:
            self._table = read_mount_table(self.fs, (PROC_INIT_MOUNTINFO,))
        return self._table

    def not_measured(self, inner: str) -> Optional[str]:
        """None when `statvfs` here on `inner` (an existing in-root path) measures the host's filesystem, else
        why not, in words a report shows."""
        if self.fs.is_live:
            return None
        if self.boot is not None:
            return self.boot
        resolved = resolved_inner(self.fs, inner)
        entry = self._live_table().mount_of(resolved) if resolved is not None else None
        if entry is None or entry.device is None:
            return f"the root's {PROC_INIT_MOUNTINFO.lstrip('/')} names no mount for {inner}"
        machine = self.fs.resolve(inner)
        try:
            found = os.stat(machine) if machine is not None else None
        except OSError:
            found = None
        if found is None:
            return f"{inner} cannot be looked at here"
        here = f"{os.major(found.st_dev)}:{os.minor(found.st_dev)}"
        if here != entry.device:
            return (f"{inner} is on device {here} here, not on {entry.device} where the root's mount table puts "
                    f"{entry.point}")
        return None
