"""Files `health` rewrites on every run (the Prometheus textfile, the status file): written atomically (a temporary
sibling, fsync, rename: node_exporter or a waiting unit never reads half a file), and only over a file the doctor
wrote before. A path that holds anything else — someone's file, a link, a device, a directory — is refused unless
the user names it with `--force` (then only a regular file or a link is replaced, never followed).
"""

from __future__ import annotations

import json
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

from neurondoctor import exit_codes
from neurondoctor.regular_files import read_regular_file

STATUS_SCHEMA = "neurondoctor.status/1"
_PEEK = 64 << 10


def is_prometheus_textfile(data: bytes) -> bool:
    return data.startswith(b"# HELP neurondoctor_")


def _has_schema(data: bytes, schema: str) -> bool:
    try:
        document = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return False
    return isinstance(document, dict) and document.get("schema") == schema


def is_status_file(data: bytes) -> bool:
    return _has_schema(data, STATUS_SCHEMA)


def is_report_document(data: bytes) -> bool:
    return _has_schema(data, "neurondoctor.report/1")


def replace_owned_file(path: Path, data: bytes, ours: Callable[[bytes], bool], force: bool = False) -> None:
    """Write `data` at `path`; raises UserError (exit 2) for a path it must not replace."""
    try:
        mode: Optional[int] = path.lstat().st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None:
        if stat.S_ISDIR(mode) or not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):
            raise exit_codes.UserError(f"{path}: exists and is not a regular file; refusing to replace it")
        if not force:
            if stat.S_ISLNK(mode):
                raise exit_codes.UserError(f"{path}: is a symbolic link; refusing to write through or over it "
                                           "(--force replaces the link itself)")
            try:
                existing = read_regular_file(path, _PEEK)
            except OSError as error:
                raise exit_codes.UserError(f"{path}: cannot be read to check it is neurondoctor's: "
                                           f"{error.strerror or error}") from error
            if existing and not ours(existing):
                raise exit_codes.UserError(f"{path}: exists and was not written by neurondoctor; refusing to replace"
                                           " it (--force replaces it)")
    if not path.parent.is_dir():
        raise exit_codes.UserError(f"{path}: the directory {path.parent} does not exist")
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, path)
    except OSError as error:
        raise exit_codes.UserError(f"could not write {path}: {error.strerror or error}") from error
    finally:
        if temporary.exists():
            temporary.unlink()


def read_status_file(path: Path) -> Optional[dict[str, Any]]:
    """The previous status document, or None when there is none usable (missing, foreign, corrupt)."""
    try:
        data = read_regular_file(path, _PEEK)
    except OSError:
        return None
    if not is_status_file(data):
        return None
    document: dict[str, Any] = json.loads(data.decode("utf-8"))
    return document
