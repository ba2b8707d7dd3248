"""JSON in and out with finite numbers only: another node's report or a tool's document read, every document the
doctor writes.

Python's json reads `NaN`, `Infinity` and `1e999` (a float that overflows) and writes such floats back as `NaN`
and `Infinity`, which are not JSON: one node's bad number would make `fleet check --json` a document no reader
accepts. Reading maps them to null (the value is unknown, as a missing one is); writing refuses them
(`allow_nan=False`) after replacing any that slipped in with null, so the output always parses.
"""

from __future__ import annotations

import json
import math
from typing import Any


def _no_constant(name: str) -> None:
    """`NaN`, `Infinity`, `-Infinity`: no number at all."""
    return None


def _finite_or_none(text: str) -> Any:
    number = float(text)
    return number if math.isfinite(number) else None


def loads(text: str) -> Any:
    """`json.loads`, with every non-finite number (`NaN`, `Infinity`, `1e999`) read as null. Raises ValueError or
    RecursionError as json.loads does for text that is not JSON."""
    return json.loads(text, parse_constant=_no_constant, parse_float=_finite_or_none)


def dumps(document: Any, **options: Any) -> str:
    """`json.dumps` that never writes `NaN` or `Infinity`: the document as it is when every number in it is
    finite (the usual case, at no extra cost), else with those numbers as null."""
    try:
        return json.dumps(document, allow_nan=False, **options)
    except ValueError:
        pass
    cleaned = loads(json.dumps(document, default=options.get("default")))
    return json.dumps(cleaned, allow_nan=False, **{key: value for key, value in options.items() if key != "default"})
