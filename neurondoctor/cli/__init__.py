"""Entry point of the `neurondoctor` command (console script and `python -m neurondoctor`).

`check`, `health` and `cache` go straight to their argparse front ends, so the hot paths never import typer;
every other command is the typer application in `app`. Both end here, where the two things no command can
handle itself are handled once: a `UserError` becomes one `error: …` line, and a stdout that is closed or full
(`check --json >&-`, `> /dev/full`) becomes exit 3 with a line on stderr instead of a traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import NoReturn

from neurondoctor import exit_codes
from neurondoctor.output_text import tolerant_streams, write_text


def print_user_error(message: str, label: str = "error") -> None:
    """The one way an error reaches the user: `error: message` (or `skipped: …`) on stderr, its secrets redacted
    (a URL's credentials in a failed download, a token in a command's output)."""
    from neurondoctor.redaction import redact_secrets

    if sys.stderr is not None:
        write_text(f"{label}: {redact_secrets(message)}\n", sys.stderr)


def warn_about_environment(environ: Mapping[str, str]) -> None:
    """`warning: …` for each environment variable whose value the doctor ignores (an unbounded timeout)."""
    from neurondoctor.command_runner import environment_warnings

    for problem in environment_warnings(environ):
        print_user_error(problem, "warning")


def _stdout_lost(error: BaseException) -> NoReturn:
    """Report a stdout that cannot take the output, and keep Python's shutdown flush from raising again."""
    if not isinstance(error, BrokenPipeError):  # a reader that stopped early (`| head`) wants no complaint
        reason = getattr(error, "strerror", None) or type(error).__name__
        print_user_error(f"could not write the output: standard output is closed or full ({reason})")
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
    except OSError:
        pass
    os._exit(exit_codes.UNKNOWN)


def _dispatch(argv: list[str]) -> int:
    if argv[:1] == ["check"]:
        from neurondoctor.cli.check_command import run

        return run(argv[1:])
    if argv[:1] == ["health"]:
        from neurondoctor.cli.health_command import run as run_health

        return run_health(argv[1:])
    if argv[:1] == ["cache"]:
        from neurondoctor.cli.cache_command import run as run_cache

        return run_cache(argv[1:])
    from neurondoctor.cli.app import app

    try:
        app(prog_name="neurondoctor", args=argv)
    except SystemExit as stop:  # click ends every command this way, with its exit code
        return stop.code if isinstance(stop.code, int) else exit_codes.OK
    return exit_codes.OK


def main() -> None:
    if sys.stdout is None:  # started with fd 1 closed: nothing can be reported, so nothing is done
        print_user_error("standard output is closed; nothing was checked")
        raise SystemExit(exit_codes.UNKNOWN)
    tolerant_streams()
    try:
        code = _dispatch(sys.argv[1:])
        sys.stdout.flush()
    except exit_codes.UserError as error:
        print_user_error(error.message, error.label)
        code = error.exit_code
    except (BrokenPipeError, OSError) as error:
        if not _is_stdout_error(error):
            raise
        _stdout_lost(error)
    if _ends_without_teardown(sys.argv[1:]):
        sys.stderr.flush()
        os._exit(code)
    raise SystemExit(code)


def _ends_without_teardown(argv: list[str]) -> bool:
    """`check` and `health` (not `check --fix`) end without the interpreter's teardown: freeing every module and
    every object of the report one by one cost them 10-16 ms a run on a 2-core machine (docs/measured.md), and a
    Slurm health check runs on every node every few minutes. They leave nothing to finalize: every file they write
    is closed and every command they run waited for before they return, and stdout was flushed above."""
    return argv[:1] in (["check"], ["health"]) and "--fix" not in argv


def _is_stdout_error(error: OSError) -> bool:
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
