"""The one place the doctor runs commands: argv lists only, a timeout always, output decoded safely.

A missing command, a hang or undecodable output becomes a `CommandResult` that says so; callers
record it as a fact and the report goes on.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Optional

DEFAULT_TIMEOUT = 10.0
OUTPUT_LIMIT = 4 << 20


@dataclass(frozen=True)
class CommandResult:
    """What running a command produced; `ok` only when it ran to completion with exit status 0."""

    argv: tuple[str, ...]
    returncode: Optional[int]
    stdout: str
    stderr: str
    duration_s: float
    timed_out: bool = False
    error: Optional[str] = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out and self.error is None

    def describe_failure(self) -> str:
        """One line for a report: why the command gave no usable answer."""
        command = " ".join(self.argv)
        if self.error:
            return f"`{command}` could not run: {self.error}"
        if self.timed_out:
            return f"`{command}` did not finish within {self.duration_s:.1f} s and was stopped"
        last = (self.stderr.strip().splitlines() or [""])[-1][:200]
        return f"`{command}` exited with status {self.returncode}" + (f": {last}" if last else "")


def _decode(data: Optional[bytes]) -> str:
    return (data or b"")[:OUTPUT_LIMIT].decode("utf-8", errors="replace")


def run_command(argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT,
                env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
                stdin_data: Optional[bytes] = None) -> CommandResult:
    """Run argv (never through a shell) in its own process group, killing the group on timeout."""
    started = time.monotonic()
    try:
        process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin_data is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as error:
        return CommandResult(tuple(argv), None, "", "", time.monotonic() - started,
                             error=error.strerror or str(error))
    try:
        stdout, stderr = process.communicate(input=stdin_data, timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        stdout, stderr = process.communicate()
        return CommandResult(tuple(argv), None, _decode(stdout), _decode(stderr),
                             time.monotonic() - started, timed_out=True)
    except BaseException:  # Ctrl-C: the child runs in its own session and would not see the signal
        _kill_group(process)
        process.wait()
        raise
    return CommandResult(tuple(argv), process.returncode, _decode(stdout), _decode(stderr),
                         time.monotonic() - started)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()
