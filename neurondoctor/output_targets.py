"""The paths a user names for the doctor to write (`bundle -o`, `venv create DIR`, `--output`, `--status-file`,
`--save-reports`), looked at before anything is written.

A target that cannot be one is the user's input, not the doctor's failure: `/etc/passwd/x.tar.gz` (a file where a
directory belongs), a directory that does not exist, a place this user cannot write. Each is one `error:` line
and exit 2 (docs/contracts.md §7), raised here as UserError, never an OSError's traceback from deep in a write.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Optional

from neurondoctor import exit_codes


def _why(error: OSError) -> str:
    return error.strerror or type(error).__name__


def target_mode(path: Path, shown: str) -> Optional[int]:
    """The `lstat` mode of what is at the target, None when nothing is; UserError when the path cannot be looked at
    (a component is a file, a directory this user cannot search)."""
    try:
        return path.lstat().st_mode
    except FileNotFoundError:
        return None
    except OSError as error:
        raise exit_codes.UserError(f"{shown}: {_why(error)}") from error


def writable_directory(directory: Path, shown: str) -> None:
    """The directory a target goes in: it exists, is a directory, and this user can create files in it."""
    mode = target_mode(directory, shown)
    if mode is None:
        raise exit_codes.UserError(f"{shown}: the directory {directory} does not exist")
    if not stat.S_ISDIR(mode) and not directory.is_dir():  # a link to a directory is judged by its callers
        raise exit_codes.UserError(f"{shown}: {directory} is not a directory")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise exit_codes.UserError(f"{shown}: cannot write in {directory} (permission denied)")


def creatable_directory(directory: Path, shown: str) -> None:
    """A directory the doctor writes in and creates, with its missing parents, when it is not there (`venv create`
    builds beside its target, `--save-reports`): it, or else the nearest parent that is there, must be a directory
    this user can write in."""
    existing = Path(os.path.abspath(directory))
    while target_mode(existing, shown) is None and existing != existing.parent:
        existing = existing.parent
    writable_directory(existing, shown)


def write_failure(shown: str, error: OSError) -> exit_codes.UserError:
    """The one line for a write that failed after the checks (a full disk, a read-only filesystem)."""
    return exit_codes.UserError(f"could not write {shown}: {_why(error)}")
