"""The exit codes of every command (docs/contracts.md §7), and the error a user can meet.

A library caller raises `UserError` for bad usage or input it was given; the command line prints it the one way
(`error: …` on stderr) and exits with its code. Nothing below the command line prints an error itself.
"""

from __future__ import annotations

OK = 0
FINDINGS = 1
BAD_INPUT = 2
UNKNOWN = 3
SKIPPED = 4
INTERRUPTED = 130


class UserError(Exception):
    """Bad usage or unusable input the user named: a one-line message and an exit code (2 unless said).

    `label` leads the printed line (`error: …`); a probe that could not run here says `skipped: …` instead.
    """

    label = "error"

    def __init__(self, message: str, exit_code: int = BAD_INPUT) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class Skipped(UserError):
    """A probe that needs what this host lacks (a device, torch-neuronx, torch-xla): exit 4, never success."""

    label = "skipped"

    def __init__(self, message: str) -> None:
        super().__init__(message, SKIPPED)
