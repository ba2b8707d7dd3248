"""Directories an action that moves things holds from its scan to its last move, so that it never acts on something
else.

Between the scan and the moves there is a prompt: seconds, or an hour. A path names whatever stands there when it is
resolved, and a user who owns a folder on the way can swap it for a link meanwhile: root would then move another
user's files. So an action opens each directory it will change once, before it asks, one component at a time without
following links (`O_NOFOLLOW | O_DIRECTORY` relative to the one before), checks device and inode against what it
scanned, and from then on names files only relative to those descriptors (`mkdirat`, `renameat`): no path is
resolved again after the prompt. The backup folder it moves into is made by this run beside the directory
(`mkdirat`: never an existing name, never through a link) and is checked to be its own before anything moves in.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from typing import Optional

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
# A held directory is only named relative to (openat, mkdirat, renameat, fstat): O_PATH needs no read permission
# on it, as a path lookup needs none on the folders it passes.
_HELD = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
BACKUP_ATTEMPTS = 99
# What a whole filesystem answers, not one entry: a full disk or quota, a read-only mount. The next move would fail
# the same way, so an action stops at the first.
FILESYSTEM_ERRORS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS})


class HeldDirectory:
    """A directory and the folder it is in, open by descriptor. `path` is for messages only: nothing is opened
    through it again."""

    def __init__(self, path: str, fd: int, parent_fd: int, name: str) -> None:
        self.path = path
        self.fd = fd
        self.parent_fd = parent_fd
        self.name = name

    @property
    def identity(self) -> tuple[int, int]:
        """(device, inode) of the directory held."""
        found = os.fstat(self.fd)
        return found.st_dev, found.st_ino

    def is_mount_point(self) -> bool:
        """The directory is on another filesystem than its folder: a rename from it to beside it would fail."""
        return os.fstat(self.fd).st_dev != os.fstat(self.parent_fd).st_dev

    def child(self, name: str) -> HeldDirectory:
        """A directory in this one, opened without following a link (ENOTDIR for a link or a file)."""
        _plain_name(name)
        fd = os.open(name, _HELD, dir_fd=self.fd)
        try:
            parent_fd = os.dup(self.fd)
        except OSError:
            os.close(fd)
            raise
        return HeldDirectory(f"{self.path.rstrip('/')}/{name}", fd, parent_fd, name)

    def close(self) -> None:
        for fd in (self.fd, self.parent_fd):
            if fd >= 0:
                os.close(fd)
        self.fd = self.parent_fd = -1

    def __enter__(self) -> HeldDirectory:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __del__(self) -> None:  # a hold dropped without close (a plan never applied) gives its descriptors back
        with contextlib.suppress(OSError):
            self.close()


def _plain_name(name: str) -> None:
    if name in ("", ".", "..") or "/" in name or "\0" in name:
        raise OSError(errno.EINVAL, "not a plain name in a folder", name)


def hold_directory(path: str, trusted: str = "/") -> HeldDirectory:
    """The directory at `path`, an absolute path whose links were resolved by the scan, opened one component at a
    time below `trusted` without following a link; raises OSError (ENOTDIR: a component is a link or a file now).
    `trusted` is a folder the operator named (`--root`), opened as named; `path` must lie in it."""
    trusted = trusted.rstrip("/") or "/"
    if trusted != "/" and path != trusted and not path.startswith(trusted + "/"):
        raise OSError(errno.EXDEV, f"not inside {trusted}", path)
    parts = [part for part in path[len(trusted):].split("/") if part] if trusted != "/" else \
        [part for part in path.split("/") if part]
    if not parts:  # the trusted folder itself: held from its own folder
        trusted, parts = os.path.dirname(trusted) or "/", [os.path.basename(trusted)]
        if not parts[0]:
            raise OSError(errno.EINVAL, "the root directory has no folder to hold it from", path)
    for part in parts:
        _plain_name(part)
    fd = os.open(trusted, _HELD & ~os.O_NOFOLLOW)
    try:
        for part in parts[:-1]:
            inner = os.open(part, _HELD, dir_fd=fd)
            os.close(fd)
            fd = inner
        held_fd = os.open(parts[-1], _HELD, dir_fd=fd)
    except OSError:
        os.close(fd)
        raise
    return HeldDirectory(path, held_fd, fd, parts[-1])


def hold_folder_of(path: str) -> tuple[HeldDirectory, str]:
    """The folder `path` is in, held (links on the way resolved now, before any question), and `path`'s name in it:
    what a move or a copy later names, relative to the descriptor only."""
    absolute = os.path.abspath(path)
    return hold_directory(os.path.realpath(os.path.dirname(absolute))), os.path.basename(absolute)


def still_there(held: HeldDirectory, trusted: str = "/") -> bool:
    """Whether `held.path` still leads, without a link, to the directory held (a check only: nothing is done through
    the path). False when a folder on the way was moved or replaced since it was held."""
    try:
        with hold_directory(held.path, trusted) as again:
            return again.identity == held.identity
    except OSError:
        return False


def make_backup_folder(beside: HeldDirectory, stamp: str) -> HeldDirectory:
    """A new folder `<name>.neurondoctor-<stamp>` beside the held directory (in its folder), mode 0700; an existing
    name (an earlier run's, a planted link) is never reused: `-2`, `-3` … are tried. Raises OSError (ENOSPC, EROFS,
    EACCES …), and EEXIST when every name is taken."""
    base = f"{beside.name}.neurondoctor-{stamp}"
    for attempt in range(1, BACKUP_ATTEMPTS + 1):
        name = base if attempt == 1 else f"{base}-{attempt}"
        try:
            os.mkdir(name, mode=0o700, dir_fd=beside.parent_fd)
        except FileExistsError:
            continue
        fd = os.open(name, _DIRECTORY, dir_fd=beside.parent_fd)
        folder = HeldDirectory(f"{os.path.dirname(beside.path.rstrip('/')).rstrip('/')}/{name}", fd,
                               os.dup(beside.parent_fd), name)
        _refuse_unless_own(folder)
        return folder
    raise OSError(errno.EEXIST, f"{base}, -2 … -{BACKUP_ATTEMPTS} all exist", base)


def _refuse_unless_own(folder: HeldDirectory) -> None:
    """The folder opened after `mkdir` is the one this run made: its owner, empty. Someone who may write beside it
    could have renamed it away and put their own folder in its place between the two calls."""
    if os.fstat(folder.fd).st_uid != os.geteuid() or os.listdir(folder.fd):
        folder.close()
        raise OSError(errno.EEXIST, "replaced by another folder as it was made", folder.path)


def make_folder_in(folder: HeldDirectory, name: str) -> HeldDirectory:
    """`name` inside a backup folder this run made, created unless this run made it already."""
    _plain_name(name)
    try:
        os.mkdir(name, mode=0o700, dir_fd=folder.fd)
    except FileExistsError:
        if not stat.S_ISDIR(os.stat(name, dir_fd=folder.fd, follow_symlinks=False).st_mode):
            raise
    return folder.child(name)


def free_name(folder: HeldDirectory, name: str) -> str:
    """`name`, else `name.neurondoctor-moved`, `…-2` …: a name nothing in the backup folder (this run's own) has yet,
    for two moved things of one name."""
    candidate, number = name, 1
    while True:
        try:
            os.stat(candidate, dir_fd=folder.fd, follow_symlinks=False)
        except FileNotFoundError:
            return candidate
        candidate = f"{name}.neurondoctor-moved" + (f"-{number}" if number > 1 else "")
        number += 1


def move_into(source: HeldDirectory, name: str, target: HeldDirectory, target_name: Optional[str] = None) -> None:
    """Rename `name` in `source` into `target` (renameat on the held descriptors: what `name` is, a link included, is
    what moves, never what a link points at); raises OSError."""
    _plain_name(name)
    destination = target_name or name
    _plain_name(destination)
    os.rename(name, destination, src_dir_fd=source.fd, dst_dir_fd=target.fd)
