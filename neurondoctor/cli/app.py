"""The command line's root: every command under one typer group (docs/contracts.md §7).

One parser for all commands gives them one help layout (`-h` or `--help`), one error line and one usage exit (2).
Each command lives in its own module and is imported, and turned into a click command, only when it is the one
run (click's lazily loaded subcommands): `check` on a Slurm node pays for its own options, not for twenty others'.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, MutableMapping
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from neurondoctor import __version__, exit_codes
from neurondoctor.cli.help_format import use_plain_metavars
from neurondoctor.cli.invocation import Interrupted, StdoutLost, is_stdout_error
from neurondoctor.color_choice import CHOICES, choose

# Each command's name and the module whose `app` holds it, in the order `neurondoctor -h` lists them.
COMMAND_MODULES = {
    "check": "neurondoctor.cli.check_command",
    "health": "neurondoctor.cli.health_command",
    "explain": "neurondoctor.cli.explain_command",
    "bundle": "neurondoctor.cli.bundle_command",
    "cache": "neurondoctor.cli.cache_command",
    "venv": "neurondoctor.cli.venv_command",
    "probe": "neurondoctor.cli.probe_command",
    "bootstrap": "neurondoctor.cli.bootstrap_command",
    "upgrade": "neurondoctor.cli.upgrade_command",
    "fleet": "neurondoctor.cli.fleet_command",
    "manifests": "neurondoctor.cli.manifests_command",
}


def _color_option() -> Any:
    """`--color auto|always|never`, accepted by every command and group (docs/contracts.md §7); it only records the
    choice, which the renderers read (color_choice)."""
    from typer.core import TyperOption

    return TyperOption(param_decls=["--color"], default=None, expose_value=False, is_eager=True,
                       metavar="auto|always|never", callback=_chosen_color,
                       help="Colour: auto (the default: on a terminal, unless NO_COLOR is set or TERM=dumb), always "
                            "or never.")


def _chosen_color(ctx: Any, param: Any, value: Any) -> None:
    if value is None:
        return
    if value not in CHOICES:
        raise typer.BadParameter(f"{value}: expected auto, always or never", param_hint="--color")
    choose(value)


def with_color_option(command: Any) -> Any:
    """The command, and every command under it, taking `--color`."""
    if not any(getattr(param, "name", None) == "color" for param in command.params):
        command.params.append(_color_option())
    for sub in getattr(command, "commands", {}).values():
        with_color_option(sub)
    return command


class LazyCommands(MutableMapping[str, Any]):
    """The root's commands by name, each imported and built on first use; the names are known without importing
    anything, so a typo still gets typer's "Did you mean …?"."""

    def __init__(self) -> None:
        self.built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in self.built:
            if name not in COMMAND_MODULES:
                raise KeyError(name)
            self.built[name] = with_color_option(
                typer.main.get_command(importlib.import_module(COMMAND_MODULES[name]).app))
        return self.built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self.built[name] = command

    def __delitem__(self, name: str) -> None:
        del self.built[name]

    def __iter__(self) -> Iterator[str]:
        return iter({**dict.fromkeys(COMMAND_MODULES), **self.built})

    def __len__(self) -> int:
        return len({**dict.fromkeys(COMMAND_MODULES), **self.built})


class CommandGroup(TyperGroup):
    """The top group: a stdout that cannot take the output and a Ctrl-C leave the commands as the doctor's own
    exceptions, which `cli.run` turns into exit 3 and 130 with one line (typer would make the first exit 1, the
    verdict "unhealthy", and say nothing of the second). Its commands are built when first named."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands()
        self.params.append(_color_option())

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as interrupt:
            raise Interrupted from interrupt
        except OSError as error:
            if is_stdout_error(error):
                raise StdoutLost(error) from error
            raise


use_plain_metavars()
app = typer.Typer(cls=CommandGroup, no_args_is_help=True, rich_markup_mode=None, pretty_exceptions_enable=False,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="Checks that the layers of an AWS Neuron host agree, and says the exact fix.")


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"neurondoctor {__version__}")
        raise typer.Exit(exit_codes.OK)


@app.callback()
def main_options(
    version: Annotated[bool, typer.Option("-V", "--version", callback=_version_callback, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """neurondoctor: keeps Trainium and Inferentia hosts healthy."""
