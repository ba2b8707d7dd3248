"""Deprecation warnings, and whether a text is made of nothing else (Python's warnings module prints
`FILE:LINE: DeprecationWarning: MESSAGE`; libraries log `WARNING:root:X will be removed in release 2.7` or
`Warning: X will be deprecated after the 2.5 release`):

- a deprecation: a warning line (`DeprecationWarning`, `FutureWarning`, `PendingDeprecationWarning`, `warning` /
  `warn` as its level) that says `deprecated`, `will be removed`, `will be deprecated` or `Use X instead`.

A deprecation warning never stops a program. It is read only when the text holds no error: no traceback, no line
that is not a warning and says error, failed, fatal, exception, killed or aborted. A text with an error is about that
error, whatever warnings it also prints.

Facts: what the warning names (the API or variable, as the line gives it).
"""

from __future__ import annotations

import re

from neurondoctor.rules.explain_readers.clue import Clue
from neurondoctor.rules.explain_readers.message import Message

READER = "warning"
_WARNING = re.compile(r"\b(?:deprecationwarning|futurewarning|pendingdeprecationwarning|userwarning|warning|warn)\b")
_DEPRECATION = re.compile(r"\bdeprecated\b|will be removed\b|will be deprecated\b|\buse [a-z0-9_.()`'\"]{1,120} "
                          r"instead\b")
_ERROR = re.compile(r"traceback|error|failed|failure|fatal|exception|killed|aborted|segmentation fault")
_NAMED = re.compile(r"(?:``|`|')([a-z0-9_.()]{2,120})(?:``|`|')|\b([a-z0-9_]{1,60}(?:\.[a-z0-9_]{1,60}){1,8}"
                    r"(?:\(\))?)")
MAX_LINES = 4096  # a pasted warning is a few lines; a longer text is a log, whose errors decide


def read(message: Message) -> list[Clue]:
    lines = message.folded.split("\n", MAX_LINES)
    if len(lines) > MAX_LINES:
        return []
    warnings: list[tuple[int, str]] = []
    position = 0
    for line in lines:
        warning = _WARNING.search(line)
        if warning and _DEPRECATION.search(line, warning.start()):
            warnings.append((position, line))
        elif _ERROR.search(line):
            return []  # an error line: the text is about it, not about its warnings
        position += len(line) + 1
    clues = []
    for at, line in warnings[:4]:
        named = _NAMED.search(line, _WARNING.search(line).end())  # type: ignore[union-attr]
        facts = {"names": next(group for group in named.groups() if group)} if named else {}
        clues.append(Clue("deprecation-warning", READER, at, message.line(at), facts))
    return clues
