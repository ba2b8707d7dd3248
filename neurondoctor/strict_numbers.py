"""The one way a number the doctor did not write is read: from an environment variable, a sysfs file, a command's
output, another node's report (docs/trust-model.md, "Numbers from data").

Python's own readers accept far more than a count: `str.isdigit()` is True for `²` (which `int()` then refuses, a
crashed check), `int()` reads `٣`, `１`, `+1`, ` 1` and `1_0`, a digit string past 4,300 characters raises, `float()`
reads `nan`, `inf` and `1e999`, and `json.loads` turns `NaN` and `1e999` into floats that no JSON reader accepts
back. So a count here is ASCII digits only, bounded in length and, where the caller says, in value; a measurement
is a finite float. Anything else is "not a number" (None, or the reason in one line), never an exception.
"""

from __future__ import annotations

import math
import re
from typing import Any, Optional

# A count longer than this is no count a host has (and its int() would be slow): not a number.
MAX_DIGITS = 18
_ASCII_DIGITS = re.compile(r"[0-9]+")
_ASCII_SIGNED = re.compile(r"-?[0-9]+")
# A decimal as tools print it (`40.69`, `1e3`, `.5`): ASCII only, no sign, no `nan`/`inf`, bounded.
_ASCII_DECIMAL = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]{1,3})?"  # compiled when first used (re caches it)
_MAX_DECIMAL_LENGTH = 64


def count_problem(text: str, maximum: Optional[int] = None, minimum: int = 0,
                  max_digits: int = MAX_DIGITS) -> Optional[str]:
    """Why `text` is not a count within the bounds, in a few words (None when it is one). A minimum below zero
    allows one leading `-` (a kernel's signed field); nothing else but ASCII digits is ever allowed."""
    shape = _ASCII_SIGNED if minimum < 0 else _ASCII_DIGITS
    if not shape.fullmatch(text):
        return "not a number (ASCII digits 0-9 only: no sign, space or other script)"
    if len(text.lstrip("-")) > max_digits:
        return f"not a number (more than {max_digits} digits)"
    value = int(text)
    if value < minimum:
        return f"below {minimum}"
    if maximum is not None and value > maximum:
        return f"above {maximum}"
    return None


def parse_count(text: str, maximum: Optional[int] = None, minimum: int = 0,
                max_digits: int = MAX_DIGITS) -> Optional[int]:
    """`text` as an integer when it is exactly ASCII digits (a `-` first only when `minimum` is below 0), at most
    `max_digits` long and within [minimum, maximum]; otherwise None."""
    if count_problem(text, maximum, minimum, max_digits) is not None:
        return None
    return int(text)


def json_count(value: Any, maximum: Optional[int] = None, minimum: int = 0) -> Optional[int]:
    """A count from decoded JSON (another node's report, a tool's or a probe's document): a JSON integer (never a
    bool, a float or a string such as `"2x"`) within the bounds; anything else None."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value >= minimum and (maximum is None or value <= maximum) else None
    return None


def finite_float(value: Any, maximum: Optional[float] = None, minimum: float = 0.0) -> Optional[float]:
    """A measurement (a bandwidth, a duration) from decoded JSON or from text a tool printed: a finite number within
    [minimum, maximum]; NaN, infinities, `1e999`, bools, non-ASCII digits and anything else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        if len(value) > _MAX_DECIMAL_LENGTH or not re.fullmatch(_ASCII_DECIMAL, value):
            return None
        value = float(value)
    if not isinstance(value, (int, float)):
        return None
    number = float(value) if not isinstance(value, int) or abs(value) < 1 << 1000 else math.inf
    if not math.isfinite(number) or number < minimum or (maximum is not None and number > maximum):
        return None
    return number
