"""Whether root may run an interpreter: never one that another user controls.

Root running `/home/alice/venv/bin/python` runs alice's code: the file or a link on the way to it may be hers, a
directory above it may let her swap it, and the environment's site-packages may hold a `.pth` file that Python
executes at start-up. So before the doctor, running as root, starts an interpreter (`--python`, `check --fix`,
the probes, `venv create --python`), it looks at the path, its target, every directory above each, and the
environment's `pyvenv.cfg` and site-packages: any of them owned by another user, or writable by one (group or
others, a root-owned sticky directory such as /tmp excepted), is a refusal with one line that names it.
Run by an ordinary user nothing is refused: what that user can write, that user may run.
"""

from __future__ import annotations

import glob
import os
import shutil
import stat
from pathlib import Path
from typing import Optional


def _owner_name(uid: int) -> str:
    try:
        import pwd

        return f"uid {uid} ({pwd.getpwuid(uid).pw_name})"
    except (ImportError, KeyError):
        return f"uid {uid}"


def foreign_control(path: str) -> Optional[str]:
    """Why another user controls this one path (not following a last link), or None."""
    try:
        info = os.lstat(path)
    except OSError:
        return None  # what is not there cannot be swapped; running it fails on its own
    if info.st_uid != 0:
        return f"{path} is owned by {_owner_name(info.st_uid)}"
    if stat.S_ISLNK(info.st_mode):
        return None  # a root-owned link: its target is judged on its own
    sticky_root_directory = stat.S_ISDIR(info.st_mode) and info.st_mode & stat.S_ISVTX
    if info.st_mode & stat.S_IWOTH and not sticky_root_directory:
        return f"{path} is writable by every user"
    if info.st_mode & stat.S_IWGRP and info.st_gid != 0 and not sticky_root_directory:
        return f"{path} is writable by group {info.st_gid}"
    return None


def _with_ancestors(path: str) -> list[str]:
    absolute = Path(os.path.abspath(path))
    return [str(absolute), *(str(parent) for parent in absolute.parents)]


def _environment_files(executable: str) -> list[str]:
    """The files of the environment the interpreter starts in: its `pyvenv.cfg` and site-packages folders."""
    prefix = os.path.dirname(os.path.dirname(os.path.abspath(executable)))
    found = [os.path.join(prefix, "pyvenv.cfg")]
    for pattern in ("lib/python*/site-packages", "lib64/python*/site-packages"):
        found += sorted(glob.glob(os.path.join(glob.escape(prefix), pattern)))
    return found


def refusal_to_run(executable: str, euid: Optional[int] = None) -> Optional[str]:
    """One line on why root must not run `executable`, or None (not root, or nothing foreign on the way)."""
    if (os.geteuid() if euid is None else euid) != 0:
        return None
    if os.sep not in executable:  # `python3`: the one PATH gives
        executable = shutil.which(executable) or executable
    paths = [*_with_ancestors(executable), *_with_ancestors(os.path.realpath(executable))]
    for environment_file in _environment_files(executable):
        paths += [environment_file, *_with_ancestors(environment_file)[1:]]
    for path in dict.fromkeys(paths):
        reason = foreign_control(path)
        if reason:
            return f"refusing to run {executable} as root: {reason}"
    return None
