"""The mount table of the inspected host, as facts: which mount holds a path, its filesystem type and options.

A path's mount is the entry with the longest mount point that holds it; of entries at the same point the last one
wins (a later mount covers an earlier one, as the kernel lists them). A table that was cut at its entry bound
answers nothing: an entry past the cut could cover any path, so the answer would be a guess.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

# Filesystems where another machine may hold a lock or write the same files: a compile on another node is
# invisible to /proc/locks here. EFS mounts show as `nfs4` (amazon-efs-utils writes `efs` as the type in fstab),
# FSx for Lustre as `lustre`, Mountpoint for Amazon S3 as `fuse.mountpoint-s3`.
NETWORK_FILESYSTEMS = frozenset({"nfs", "nfs4", "efs", "lustre", "cifs", "smb3", "smbfs", "ceph", "glusterfs", "gpfs",
                                 "beegfs", "9p", "fuse.s3fs", "fuse.mountpoint-s3", "fuse.sshfs", "fuse.glusterfs",
                                 "fuse.goofys", "fuse.gcsfuse", "fuse.rclone", "fuse.juicefs", "fuse.ceph"})

# Where a table was read from, in the order it is looked for (host/mount_table.py says why).
PROC_SELF_MOUNTS = "/proc/self/mounts"
PROC_INIT_MOUNTINFO = "/proc/1/mountinfo"
FSTAB = "/etc/fstab"
TMP = "/tmp"  # noqa: S108 - the inspected host's path, looked up in its mount table, never written


@dataclass(frozen=True)
class MountEntry:
    """One line of a mount table: where, what type, with which options; `device` is the `major:minor` a mountinfo
    line names (None in /proc/self/mounts and fstab, which do not carry it)."""

    point: str
    filesystem: str
    options: frozenset[str]
    device: Optional[str] = None


@dataclass
class MountTable:
    """A host's mount table: `source` the file it came from (None when none could be read), `problem` what was
    wrong with the files looked at, `cut` the bound it stopped at. The entries are not part of the report (a
    Kubernetes node lists thousands); the paths the checks look up are (`PathMount`)."""

    source: Optional[str] = None
    problem: Optional[str] = None
    cut: Optional[str] = None
    _entries: tuple[MountEntry, ...] = field(default=(), repr=False)

    def mount_of(self, inner: str) -> Optional[MountEntry]:
        """The entry an absolute in-root path is on, or None when the table does not say (none read, cut, or no
        entry holds it)."""
        if self.cut or not inner.startswith("/"):
            return None
        best: Optional[MountEntry] = None
        for entry in self._entries:
            point = entry.point.rstrip("/") or "/"
            inside = inner == point or point == "/" or inner.startswith(point + "/")
            if inside and (best is None or len(point) >= len(best.point.rstrip("/") or "/")):
                best = entry
        return best


@dataclass
class PathMount:
    """The mount a path the checks judge lies on: `path` as the report shows it, `resolved` the in-root path its
    links lead to (the one looked up), the mount's point, type and options, and the table they came from."""

    path: str
    resolved: str
    point: str
    filesystem: str
    options: list[str]
    table: str

    @property
    def read_only(self) -> bool:
        return "ro" in self.options

    @property
    def noexec(self) -> bool:
        return "noexec" in self.options

    @property
    def network(self) -> bool:
        return self.filesystem in NETWORK_FILESYSTEMS
