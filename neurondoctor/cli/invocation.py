"""What every command shares with the entry point (`cli.main`): the one way an error reaches the user, the
environment a command judges, and the two events that end any command the same way (a stdout that cannot take the
output, Ctrl-C).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import Any

from neurondoctor.output_text import field_text, write_text


def print_user_error(message: str, label: str = "error") -> None:
    """The one way an error reaches the user: `error: message` (or `skipped: …`) on stderr, its secrets redacted
    (a URL's credentials in a failed download, a token in a command's output), on one line whatever a path or a
    name in it holds (`field_text`)."""
    from neurondoctor.redaction import redact_keeping_reason

    if sys.stderr is not None:
        write_text(f"{label}: {field_text(redact_keeping_reason(message))}\n", sys.stderr)


def warn_about_environment(environ: Mapping[str, str]) -> None:
    """`warning: …` for each environment variable whose value the doctor ignores (an unbounded timeout)."""
    from neurondoctor.command_timeouts import environment_warnings

    for problem in environment_warnings(environ):
        print_user_error(problem, "warning")


class StdoutLost(Exception):
    """Standard output could not take a command's output (closed, full, a reader gone)."""

    def __init__(self, error: OSError) -> None:
        super().__init__(str(error))
        self.error = error


class Interrupted(Exception):
    """Ctrl-C (SIGINT) during a command."""


def invocation_environ(ctx: Any) -> dict[str, str]:
    """The environment a command judges: the one `run` was given (a test, an in-process caller), else this
    process's."""
    given = ctx.find_root().obj
    return dict(given) if isinstance(given, Mapping) else dict(os.environ)


def is_stdout_error(error: OSError) -> bool:
    """An error writing stdout (EPIPE, ENOSPC, EBADF), as opposed to one of a file the command itself opened."""
    import errno

    if isinstance(error, BrokenPipeError):
        return True
    if error.errno not in (errno.ENOSPC, errno.EBADF, errno.EPIPE, errno.EIO):
        return False
    try:
        os.fstat(1)
    except OSError:
        return True
    return getattr(error, "filename", None) is None
