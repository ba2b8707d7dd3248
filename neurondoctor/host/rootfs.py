"""Reads files of a Linux tree under `--root` as a chroot would see them (docs/contracts.md §3).

An absolute symlink target such as `/usr/lib/os-release` means `ROOT/usr/lib/os-release`, never the
file on the machine running the doctor; a chain that loops or runs away reads as absent. Reads are bounded in
size, open regular files only (regular_files.py: a FIFO never blocks a read), and never write. On the live host
(`/`) paths are the machine's own and the kernel follows links.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path, PurePosixPath
from typing import Optional

from neurondoctor.regular_files import NotRegularFile, read_regular_file, read_untrusted_file

_MAX_LINK_HOPS = 40
DEFAULT_READ_LIMIT = 1 << 20


class RootFS:
    """A filesystem tree addressed by absolute in-root paths (`/etc/os-release`)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).absolute()
        self.is_live = str(self.root) == "/"
        self._root_text = "" if self.is_live else str(self.root)
        self._folders: dict[str, Optional[str]] = {}  # in-root folder -> where it resolves (one run's view)

    def host_path(self, inner: str) -> Path:
        """The machine path of an in-root path, without resolving links (for listing and `readlink`)."""
        relative = PurePosixPath("/", inner).relative_to("/")
        return self.root / relative

    def inner_path(self, machine_path: str | os.PathLike[str]) -> Optional[str]:
        """The in-root path for a machine path under the root, or None when it lies outside."""
        absolute = Path(machine_path).absolute()
        try:
            relative = absolute.relative_to(self.root)
        except ValueError:
            return None
        return "/" + relative.as_posix() if str(relative) != "." else "/"

    def resolve(self, inner: str) -> Optional[Path]:
        """Follow symlinks component by component inside the root; None on a loop or an escaping chain.

        The folder part is resolved once per run and remembered: an environment's thousand install records share
        their site-packages, whose walk from the root was most of a static scan's time (five DLAMI venvs must
        check within twice one's time). Only the last component is looked at on each call."""
        if self.is_live:
            return Path(os.path.realpath(inner))
        found = self._located(inner)
        return None if found is None else Path(found)

    def _in_folder(self, inner: str) -> Optional[str]:
        """The machine path of `inner`'s last component in its resolved folder, not looked at (None when the
        path needs a walk: `.`/`..` parts, or a folder that does not resolve)."""
        folder, _, name = inner.rstrip("/").rpartition("/")
        if name in ("", ".", "..") or "/./" in inner or "/../" in inner:
            return None
        if folder not in self._folders:
            self._folders[folder] = self._located(folder) if folder else str(self.root)
        base = self._folders[folder]
        if base is None:
            return None
        return f"{base}/{name}" if base != "/" else f"/{name}"

    def _located(self, inner: str) -> Optional[str]:
        """`resolve` as text, for the reads of a static scan (a thousand records, five files each)."""
        candidate = self._in_folder(inner)
        if candidate is None:
            walked = self._walk(inner)
            return None if walked is None else str(walked)
        if not os.path.islink(candidate):
            return candidate
        base, _, name = candidate.rpartition("/")
        walked = self._walk(f"{self.inner_path(base or '/') or '/'}/{name}".replace("//", "/"))
        return None if walked is None else str(walked)

    def _walk(self, inner: str, passed: Optional[list[Path]] = None) -> Optional[Path]:
        """Follow symlinks component by component inside the root; None on a loop or a runaway chain. Each machine
        path looked at on the way (every folder entered, every link followed, the last component) is appended to
        `passed`."""
        pending = list(PurePosixPath("/", inner).parts[1:])
        resolved: list[str] = []
        hops = 0
        while pending:
            part = pending.pop(0)
            if part in ("", "."):
                continue
            if part == "..":
                if resolved:
                    resolved.pop()
                continue
            candidate = self.root.joinpath(*resolved, part)
            if passed is not None:
                passed.append(candidate)
            if candidate.is_symlink():
                hops += 1
                if hops > _MAX_LINK_HOPS:
                    return None
                try:
                    target = os.readlink(candidate)
                except OSError:
                    return None
                target_parts = list(PurePosixPath(target).parts)
                if target.startswith("/"):
                    resolved = []
                    target_parts = target_parts[1:]
                pending = target_parts + pending
                continue
            resolved.append(part)
        return self.root.joinpath(*resolved)

    def path_through(self, inner: str) -> Optional[list[Path]]:
        """Every machine path the way to `inner` passes, links followed inside the root as `resolve` follows them:
        each folder entered, each link (and then its target's folders), the last component; None on a loop or a
        runaway chain. Who owns each of them decides who could change what `inner` leads to."""
        passed: list[Path] = []
        return passed if self._walk(inner, passed) is not None else None

    def lexists(self, inner: str) -> bool:
        """Whether anything (a file, a dangling link, a FIFO) stands at the path, following links inside the root.
        A path this user may not look at counts as present: it is unreadable, not absent."""
        path = self.resolve(inner)
        try:
            return path is not None and (path.exists() or path.is_symlink())
        except PermissionError:
            return True

    def exists(self, inner: str) -> bool:
        path = self.resolve(inner)
        try:
            return path is not None and path.exists()
        except PermissionError:
            return True

    def machine_path(self, inner: str) -> Optional[Path]:
        """Where an in-root path is read on this machine: itself on the live host, its in-root resolution
        elsewhere (None for a looping or runaway chain)."""
        return Path(inner) if self.is_live else self.resolve(inner)

    def shown_path(self, inner: str) -> str:
        """The machine path of an in-root path as a report shows it (no link resolution, no Path objects: this
        runs for every file of every environment)."""
        return inner if self.is_live else f"{self._root_text}{inner}"

    def read_bytes(self, inner: str, limit: int = DEFAULT_READ_LIMIT, tail: bool = False) -> bytes:
        """Up to `limit` bytes of a regular file (its last ones with `tail`: a log's newest lines); raises OSError
        (FileNotFoundError, PermissionError, NotRegularFile) like `open`."""
        if self.is_live:
            return read_regular_file(inner, limit, tail=tail)
        direct = self._in_folder(inner)
        if direct is not None:
            # The common case, a file that is not a link, in one `lstat` less: read without following a link in
            # the last component, and walk the link inside the root only when there is one.
            try:
                return read_regular_file(direct, limit, tail=tail, follow_links=False)
            except NotRegularFile as error:
                if not stat.S_ISLNK(error.mode):
                    raise
            except OSError as error:
                if error.errno != errno.ELOOP:  # ELOOP: made a link between the `lstat` and the `open`
                    raise
        path = self._located(inner)
        if path is None:
            raise OSError(errno.ELOOP, "too many levels of symbolic links", inner)
        return read_regular_file(path, limit, tail=tail)

    def read_untrusted_bytes(self, inner: str, limit: int = DEFAULT_READ_LIMIT, tail: bool = False,
                             follow_links: bool = False) -> bytes:
        """`read_bytes` for a file in a folder other users may write (a home, a compile workdir): read with
        regular_files' `read_untrusted_file`, so a hard link or a file not its folder owner's is refused. A link in
        the last component is refused too, unless `follow_links`: then it is followed inside the root, and the file
        it leads to is judged in its own folder (what pip reads, the doctor reads)."""
        if follow_links:
            target = os.path.realpath(inner) if self.is_live else self._located(inner)
        else:
            target = inner if self.is_live else self._in_folder(inner) or self._in_located_folder(inner)
        if target is None:
            raise OSError(errno.ELOOP, "too many levels of symbolic links", inner)
        return read_untrusted_file(target, limit, tail=tail)

    def _in_located_folder(self, inner: str) -> Optional[str]:
        """The machine path of `inner`'s last component in its folder resolved by a walk, not looked at."""
        folder, _, name = inner.rstrip("/").rpartition("/")
        base = self._located(folder) if folder else str(self.root)
        if base is None or name in ("", ".", ".."):
            return None
        return f"{base.rstrip('/')}/{name}"

    def try_read_untrusted_text(self, inner: str, limit: int = DEFAULT_READ_LIMIT,
                                follow_links: bool = False) -> Optional[str]:
        """`read_untrusted_bytes` as text (UTF-8 with replacement), None when it cannot be read or is refused."""
        try:
            return self.read_untrusted_bytes(inner, limit, follow_links=follow_links).decode("utf-8", "replace")
        except (OSError, ValueError):  # ValueError: a NUL byte in a path made of data
            return None

    def read_text(self, inner: str, limit: int = DEFAULT_READ_LIMIT) -> str:
        """Text decoded as UTF-8 with replacement, so a stray byte never stops a report."""
        return self.read_bytes(inner, limit).decode("utf-8", errors="replace")

    def try_read_text(self, inner: str, limit: int = DEFAULT_READ_LIMIT) -> Optional[str]:
        try:
            return self.read_text(inner, limit)
        except OSError:
            return None

    def listdir(self, inner_dir: str) -> list[str]:
        """Entry names of a directory, sorted; raises OSError like `os.listdir`."""
        path = inner_dir if self.is_live else self.resolve(inner_dir)
        if path is None:
            raise OSError(errno.ELOOP, "too many levels of symbolic links", inner_dir)
        return sorted(os.listdir(path))

    def links_in(self, inner_dir: str) -> set[str]:
        """Names of the entries of a directory that are symbolic links themselves, from the directory's own
        entry types (no `lstat` per entry: a site-packages holds a thousand records); raises OSError.

        Under a root the other entries are remembered as resolved folders of this run's view (`_in_folder`), so
        reading the files of a thousand install records does not look at each record's directory again."""
        path = inner_dir if self.is_live else self.resolve(inner_dir)
        if path is None:
            raise OSError(errno.ELOOP, "too many levels of symbolic links", inner_dir)
        links: set[str] = set()
        base = inner_dir.rstrip("/")
        with os.scandir(path) as entries:
            for entry in entries:
                if entry.is_symlink():
                    links.add(entry.name)
                elif not self.is_live and entry.name not in (".", ".."):
                    self._folders.setdefault(f"{base}/{entry.name}", f"{path}/{entry.name}")
        return links

    def is_dir(self, inner: str) -> bool:
        path = inner if self.is_live else self.resolve(inner)
        return path is not None and os.path.isdir(path)

    def is_link(self, inner: str) -> bool:
        """Whether the last component is itself a symbolic link (not followed)."""
        return os.path.islink(self.shown_path(inner))

    def glob(self, inner_dir: str, pattern: str) -> list[str]:
        """In-root paths of the entries of a directory that match a glob pattern, sorted."""
        directory = self.resolve(inner_dir)
        if directory is None or not directory.is_dir():
            return []
        base = inner_dir.rstrip("/")
        try:
            return sorted(f"{base}/{entry.name}" for entry in directory.glob(pattern))
        except OSError:
            return []
