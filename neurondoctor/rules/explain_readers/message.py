"""A pasted error text made ready for the readers (pure): the same failure reads the same whatever the terminal,
the log collector or the user did to it.

- ANSI colour and cursor codes, carriage returns and NUL bytes go;
- the prefix each line carries goes: `kubectl logs --prefix`'s `[pod/NAME/CONTAINER] `, a timestamp (ISO 8601,
  the runtime's `2024-Jan-19 05:03:34.343999 31898:32693 `, syslog's `Dec  5 15:28:17 `, the kernel's
  `[  123.456789] `), so that a line starts with what its program said;
- runs of spaces and tabs are one space;
- matching is case-insensitive: the readers look in `folded`, the same text in lower case at the same positions;
- `unwrapped` is `folded` with every newline a space, for phrases a terminal or a mail client wrapped onto two lines;
- only the last 256 KiB is read (READ_LIMIT).

Everything is one pass of a pattern with bounded repeats over the whole text, or a `str` method: linear, and the
lines are already cut at log_text.MAX_LINE.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator
from dataclasses import dataclass

_ANSI = re.compile(r"\x1b\[[0-9;?]{0,32}[ -/]{0,4}[@-~]|\x1b\][^\x07\x1b\n]{0,256}(?:\x07|\x1b\\)?|\x1b")
_MONTHS = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
_STAMP = (r"\[ {0,12}[0-9]{1,12}\.[0-9]{1,9}\] ?"  # dmesg
          r"|[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2}(?:[.,][0-9]{1,9})?"
          r"(?:Z|[+-][0-9]{2}:?[0-9]{2})?:? ?"
          rf"|[0-9]{{4}}-(?:{_MONTHS})-[0-9]{{2}} [0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}}(?:\.[0-9]{{1,9}})?"
          r"(?: {1,8}[0-9]{1,10}:[0-9]{1,10})? ?"  # the runtime's own stamp and PID:TID
          rf"|(?:{_MONTHS}) {{1,2}}[0-9]{{1,2}} [0-9]{{2}}:[0-9]{{2}}:[0-9]{{2}} ?")
# Never an empty match (one that may match nothing is replaced at every line start), and tried at line starts only.
_PREFIX = re.compile(rf"^(?:\[pod/[^\]\n]{{1,300}}\] ?(?:{_STAMP})?|(?:{_STAMP}))", re.MULTILINE)
# The readers read the end of a text: a pasted message is far shorter, and a log ends with its error (a few thousand
# lines of a runtime's infodump fit). A pattern tried at every line start costs a third of a second a MiB on a
# loaded host, and each reader's needle one scan of the window, so the readers' window is the last 256 KiB; the
# release data's signatures, statuses and codes are still matched on the whole input (error_explanation.py).
READ_LIMIT = 256 << 10
_BLANKS = re.compile(r"[ \t\f\v]{2,}|\t")
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def normalise(text: str) -> str:
    """The text without colour codes, line prefixes and runs of blanks (module docstring)."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text or "\x00" in text:
        text = text.replace("\r", "").replace("\x00", "")
    text = _PREFIX.sub("", text)
    return _BLANKS.sub(" ", text)


@dataclass(frozen=True)
class Message:
    """A normalised text, its lower-case twin at the same positions, and the twin unwrapped."""

    text: str
    folded: str
    unwrapped: str

    @classmethod
    def of(cls, text: str) -> Message:
        """The last READ_LIMIT characters of the text, from the first line that starts in them, normalised."""
        if len(text) > READ_LIMIT:
            start = len(text) - READ_LIMIT
            newline = text.find("\n", start)
            text = text[newline + 1 if newline >= 0 else start:]
        normal = normalise(text)
        folded = normal.lower()
        if len(folded) != len(normal):  # a character whose lower case is longer: fold ASCII only
            folded = normal.translate(_ASCII_LOWER)
        return cls(normal, folded, folded.replace("\n", " "))

    def span(self, position: int) -> tuple[int, int]:
        """Start and end of the line holding `position`."""
        start = self.text.rfind("\n", 0, position) + 1
        end = self.text.find("\n", position)
        return start, len(self.text) if end < 0 else end

    def line(self, position: int) -> str:
        start, end = self.span(position)
        return self.text[start:end].strip()

    def hits(self, needle: str, limit: int = 16) -> Iterator[int]:
        """The positions of a lower-case needle in `folded`, at most one a line and `limit` in all: a line repeated
        a million times costs `limit` looks, not a million."""
        start = 0
        for _ in range(limit):
            at = self.folded.find(needle, start)
            if at < 0:
                return
            yield at
            start = self.span(at)[1] + 1

    def next_line(self, position: int) -> str:
        """The line after the one holding `position` ('' at the end)."""
        end = self.span(position)[1]
        return self.line(end + 1) if end < len(self.text) else ""

    def last_lines(self, count: int) -> list[int]:
        """The start positions of the text's last `count` lines."""
        starts: list[int] = []
        end = len(self.text)
        while end > 0 and len(starts) < count:
            start = self.text.rfind("\n", 0, end - 1) + 1 if end > 1 else 0
            starts.append(start)
            end = start
        return starts
