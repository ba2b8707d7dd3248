"""The one place the terminal's size is read, for the text report's wrapping and for every rich console.

`COLUMNS` and `LINES` are the user's environment, not a promise: rich reads `COLUMNS=0` as a console 0 wide and
prints nothing at all (a `check` with no output), and `COLUMNS=²` makes rich's own `int()` raise. So the size is
read here, strictly (strict_numbers: ASCII digits, above 0, bounded), then from the terminal itself, else 80 x 25,
and every console is made with that size, so rich never reads the variables.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Mapping
from typing import IO, Any, Optional

from neurondoctor.strict_numbers import parse_count

DEFAULT_COLUMNS = 80
DEFAULT_LINES = 25
MAX_SIZE = 10_000  # wider than any terminal: a larger COLUMNS is not a width, and the fallback is used


def _size_from(environ: Mapping[str, str], variable: str) -> Optional[int]:
    value = parse_count(environ.get(variable, ""), maximum=MAX_SIZE)
    return value if value else None


def _terminal(stream: IO[Any]) -> Optional[os.terminal_size]:
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, ValueError, OSError):
        return None
    return size if size.columns > 0 and size.lines > 0 else None


def terminal_size(stream: IO[Any], environ: Optional[Mapping[str, str]] = None) -> tuple[int, int]:
    """(columns, lines): COLUMNS and LINES when each is a number above 0, else the terminal's, else 80 x 25."""
    environ = os.environ if environ is None else environ
    measured = _terminal(stream)
    columns = _size_from(environ, "COLUMNS") or (measured.columns if measured else DEFAULT_COLUMNS)
    lines = _size_from(environ, "LINES") or (measured.lines if measured else DEFAULT_LINES)
    return columns, lines


def wrap_width(stream: IO[Any]) -> Optional[int]:
    """The width to wrap a report at when it goes to a terminal; None (no wrapping) for files and pipes."""
    try:
        on_terminal = stream.isatty()
    except (AttributeError, ValueError, OSError):
        return None
    return terminal_size(stream)[0] if on_terminal else None


def console(stream: IO[Any], **options: Any) -> Any:
    """A rich Console on `stream` with the size read here (never rich's own reading of COLUMNS and LINES)."""
    from rich.console import Console

    class ReaderStops(Console):
        """rich ends the program with exit 1 when the reader of its stream goes away (`check | head -1`), which reads
        as "unhealthy": here the BrokenPipeError goes on to the command line, which exits 3 (the output is lost)."""

        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, "the reader of the output stopped")

    columns, lines = terminal_size(stream)
    return ReaderStops(file=stream, width=columns, height=lines, **options)
