"""How long a command the doctor runs may take, and what the environment may set about it.

Apart from the runner (command_runner.py), which is imported only when a command runs: every run reads these, and
most runs of `check` (no neuron-ls, no rpm) run no command at all.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Optional

from neurondoctor.strict_numbers import finite_float

DEFAULT_TIMEOUT = 10.0
# A duration an environment variable may set: `inf`, `nan` or a day would remove the deadline that
# keeps a hung `neuron-ls` from hanging the check.
MAX_ENVIRONMENT_DURATION_S = 3600.0
COMMAND_TIMEOUT_VARIABLE = "NEURONDOCTOR_COMMAND_TIMEOUT"
WAIT_NOTICE_S = 1.0  # a command still running after this long is announced to the waiting observer
WaitObserver = Callable[[Sequence[str], float], None]
_wait_observer: list[WaitObserver] = []


def observe_waits(observer: Optional[WaitObserver]) -> None:
    """Give the command line a way to say what the doctor waits for: `observer(argv, timeout)` is called once for each
    command still running after WAIT_NOTICE_S (a hung `neuron-ls` would otherwise stall `check` for its whole deadline
    in silence). Library code draws nothing itself; None removes the observer."""
    _wait_observer[:] = [observer] if observer is not None else []


def announce_wait(argv: Sequence[str], timeout: float) -> None:
    """Tell the observer (if any) that `argv` still runs; called by the runner."""
    for observer in _wait_observer:
        try:
            observer(argv, timeout)
        except (OSError, ValueError):  # a closed or full stderr: the notice is a courtesy, the command goes on
            continue


def duration_from_environ(environ: Mapping[str, str], variable: str, default: float) -> tuple[float, Optional[str]]:
    """(seconds, problem): the variable's value when it is a finite number of seconds above 0 and at most an hour,
    else the default and a one-line reason (None when the variable is unset or fine)."""
    text = environ.get(variable)
    if text is None:
        return default, None
    value = finite_float(text, maximum=MAX_ENVIRONMENT_DURATION_S)  # None for nan, inf, `٣`, ` 5`
    if value is not None and value > 0:
        return value, None
    shown = text if len(text) <= 32 else text[:29] + "..."
    return default, (f"{variable}={shown!r} is not a number of seconds above 0 and at most "
                     f"{MAX_ENVIRONMENT_DURATION_S:g}: the default is used")


def environment_warnings(environ: Mapping[str, str]) -> list[str]:
    """One line for each duration variable whose value is ignored, for the command line to show."""
    problems = [duration_from_environ(environ, variable, DEFAULT_TIMEOUT)[1]
                for variable in (COMMAND_TIMEOUT_VARIABLE,)]
    return [problem for problem in problems if problem]
