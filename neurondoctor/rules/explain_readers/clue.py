"""What a reader found in a message (pure record): the kind of message, where it is, its line, and the facts read
off it (exception type, paths, package names, versions, device and core numbers, status and error codes).

A reader only reads; what the facts mean (a category and the ways out) is decided in causes.py, so a new wording of
a known failure is understood by what it says.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Clue:
    kind: str  # what was read: `python-exception`, `pip-no-distribution`, `os-package-missing`, …
    reader: str  # the kind of message: `Python traceback`, `pip`, `apt`, `dnf`, `dynamic loader`, …
    position: int  # where in the normalised text: the first cause named is the one found first
    line: str  # the line it was read from
    facts: dict[str, str] = field(default_factory=dict)
