"""The one way the doctor reads a file: regular files only, bounded, never blocking.

A FIFO, socket or device node where a file belongs (`etc/os-release`, `var/lib/dpkg/status`, a dist-info's
METADATA, a compile log) would block `open()` forever or trigger a device's side effects (a watchdog starts on
open). So the path is stat'ed first and only a regular file is opened, with `O_NONBLOCK` and checked again with
`fstat` (the path may be swapped in between); anything else raises `NotRegularFile`, an OSError the callers
already record as "could not read".

A file in a folder other users write (a compile cache, a compile workdir in /tmp, a home) is read with
`read_untrusted_file`, which also refuses what such a user could make of a file they may not read: a hard link
(`fs.protected_hardlinks=0` lets anyone link /etc/shadow into their folder; a link is the file itself, so no link
check sees it), or a file whose owner is not its folder's owner. `untrusted_refusal` is that rule, from the file's
and the folder's stat; a refusal raises `RefusedFile`, whose message says why in one line.
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Optional, Union

PathLike = Union[str, "os.PathLike[str]"]
_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)


class NotRegularFile(OSError):
    """Something other than a regular file stands where the doctor expected one."""

    def __init__(self, path: PathLike, mode: int) -> None:
        kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else
                "a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode) else
                "a directory" if stat.S_ISDIR(mode) else "a symbolic link" if stat.S_ISLNK(mode) else "not a file")
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", os.fspath(path))
        self.mode = mode


class RefusedFile(OSError):
    """A regular file the doctor does not read for the folder it is in (`untrusted_refusal` says why)."""

    def __init__(self, path: PathLike, why: str) -> None:
        super().__init__(errno.EPERM, why, os.fspath(path))


def read_regular_file(path: PathLike, limit: int, tail: bool = False, follow_links: bool = True) -> bytes:
    """Up to `limit` bytes of a regular file (its last ones with `tail`: a compiler log keeps its error at the
    end); raises OSError (NotRegularFile, FileNotFoundError, …). Without `follow_links` a link in the last
    component is refused (ELOOP), even one swapped in after the check; files in folders other users write are read
    with `read_untrusted_file`."""
    before = os.stat(path) if follow_links else os.lstat(path)
    if not stat.S_ISREG(before.st_mode):
        raise NotRegularFile(path, before.st_mode)
    descriptor = os.open(path, _FLAGS if follow_links else _FLAGS | os.O_NOFOLLOW)
    try:
        opened = os.fstat(descriptor)
        if not stat.S_ISREG(opened.st_mode):
            raise NotRegularFile(path, opened.st_mode)
        return _read_open(descriptor, opened.st_size, limit, tail)
    finally:
        os.close(descriptor)


_FOLDER = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)


def read_untrusted_file(path: PathLike, limit: int, tail: bool = False) -> bytes:
    """`read_regular_file` for a file in a folder other users may write: never through a link in the last
    component, and refused (RefusedFile) when `untrusted_refusal` says so. The file is opened relative to its
    folder's descriptor, so the folder judged is the one the file was read from."""
    folder, name = os.path.split(os.fspath(path))
    folder_fd = os.open(folder or ".", _FOLDER)
    try:
        before = os.stat(name, dir_fd=folder_fd, follow_symlinks=False)
        if not stat.S_ISREG(before.st_mode):
            raise NotRegularFile(path, before.st_mode)
        descriptor = os.open(name, _FLAGS | os.O_NOFOLLOW, dir_fd=folder_fd)
        try:
            opened = os.fstat(descriptor)
            if not stat.S_ISREG(opened.st_mode):
                raise NotRegularFile(path, opened.st_mode)
            why = untrusted_refusal(opened, os.fstat(folder_fd), os.geteuid())
            if why is not None:
                raise RefusedFile(path, why)
            return _read_open(descriptor, opened.st_size, limit, tail)
        finally:
            os.close(descriptor)
    finally:
        os.close(folder_fd)


_OTHERS_WRITE = stat.S_IWGRP | stat.S_IWOTH


def untrusted_refusal(found: os.stat_result, folder: os.stat_result, reader: int) -> Optional[str]:
    """Why a regular file is not read by `reader` (a uid) from that folder, or None. Whoever may write a folder
    names what is in it, and may have linked there a file they cannot read (`fs.protected_hardlinks=0`); what is
    refused is what such a link can look like:
    - a file with more than one link in a folder others than its owner may write, or not owned by the folder's
      owner (the owner's own linked files stay readable: uv and conda link an owner's files between their folders);
    - a file not owned by the folder's owner, when the folder belongs to another user than the reader (a link left
      to a file since replaced, such as an older /etc/shadow, has one link left, and root as its owner);
    - a file of the reader's that others may not read, in a folder others may write (the same, planted there)."""
    others_write = bool(folder.st_mode & _OTHERS_WRITE)
    if found.st_nlink > 1 and others_write:
        return f"a file with {found.st_nlink} hard links, in a folder others may write"
    if found.st_nlink > 1 and found.st_uid != folder.st_uid:
        return f"a file with {found.st_nlink} hard links, not owned by its folder's owner (uid {folder.st_uid})"
    if folder.st_uid != reader and found.st_uid != folder.st_uid:
        return f"owned by uid {found.st_uid}, not by its folder's owner (uid {folder.st_uid})"
    if others_write and found.st_uid == reader and not found.st_mode & stat.S_IROTH:
        return f"a file only uid {reader} may read, in a folder others may write"
    return None


def _read_open(descriptor: int, size: int, limit: int, tail: bool) -> bytes:
    """Up to `limit` bytes of an open regular file of `size` bytes (fstat's), its last ones with `tail`."""
    if 0 < size <= limit and not tail:  # the common case, a small file: one read when it returns it whole
        data = os.read(descriptor, size)
        return data if len(data) == size else data + _read_rest(descriptor, limit - len(data), size - len(data))
    if tail and size > limit:
        os.lseek(descriptor, size - limit, os.SEEK_SET)
    return _read_rest(descriptor, limit, 0 if tail else size)


def _read_rest(descriptor: int, limit: int, size: int) -> bytes:
    """Up to `limit` bytes from the descriptor's position. A file read up to the size fstat gave (`size`) is done,
    as of that moment: no second read to find its end (a thousand install records per environment). One that says
    0 (procfs, sysfs) is read to its end or the limit."""
    chunks: list[bytes] = []
    left = limit
    while left > 0:
        chunk = os.read(descriptor, min(left, 1 << 20))
        if not chunk:
            break
        chunks.append(chunk)
        left -= len(chunk)
        if size and limit - left >= size:
            break
    return b"".join(chunks)


def read_regular_text(path: PathLike, limit: int) -> str:
    """Text decoded as UTF-8 with replacement, so a stray byte never stops a report."""
    return read_regular_file(path, limit).decode("utf-8", errors="replace")
