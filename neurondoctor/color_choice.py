"""The one place colour is decided, for every command: `--color auto|always|never` where the user gave it, else
the conventions terminals share (https://no-color.org: `NO_COLOR` set to anything takes the colour away; `TERM=dumb`
is a terminal that cannot move its cursor or show styles), else whether the stream is a terminal at all.

The option is given to every command by the command line's root (cli/app.py); the renderers (the text report, the
progress display) ask here for their console's options, so no command decides alone.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import IO, Any, Optional

CHOICES = ("auto", "always", "never")
_chosen = {"color": "auto"}


def choose(value: Optional[str]) -> None:
    """Record the user's `--color` (one per run: the command line's last word wins)."""
    if value in CHOICES:
        _chosen["color"] = value


def chosen() -> str:
    return _chosen["color"]


def is_dumb(environ: Optional[Mapping[str, str]] = None) -> bool:
    """`TERM=dumb` (Emacs' shell, some CI consoles): no styles and no cursor movement, so no live status line."""
    return (os.environ if environ is None else environ).get("TERM", "") in ("dumb", "unknown")


def console_options(environ: Optional[Mapping[str, str]] = None) -> dict[str, Any]:
    """Options for a rich Console: `never` writes no escape at all, `always` colours whatever the stream and the
    environment are, `auto` lets rich read NO_COLOR, TERM and whether the stream is a terminal."""
    if chosen() == "never":
        return {"no_color": True, "color_system": None, "force_terminal": False}
    if chosen() == "always":
        return {"no_color": False, "color_system": "standard", "force_terminal": True}
    environ = os.environ if environ is None else environ
    return {"no_color": True} if environ.get("NO_COLOR", "") != "" else {}


def live_display(stream: IO[Any]) -> bool:
    """Whether a live status line (a spinner that rewrites its line) may be drawn on this stream."""
    try:
        on_terminal = stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False
    return on_terminal and not is_dumb()
