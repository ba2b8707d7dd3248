"""The closest known versions around one the release data does not list: what `ReleaseCatalog.neighbours` answers.

Apart from catalog.py because it is asked only about a version the data does not know: a check of known versions
never creates this class (each record class costs start-up: docs/measured.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class Neighbours:
    """The closest known versions below and above an unknown one, each with its releases."""

    lower: Optional[tuple[str, tuple[str, ...]]]
    higher: Optional[tuple[str, tuple[str, ...]]]
