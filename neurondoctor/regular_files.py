"""The one way the doctor reads a file: regular files only, bounded, never blocking.

A FIFO, socket or device node where a file belongs (`etc/os-release`, `var/lib/dpkg/status`, a dist-info's
METADATA, a compile log) would block `open()` forever or trigger a device's side effects (a watchdog starts on
open). So the path is stat'ed first and only a regular file is opened, with `O_NONBLOCK` and checked again with
`fstat` (the path may be swapped in between); anything else raises `NotRegularFile`, an OSError the callers
already record as "could not read".
"""

from __future__ import annotations

import errno
import os
import stat
from typing import Union

PathLike = Union[str, "os.PathLike[str]"]
_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)


class NotRegularFile(OSError):
    """Something other than a regular file stands where the doctor expected one."""

    def __init__(self, path: PathLike, mode: int) -> None:
        kind = ("a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else
                "a character device" if stat.S_ISCHR(mode) else "a block device" if stat.S_ISBLK(mode) else
                "a directory" if stat.S_ISDIR(mode) else "not a file")
        super().__init__(errno.EINVAL, f"not a regular file ({kind})", os.fspath(path))
        self.mode = mode


def read_regular_file(path: PathLike, limit: int, tail: bool = False, follow_links: bool = True) -> bytes:
    """Up to `limit` bytes of a regular file (its last ones with `tail`: a compiler log keeps its error at the
    end); raises OSError (NotRegularFile, FileNotFoundError, …). Without `follow_links` a link in the last
    component is refused (ELOOP), even one swapped in after the check: for files in directories anyone writes."""
    before = os.stat(path) if follow_links else os.lstat(path)
    if not stat.S_ISREG(before.st_mode):
        raise NotRegularFile(path, before.st_mode)
    descriptor = os.open(path, _FLAGS if follow_links else _FLAGS | os.O_NOFOLLOW)
    try:
        opened = os.fstat(descriptor)
        if not stat.S_ISREG(opened.st_mode):
            raise NotRegularFile(path, opened.st_mode)
        size = opened.st_size
        if 0 < size <= limit and not tail:  # the common case, a small file: one read when it returns it whole
            data = os.read(descriptor, size)
            return data if len(data) == size else data + _read_rest(descriptor, limit - len(data), size - len(data))
        if tail and size > limit:
            os.lseek(descriptor, size - limit, os.SEEK_SET)
        return _read_rest(descriptor, limit, 0 if tail else size)
    finally:
        os.close(descriptor)


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
