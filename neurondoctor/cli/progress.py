"""Progress displays the command line owns (library code reports state, only the CLI draws): a live
status line with the elapsed time on a terminal, timestamped plain lines otherwise (CI logs, cloud-init)."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Union

from neurondoctor.color_choice import console_options, live_display
from neurondoctor.output_text import field_text, needs_ascii, printable, write_text


class PlainProgress:
    """`[12:01:07] step` lines, for logs."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def step(self, message: str) -> None:
        write_text(f"[{time.strftime('%H:%M:%S')}] {message}\n", sys.stderr)
        sys.stderr.flush()

    def close(self, failed: bool = False) -> None:
        elapsed = time.monotonic() - self.started
        self.step(f"stopped after {elapsed:.1f} s" if failed else f"done in {elapsed:.1f} s")


class TerminalProgress:
    """A rich status line with the current step and the elapsed time."""

    def __init__(self) -> None:
        from neurondoctor.report.terminal_size import console

        self.console = console(sys.stderr, **console_options())
        self.started = time.monotonic()
        self.status = self.console.status("starting", spinner="line" if needs_ascii(sys.stderr) else "dots")
        self.status.start()

    def step(self, message: str) -> None:
        from rich.markup import escape

        shown = escape(printable(message, needs_ascii(sys.stderr)))
        self.console.print(f"[dim]{time.monotonic() - self.started:5.1f} s[/dim] {shown}")
        self.status.update(shown)

    def close(self, failed: bool = False) -> None:
        self.status.stop()


def progress_for_stderr() -> Union[PlainProgress, TerminalProgress]:
    return TerminalProgress() if live_display(sys.stderr) else PlainProgress()


def announce_wait(argv: Sequence[str], timeout: float) -> None:
    """`waiting for neuron-ls -j (stopped after 10 s)`: on a terminal, a command that runs longer than a second
    (command_timeouts.observe_waits) is named, so a slow or hung tool is not silence."""
    import os

    shown = " ".join([os.path.basename(argv[0]), *argv[1:4]]) + (" …" if len(argv) > 4 else "")
    write_text(f"waiting for {field_text(shown)} (stopped after {timeout:.0f} s)…\n", sys.stderr)
    sys.stderr.flush()
