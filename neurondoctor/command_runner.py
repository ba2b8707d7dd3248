"""The one place the doctor runs commands: argv lists only, a deadline always, output bounded and decoded safely.

A missing command, a hang, a grandchild that keeps the output open, endless or undecodable output becomes a
`CommandResult` that says so; callers record it as a fact and the report goes on.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from neurondoctor.command_timeouts import DEFAULT_TIMEOUT, WAIT_NOTICE_S, announce_wait
from neurondoctor.strict_numbers import parse_count

if TYPE_CHECKING:
    import subprocess

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
    truncated: bool = False

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


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


class _Capture:
    """Output of one pipe, kept up to a limit while the rest is read and dropped (the child never blocks on a
    full pipe, and a command that prints a gigabyte costs OUTPUT_LIMIT of memory, not a gigabyte)."""

    def __init__(self, limit: int) -> None:
        self.data = bytearray()
        self.limit = limit
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        self.data += chunk[:max(0, room)]
        self.dropped += max(0, len(chunk) - max(0, room))


# After the command itself exits, a grandchild that kept its stdout (a daemon it started) gets this long to
# close it before the doctor stops reading: the command's answer does not wait for its children.
_AFTER_EXIT_GRACE = 0.5


def _holders_of(pipe_inode: int) -> list[int]:
    """PIDs that hold the write end of our pipe open: descendants of the command that escaped its process
    group (`setsid`), found by the pipe they inherited (only they can hold it)."""
    holders = []
    own = os.getpid()
    try:
        pids = [name for name in os.listdir("/proc") if parse_count(name) not in (None, own)]
    except OSError:
        return []
    wanted = f"pipe:[{pipe_inode}]"
    for pid in pids:
        try:
            descriptors = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for descriptor in descriptors:
            try:
                if os.readlink(f"/proc/{pid}/fd/{descriptor}") == wanted:
                    holders.append(int(pid))
                    break
            except OSError:
                continue
    return holders


def _stop(process: subprocess.Popen[bytes], pipe_inodes: list[int], grace_s: float = 0.0) -> None:
    """Kill the command's process group and whatever else still holds its pipes; reap the command.

    With `grace_s`, the group is first asked to end by itself (SIGTERM) and given that long.
    """
    import signal
    import subprocess

    if grace_s > 0:
        _ask_to_stop(process, grace_s)
    _kill_group(process)
    for inode in pipe_inodes:
        for pid in _holders_of(inode):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=2)


# Signal handlers that stop the doctor (SIGTERM, Ctrl-C during a build) must not raise while a child is being
# spawned: an exception inside `Popen()` loses the child, which then runs on unsupervised. They call `interrupt()`,
# which raises at once outside run_command and, inside it, at the next point where the child can be stopped.
_running = 0
_pending: Optional[BaseException] = None
# The commands running now, so a caller that gives up on a worker thread (health's deadline) can stop them.
_live: dict[int, tuple[subprocess.Popen[bytes], list[int]]] = {}
_stopped = False


def stop_running_commands() -> int:
    """Kill every command still running (with what it spawned) and refuse new ones from then on; returns how many
    were running."""
    global _stopped
    _stopped = True
    running = list(_live.values())
    for process, inodes in running:
        _stop(process, inodes)
    return len(running)


def interrupt(exception: BaseException) -> None:
    """From a signal handler: raise `exception` now, or as soon as the running command can be stopped."""
    global _pending
    if _running:
        _pending = exception
        return
    raise exception


def _raise_pending() -> None:
    global _pending
    if _pending is not None:
        pending, _pending = _pending, None
        raise pending


def run_command(argv: Sequence[str], timeout: float = DEFAULT_TIMEOUT,
                env: Optional[Mapping[str, str]] = None, cwd: Optional[str] = None,
                output_limit: int = OUTPUT_LIMIT,
                on_stderr_line: Optional[Callable[[str], None]] = None, stop_grace_s: float = 0.0) -> CommandResult:
    """Run argv (never through a shell) in its own process group, reading its output with a deadline.

    The deadline holds whatever the command does: a hang, a grandchild that calls `setsid` and keeps stdout
    open, endless output. At the deadline everything still attached to the command is killed. `on_stderr_line`
    sees each complete stderr line as it arrives (a probe's progress), besides its capture. With `stop_grace_s`, a
    command past its deadline is first sent SIGTERM and given that long to end by itself (srun then cancels its
    step on the node; SIGKILL alone would leave the step running until the allocation ends), then killed.
    """
    global _running
    _running += 1
    try:
        return _run(argv, timeout, env, cwd, output_limit, on_stderr_line, stop_grace_s)
    finally:
        _running -= 1
        _raise_pending()


def _ask_to_stop(process: subprocess.Popen[bytes], grace_s: float) -> None:
    """SIGTERM to the command's process group, then up to `grace_s` for it to end by itself."""
    import signal

    try:
        os.killpg(process.pid, signal.SIGTERM)
    except OSError:
        return
    until = time.monotonic() + grace_s
    while process.poll() is None and time.monotonic() < until:
        time.sleep(0.05)


def _run(argv: Sequence[str], timeout: float, env: Optional[Mapping[str, str]], cwd: Optional[str],
         output_limit: int, on_stderr_line: Optional[Callable[[str], None]] = None,
         stop_grace_s: float = 0.0) -> CommandResult:
    # Imported here: `check` on a host without Neuron tools runs no command and does not pay for them.
    import selectors
    import subprocess

    started = time.monotonic()
    deadline = started + timeout
    if _stopped:
        return CommandResult(tuple(argv), None, "", "", 0.0, error="not started: the doctor is stopping")
    try:
        process = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=dict(env) if env is not None else None, cwd=cwd,
                                   start_new_session=True)
    except (OSError, ValueError) as error:
        return CommandResult(tuple(argv), None, "", "", time.monotonic() - started,
                             error=getattr(error, "strerror", None) or str(error))
    stdout, stderr = process.stdout, process.stderr
    if stdout is None or stderr is None:  # cannot happen with PIPE; keeps the types honest
        raise RuntimeError("subprocess pipes missing")
    captures = {stdout.fileno(): _Capture(output_limit), stderr.fileno(): _Capture(output_limit)}
    inodes = [os.fstat(descriptor).st_ino for descriptor in captures]
    _live[process.pid] = (process, inodes)
    timed_out = False
    pending = b""
    try:
        with selectors.DefaultSelector() as selector:
            for descriptor in captures:
                os.set_blocking(descriptor, False)
                selector.register(descriptor, selectors.EVENT_READ)
            exited_at: Optional[float] = None
            announced = False
            while selector.get_map():
                _raise_pending()
                now = time.monotonic()
                if not announced and exited_at is None and now - started >= WAIT_NOTICE_S:
                    announced = True
                    announce_wait(argv, timeout)
                if exited_at is None and process.poll() is not None:
                    exited_at = now
                limit = deadline if exited_at is None else min(deadline, exited_at + _AFTER_EXIT_GRACE)
                if now >= limit:
                    timed_out = exited_at is None
                    break
                for key, _ in selector.select(timeout=min(limit - now, 0.2)):
                    try:
                        chunk = os.read(key.fd, 1 << 16)
                    except BlockingIOError:
                        continue
                    if chunk:
                        captures[key.fd].add(chunk)
                        if on_stderr_line is not None and key.fd == stderr.fileno():
                            pending = _lines(pending + chunk, on_stderr_line)
                    else:
                        selector.unregister(key.fd)
            still_open = bool(selector.get_map())
        if timed_out or still_open:
            _stop(process, inodes, stop_grace_s if timed_out else 0.0)
        else:
            while process.poll() is None and time.monotonic() < deadline:
                _raise_pending()
                time.sleep(0.02)
            if process.poll() is None:
                timed_out = True
                _stop(process, inodes, stop_grace_s)
    except BaseException:  # Ctrl-C, SIGTERM: the child runs in its own session and would not see the signal
        _stop(process, inodes)
        raise
    finally:
        _live.pop(process.pid, None)
        stdout.close()
        stderr.close()
    out, err = captures.values()
    return CommandResult(tuple(argv), None if timed_out else process.returncode, _decode(bytes(out.data)),
                         _decode(bytes(err.data)), time.monotonic() - started, timed_out=timed_out,
                         truncated=bool(out.dropped or err.dropped))


def _lines(data: bytes, on_line: Callable[[str], None]) -> bytes:
    """Hands each complete line of `data` to `on_line`; returns the incomplete rest (at most 64 KiB of it)."""
    *complete, rest = data.split(b"\n")
    for line in complete:
        on_line(_decode(line))
    return rest[-(1 << 16):]


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    import signal

    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        process.kill()
