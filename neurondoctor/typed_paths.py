"""A path the user typed on the command line that leads nowhere is a usage error, never a finding.

`check --python /no/such/path` used to be ND-VENV-001 with a fix that would have created a venv at the typo, and
exit 1: a node verdict and a drain from a typing mistake. What the user typed is checked before anything runs: one
line on stderr, exit 2, nothing on stdout. What the host itself says stays a finding: a pyvenv.cfg whose interpreter
is gone is broken-venv, and an environment health.conf names that is missing is a node problem (health reads its
configuration, not this module).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable, Mapping
from typing import Optional

from neurondoctor.exit_codes import UserError


class UsageError(UserError):
    """Bad usage that no report describes: printed as one line even where `--json` promises a document (the probes
    print a document for a probe that could not run; a typo in the command is not that)."""


def missing_interpreter(python: str, environ: Mapping[str, str]) -> Optional[str]:
    """Why `--python VALUE` names no interpreter, or None. A bare name is looked up on PATH (`--python python3.11`),
    a path must be there. A link whose target is gone is the host's state, not a typo: a venv's `bin/python` whose
    base Python was removed stays ND-VENV-001."""
    if "/" not in python:
        return None if shutil.which(python, path=environ.get("PATH")) else "not found on PATH"
    return None if os.path.lexists(python) else "no such file"


def check_interpreters(option: str, pythons: Iterable[str], environ: Mapping[str, str]) -> None:
    for python in pythons:
        why = missing_interpreter(python, environ)
        if why:
            raise UsageError(f"{option} {python}: {why}")


def check_directories(option: str, directories: Iterable[str]) -> None:
    """Every directory named exists (a link to one counts); a file there is not a directory."""
    for directory in directories:
        if not os.path.exists(directory):
            raise UsageError(f"{option} {directory}: no such directory")
        if not os.path.isdir(directory):
            raise UsageError(f"{option} {directory}: not a directory")
