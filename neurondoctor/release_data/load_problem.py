"""A manifest file the doctor could not use, and why: the record a catalog load makes for a bad file.

Apart from catalog.py because a load makes one only for a file that is missing, unreadable or malformed: a check on
intact data never creates this class (each record class costs start-up: docs/measured.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LoadProblem:
    """A manifest file the doctor could not use, and why (one line)."""

    path: str
    message: str
