"""JSON in and out with finite numbers only: another node's report or a tool's document read, every document the
doctor writes.

Python's json reads `NaN`, `Infinity` and `1e999` (a float that overflows) and writes such floats back as `NaN`
and `Infinity`, which are not JSON: one node's bad number would make `fleet check --json` a document no reader
accepts. Reading maps `NaN` and `Infinity` to null (the value is unknown, as a missing one is); a literal that
overflows (`1e999`) stays an infinite float, which every reader of a number refuses (strict_numbers.finite_float
and json_count), because a hook on every float would triple the time `fleet summarize` takes over 1,000 reports.
Writing refuses them all (`allow_nan=False`) after replacing any that slipped in with null, so the output always
parses.
"""

from __future__ import annotations

import json
from typing import Any


def _no_constant(name: str) -> None:
    """`NaN`, `Infinity`, `-Infinity`: no number at all."""
    return None


def loads(text: str) -> Any:
    """`json.loads`, with `NaN`, `Infinity` and `-Infinity` read as null (at no cost to any other value). Raises
    ValueError or RecursionError as json.loads does for text that is not JSON."""
    return json.loads(text, parse_constant=_no_constant)


def dumps(document: Any, **options: Any) -> str:
    """`json.dumps` that never writes `NaN` or `Infinity`: the document as it is when every number in it is
    finite (the usual case, at no extra cost), else with those numbers as null."""
    try:
        return json.dumps(document, allow_nan=False, **options)
    except ValueError:
        pass
    cleaned = loads(json.dumps(document, default=options.get("default")))
    return json.dumps(cleaned, allow_nan=False, **{key: value for key, value in options.items() if key != "default"})
