"""Entry points of the `neurondoctor` command (console script and `python -m neurondoctor`) and of
`neurondoctor-slurm-health`.

Every command is the typer application in `app`. Whatever a command cannot handle itself is handled here, once,
the same way for all of them: a `UserError` or a usage mistake becomes one `error: …` line (exit 2, or the
error's own code), Ctrl-C exit 130, a stdout that is closed or full (`check --json >&-`, `> /dev/full`) exit 3 with a
line on stderr instead of a traceback, and any other OSError one `error:` line and exit 3.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Mapping, Sequence
from typing import Any, NoReturn, Optional

from neurondoctor import exit_codes
from neurondoctor.cli.invocation import Interrupted, StdoutLost, is_stdout_error, print_user_error
from neurondoctor.output_text import tolerant_streams, write_text


def _stdout_lost(error: BaseException) -> NoReturn:
    """Report a stdout that cannot take the output; what is still buffered for it goes to /dev/null, so that the
    interpreter's flush at exit does not raise again (the recipe of Python's documentation for SIGPIPE)."""
    if not isinstance(error, BrokenPipeError):  # a reader that stopped early (`| head`) wants no complaint
        reason = getattr(error, "strerror", None) or type(error).__name__
        print_user_error(f"could not write the output: standard output is closed or full ({reason})")
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
    except OSError:
        os._exit(exit_codes.UNKNOWN)  # no descriptor left to take the buffer: the flush at exit would fail again
    raise SystemExit(exit_codes.UNKNOWN)


def _click_exception() -> type[Exception]:
    """click's ClickException (a usage error, a bad value), the class every command-line mistake raises. Found
    through typer's public `BadParameter` (BadParameter < UsageError < ClickException), so it is the right class
    whether typer carries click inside or depends on it."""
    import typer

    return next(base for base in typer.BadParameter.__mro__ if base.__name__ == "ClickException")


def run(argv: Sequence[str], environ: Optional[Mapping[str, str]] = None) -> int:
    """Run one command line; returns its exit code (docs/contracts.md §7). A user's mistake is one `error:` line on
    stderr. `environ` replaces this process's environment for what the command judges (tests, in-process
    callers)."""
    import typer

    from neurondoctor.cli.app import app
    from neurondoctor.color_choice import choose

    click_exception = _click_exception()
    choose("auto")  # one run, one choice: an in-process caller's earlier `--color` does not carry over
    try:
        code = app(args=list(argv), prog_name="neurondoctor", standalone_mode=False, obj=environ)
    except exit_codes.UserError as error:
        print_user_error(error.message, error.label)
        return error.exit_code
    except StdoutLost as lost:
        _stdout_lost(lost.error)
    except (Interrupted, KeyboardInterrupt, typer.Abort):
        print_user_error("stopped (Ctrl-C)", "interrupted")
        return exit_codes.INTERRUPTED
    except click_exception as error:
        return _usage_error(error)
    except OSError as error:
        if is_stdout_error(error):
            raise
        return _could_not_run(error)
    return code if isinstance(code, int) else exit_codes.OK


def _could_not_run(error: OSError) -> int:
    """An OSError no command turned into its own line (each names a bad target as exit 2 itself): one line, exit 3,
    because the doctor could not finish, never a traceback."""
    where = f"{error.filename}: " if getattr(error, "filename", None) else ""
    print_user_error(f"{where}{error.strerror or error} (the command could not finish)")
    return exit_codes.UNKNOWN


def _usage_error(error: Any) -> int:
    """A command-line mistake as one line: what is wrong, and where the options are listed. A group given no
    command (`neurondoctor cache`) shows its help instead, on stderr, exit 2, as click does."""
    if type(error).__name__ == "NoArgsIsHelpError":
        write_text(error.format_message() + "\n", sys.stderr)
        return int(error.exit_code)
    context = getattr(error, "ctx", None)
    command = context.command_path if context is not None else "neurondoctor"
    print_user_error(f"{error.format_message()} (see `{command} -h`)")
    return int(getattr(error, "exit_code", exit_codes.BAD_INPUT))


def main() -> None:
    if sys.stdout is None:  # started with fd 1 closed: nothing can be reported, so nothing is done
        print_user_error("standard output is closed; nothing was checked")
        raise SystemExit(exit_codes.UNKNOWN)
    tolerant_streams()
    _collect_less_often()
    _announce_waits_on_a_terminal()
    try:
        code = run(sys.argv[1:])
        sys.stdout.flush()
    except (BrokenPipeError, OSError) as error:
        if not is_stdout_error(error):
            raise
        _stdout_lost(error)
    _spare_the_exit_collections()
    raise SystemExit(code)


def _announce_waits_on_a_terminal() -> None:
    """On a terminal, a tool that keeps the doctor waiting more than a second is named on stderr; logs and pipes
    get the report alone (a tool that times out is named in the report itself)."""
    try:
        on_terminal = sys.stderr is not None and sys.stderr.isatty()
    except (ValueError, OSError):
        on_terminal = False
    if on_terminal:
        from neurondoctor.cli.progress import announce_wait
        from neurondoctor.command_timeouts import observe_waits

        observe_waits(announce_wait)


def _collect_less_often() -> None:
    """A run makes tens of thousands of objects that live to its end (modules, the release data, every install
    record) and almost no cycles. With the cycle collector's default, a pass every 700 new objects, it ran 66 times
    in a `check` of a 300-package environment: 7 ms of 130, 5%, on every node every few minutes. One pass per
    200,000 objects, as mypy sets it for the same reason; reference counting still frees everything at once."""
    gc.set_threshold(200_000, 30, 30)


def _spare_the_exit_collections() -> None:
    """The interpreter's exit is the normal one (atexit handlers, flushes, every module and object released), only
    without the cycle collector's passes over the objects that are left: `gc.freeze()` moves them to the permanent
    generation, and reference counting frees them as usual. Those passes over every module's and the report's
    objects cost `check` and `health` 15-18 ms a run on a 2-core machine (docs/measured.md), on every node every
    few minutes, to find no garbage worth collecting in a process about to end."""
    gc.freeze()


def slurm_main() -> None:
    """`neurondoctor-slurm-health`: Slurm's HealthCheckProgram, which is given no arguments; its options come from
    health.conf."""
    sys.argv = [sys.argv[0], "health", "--slurm", *sys.argv[1:]]
    main()
