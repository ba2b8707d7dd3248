"""How each command's typer application is made, so that every command looks and fails the same way: plain help
(click's layout, not rich panels), `-h` as well as `--help` (the root's context settings reach every command), no
rich tracebacks (a traceback that shows local variables could print a secret), completion offered once, at the
root."""

from __future__ import annotations

from typing import Any, Callable

import typer


def _group_options() -> None:
    pass


def command_group(help_text: str) -> typer.Typer:
    """A group of commands (`neurondoctor cache …`): named alone, it prints its help. The callback keeps a group of
    one command a group (`venv create`, not `venv`)."""
    app = typer.Typer(no_args_is_help=True, help=help_text, rich_markup_mode=None, pretty_exceptions_enable=False,
                      add_completion=False)
    app.callback()(_group_options)
    return app


def single_command(function: Callable[..., Any]) -> typer.Typer:
    """One command (`neurondoctor check`), named after its function."""
    app = typer.Typer(rich_markup_mode=None, pretty_exceptions_enable=False, add_completion=False)
    app.command()(function)
    return app
