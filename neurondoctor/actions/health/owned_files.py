"""Files `health` and `bootstrap` rewrite on every run (the Prometheus textfile, the status files): written
atomically (a temporary sibling, fsync, rename: node_exporter or a waiting unit never reads half a file), and only
over a file that carries the doctor's own marker: a path that holds anything else — someone's file,
an empty file (another user's placeholder is not ours), a link, a device, a directory — is refused, and so is a
directory that is a link, or lies below a link another user owns (the write would land where they point it).
The status document itself (`neurondoctor.status/1`) is built here
once for both.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Optional

from neurondoctor import exit_codes, json_data
from neurondoctor.output_targets import target_mode, writable_directory, write_failure
from neurondoctor.regular_files import read_regular_file

STATUS_SCHEMA = "neurondoctor.status/1"
_PEEK = 64 << 10


def is_prometheus_textfile(data: bytes) -> bool:
    return data.startswith(b"# HELP neurondoctor_")


def _has_schema(data: bytes, schema: str) -> bool:
    try:
        document = json_data.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(document, dict) and document.get("schema") == schema


def is_status_file(data: bytes) -> bool:
    return _has_schema(data, STATUS_SCHEMA)


def is_report_document(data: bytes) -> bool:
    return _has_schema(data, "neurondoctor.report/1")


def replace_owned_file(path: Path, data: bytes, ours: Callable[[bytes], bool]) -> None:
    """Write `data` at `path`; raises UserError (exit 2) for a path it must not replace."""
    mode = target_mode(path, str(path))
    if mode is not None:
        if stat.S_ISLNK(mode):
            raise exit_codes.UserError(f"{path}: is a symbolic link; refusing to write through or over it")
        if not stat.S_ISREG(mode):
            raise exit_codes.UserError(f"{path}: exists and is not a regular file; refusing to replace it")
        try:
            existing = read_regular_file(path, _PEEK)
        except OSError as error:
            raise exit_codes.UserError(f"{path}: cannot be read to check it is neurondoctor's: "
                                       f"{error.strerror or error}") from error
        if not ours(existing):
            raise exit_codes.UserError(f"{path}: exists and was not written by neurondoctor; refusing to replace it")
    writable_directory(path.parent, str(path))
    linked = _linked_directory(path.parent)
    if linked:
        raise exit_codes.UserError(f"{path}: {linked}; refusing to write through it")
    temporary = path.with_name(f".{path.name}.{os.urandom(4).hex()}.partial")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as error:
        raise write_failure(str(path), error) from error
    finally:
        if temporary.exists():
            temporary.unlink()


def _linked_directory(directory: Path) -> Optional[str]:
    """Why writing into `directory` would follow a link someone else placed: the directory itself is a link, or an
    ancestor is a link owned by another user than root and this one. None when the way there is the doctor's."""
    absolute = Path(os.path.abspath(directory))
    if absolute.is_symlink():
        return f"the directory {absolute} is a symbolic link"
    for ancestor in absolute.parents:
        try:
            info = ancestor.lstat()
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode) and info.st_uid not in (0, os.geteuid()):
            return f"{ancestor} is a symbolic link owned by uid {info.st_uid}"
    return None


def write_status_file(path: Path, state: str, reasons: Sequence[str], release: Optional[str],
                      steps: list[dict[str, Any]], stale: bool = False, make_directory: bool = False,
                      **extra: Any) -> None:
    """`neurondoctor.status/1`: `written_at`, `state`, `reasons`, `stale`, `release`, what the writer adds
    (bootstrap's `failed_step`), `steps`. `make_directory` creates the default directory (/var/lib/neurondoctor)."""
    document = {"schema": STATUS_SCHEMA, "written_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "state": state, "reasons": list(reasons), "stale": stale, "release": release, **extra,
                "steps": steps}
    if make_directory:
        try:
            path.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        except OSError as error:
            raise write_failure(str(path), error) from error
    replace_owned_file(path, (json_data.dumps(document, indent=1) + "\n").encode(), is_status_file)


def read_status_file(path: Path) -> Optional[dict[str, Any]]:
    """The previous status document, or None when there is none usable (missing, foreign, corrupt)."""
    try:
        data = read_regular_file(path, _PEEK)
    except OSError:
        return None
    if not is_status_file(data):
        return None
    document: dict[str, Any] = json_data.loads(data.decode("utf-8"))
    return document
