"""pip's resolver and installer messages, in the words pip's source writes them (pip/_internal/resolution/
resolvelib/factory.py and requirements.py, pip/_internal/operations/check.py):

- `ERROR: Could not find a version that satisfies the requirement SPEC (from versions: none)` and
  `ERROR: No matching distribution found for SPEC`: no index pip read has a file of that name for this Python;
- `ERROR: Package 'NAME' requires a different Python: 3.8.10 not in '>=3.9'`, and
  `ERROR: Ignored the following versions that require a different python version: …`;
- `ERROR: Cannot install A==1 and B==2 because these package versions have conflicting dependencies.`, with
  `The conflict is caused by:` and `NAME VERSION depends on SPEC` lines;
- the check after an install: `NAME VERSION requires SPEC, but you have NAME VERSION which is incompatible.`;
- `Looking in indexes: URL, URL`: the indexes it read.

Facts: the package and the specifier, the versions pip saw, the Python versions, the indexes.
"""

from __future__ import annotations

import re

from neurondoctor.rules.explain_readers.clue import Clue
from neurondoctor.rules.explain_readers.message import Message

READER = "pip"
_NAME = r"([A-Za-z0-9][A-Za-z0-9._-]{0,100})"
_NOT_FOUND = re.compile(r"(?:could not find a version that satisfies the requirement|no matching distribution "
                        r"found for) " + _NAME + r"([^ (\n]{0,100})(?: \(from versions: ([^)\n]{0,2000})\))?")
_PYTHON = re.compile(r"package '" + _NAME + r"' requires a different python: ([0-9.]{1,20}) not in '([^'\n]{1,100})'")
_IGNORED = re.compile(r"ignored the following versions that require a different python version: ([^\n]{1,2000})")
_DEPENDS = re.compile(_NAME + r" ([^ \n]{1,64}) depends on " + _NAME + r"([^ \n]{0,100})")
_REQUIRES = re.compile(_NAME + r" ([^ \n]{1,64}) requires " + _NAME + r"([^\n]{0,100}?), but you have " + _NAME +
                       r" ([^ \n]{1,64}) which is incompatible")
_INDEXES = re.compile(r"looking in indexes: ([^\n]{1,2000})")


def _window(message: Message, position: int, before: int) -> tuple[int, int]:
    """From `before` characters ahead of a hit (not before its line) to the end of its line: a pattern searched there
    starts at most `before` times, however long the line."""
    start, end = message.span(position)
    return max(start, position - before), end


def read(message: Message) -> list[Clue]:
    clues: list[Clue] = []
    indexes = ""
    for position in message.hits("looking in indexes: ", 1):
        found = _INDEXES.search(message.folded, position)
        indexes = found.group(1).strip() if found else ""
    for needle in ("could not find a version that satisfies", "no matching distribution found for"):
        for position in message.hits(needle, 4):
            found = _NOT_FOUND.search(message.folded[position:message.span(position)[1]])
            if found:
                facts = {"package": found.group(1), "specifier": found.group(2).rstrip(".")}
                if found.group(3) is not None:
                    facts["versions"] = found.group(3).strip()[:300]
                if indexes:
                    facts["indexes"] = indexes[:300]
                clues.append(Clue("pip-no-distribution", READER, position, message.line(position), facts))
    for position in message.hits("requires a different python", 4):
        found = _PYTHON.search(message.folded, *_window(message, position, 240))
        if found:
            clues.append(Clue("pip-python", READER, position, message.line(position),
                              {"package": found.group(1), "python": found.group(2), "requires": found.group(3)}))
    for position in message.hits("require a different python version", 2):
        found = _IGNORED.search(message.folded, *_window(message, position, 40))
        if found:
            clues.append(Clue("pip-python", READER, position, message.line(position),
                              {"versions": found.group(1)[:300]}))
    for position in message.hits(" depends on ", 16):
        found = _DEPENDS.search(message.folded, *_window(message, position, 200))
        if found:
            clues.append(Clue("pip-conflict", READER, position, message.line(position),
                              {"package": found.group(1), "version": found.group(2), "wants": found.group(3),
                               "specifier": found.group(4)}))
    for position in message.hits("which is incompatible", 16):
        found = _REQUIRES.search(message.folded, *_window(message, position, 600))
        if found:
            clues.append(Clue("pip-conflict", READER, position, message.line(position),
                              {"package": found.group(1), "version": found.group(2), "wants": found.group(3),
                               "specifier": found.group(4).strip(), "has": found.group(6)}))
    return clues
