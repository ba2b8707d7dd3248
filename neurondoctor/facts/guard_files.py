"""Names of the files a neurondoctor-built environment carries, and reading its marker (no heavy imports:
`check` uses these on its hot path)."""

from __future__ import annotations

from typing import Any, Optional

from neurondoctor import json_data

CONSTRAINTS_FILE = "neurondoctor-constraints.txt"
MARKER_FILE = "neurondoctor.json"
MARKER_SCHEMA = "neurondoctor.venv/1"


def read_marker(text: Optional[str]) -> Optional[dict[str, Any]]:
    """The marker document, or None when absent or not ours."""
    if not text:
        return None
    try:
        document = json_data.loads(text)
    except ValueError:
        return None
    if not isinstance(document, dict) or document.get("schema") != MARKER_SCHEMA:
        return None
    return document
