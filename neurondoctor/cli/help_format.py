"""Help text in the usual shape: `Usage: neurondoctor venv create [OPTIONS] DIR`, a required argument shown as the
word its metavar names, never `{DIR}`.

Typer marks a required argument of the usage line with braces. Where a parameter names its metavar, that word
already says what to give; the braces are taken off here, once, when the installed typer draws them; any other
typer keeps its own format.
"""

from __future__ import annotations

from typing import Any


def use_plain_metavars() -> None:
    try:
        from typer.core import TyperArgument
    except ImportError:  # another typer layout: its own help format stands
        return
    original = getattr(TyperArgument, "make_metavar", None)
    if original is None or getattr(original, "plain_metavar", False):
        return

    def make_metavar(self: Any, *args: Any, **kwargs: Any) -> str:
        shown = str(original(self, *args, **kwargs))
        return shown[1:-1] if shown.startswith("{") and shown.endswith("}") else shown

    make_metavar.plain_metavar = True  # type: ignore[attr-defined]
    TyperArgument.make_metavar = make_metavar  # type: ignore[method-assign]
