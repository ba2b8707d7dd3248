"""Entry point of the `neurondoctor` command (console script and `python -m neurondoctor`).

`check` goes straight to its argparse front end (`check_command`), so the hot path never imports typer;
every other command is the typer application in `app`.
"""

from __future__ import annotations

import sys


def main() -> None:
    argv = sys.argv[1:]
    if argv[:1] == ["check"]:
        from neurondoctor.check_command import run

        raise SystemExit(run(argv[1:]))
    from neurondoctor.app import app

    app(prog_name="neurondoctor")
