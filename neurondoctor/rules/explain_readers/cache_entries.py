"""The compile-cache entry a wait or a skip names (pure), so `explain` can look it up on this host
(actions/explain/cache_entry.py):

- `Another process must be compiling MODULE_18108742649528384371+839ddec0, been waiting for: 186.0 minutes` (users'
  notes: printed once a minute while the entry's lock stays) names the entry, not its cache nor its compiler;
- `Got a cached failed neff at /var/tmp/neuron-compile-cache/neuronxcc-2.8.0.25+a3ad0f342/MODULE_…/model.neff. Will
  skip compilation` (the neuron-caching page) names all three.

Linear in the text: `str.find` for each phrase, then a bounded pattern on its line; at most MAX_NAMED entries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

MAX_NAMED = 5
WAIT = "wait"
SKIP = "skip"
_MODULE = r"(MODULE_[0-9A-Za-z_]{1,64}\+[0-9a-f]{8})"
_WAIT = re.compile(r"Another process must be compiling " + _MODULE)
_SKIP = re.compile(r"Got a cached failed neff at (/[^\s]{0,900}?)/(neuronxcc-[0-9][0-9A-Za-z.+]{0,60})/" + _MODULE
                   + r"/model\.neff")


@dataclass(frozen=True)
class NamedEntry:
    """An entry a message names: its MODULE_ name, and its cache and compiler folder where the message says them."""

    module: str
    kind: str  # WAIT (a lock waited on) or SKIP (a cached failure skipped)
    cache: Optional[str] = None
    compiler: Optional[str] = None


def _lines_with(text: str, phrase: str) -> list[str]:
    lines: list[str] = []
    start = 0
    while len(lines) < MAX_NAMED:
        found = text.find(phrase, start)
        if found < 0:
            break
        line_start = text.rfind("\n", 0, found) + 1
        end = text.find("\n", found)
        end = len(text) if end < 0 else end
        lines.append(text[line_start:end][:2000])
        start = end
    return lines


def named_entries(text: str) -> list[NamedEntry]:
    """Each entry the text's waits and skips name, once, in the order of the text's kinds (waits, then skips)."""
    found: dict[tuple[str, Optional[str]], NamedEntry] = {}
    for line in _lines_with(text, "Another process must be compiling"):
        wait = _WAIT.search(line)
        if wait:
            found.setdefault((wait.group(1), None), NamedEntry(wait.group(1), WAIT))
    for line in _lines_with(text, "Got a cached failed neff at"):
        skip = _SKIP.search(line)
        if skip:
            found.setdefault((skip.group(3), skip.group(2)), NamedEntry(skip.group(3), SKIP, skip.group(1),
                                                                          skip.group(2)))
    return list(found.values())[:MAX_NAMED]
