"""Help text in the usual shape: `Usage: neurondoctor venv create [OPTIONS] DIR`, an argument
listed as `DIR`, never `{DIR}` with `<str>` after it.

Typer 0.2x prints a required argument as `{NAME}` and every parameter's Python type (`<str>`, `<list[str]>`) beside
its metavar. Where a parameter names its metavar, that word already says what to give. Adjusted here, once, if the
installed typer has these hooks; any other typer keeps its own format.
"""

from __future__ import annotations

from typing import Any


def use_plain_metavars() -> None:
    try:
        from typer.core import TyperArgument, TyperOption
    except ImportError:  # another typer layout: its own help format stands
        return
    for parameter_class in (TyperArgument, TyperOption):
        original = getattr(parameter_class, "display_type", None)
        if original is None:
            continue

        def display_type(self: Any, ctx: Any, _original: Any = original) -> str:
            return "" if getattr(self, "metavar", None) else str(_original(self, ctx))

        parameter_class.display_type = display_type  # type: ignore[method-assign]
    if hasattr(TyperArgument, "_usage_display_name"):

        def usage_name(self: Any) -> str:
            name = str(self.metavar or self.name).upper()
            name = name if self.required else f"[{name}]"
            return name if self.nargs == 1 or name.endswith("...") else f"{name}..."

        TyperArgument._usage_display_name = usage_name  # type: ignore[method-assign]
