"""Text others wrote (a log, a pasted traceback, a release page, command output) as lines a pattern reads in linear
time (docs/trust-model.md, "Readers of untrusted text").

A regular expression whose repeat may run past the end of a line rescans the rest of the text from each place it
starts: `usage: ([^)]*)\\)` on a device-memory line repeated without its `)` scans to the end of the text once per
repeat, minutes for 1 MiB. Two rules make every reader linear, and this module holds the second:

- a pattern never crosses a line and never retries a run it has scanned: its classes exclude the newline
  (`[^)\\n]`), its repeats are bounded (`{0,200}`), and a run that a search must find again from each start
  (`*** … Error 2`) is found with `str.find`, not with `.*`;
- a line is cut at MAX_LINE characters before any pattern sees it, so no start of a pattern can look further than
  one cut line, however long the line the file holds (a `make.log` of one 30 MiB line).
"""

from __future__ import annotations

# A log line longer than this is data (a dumped tensor, a base64 blob), not an error message: every message the
# readers know fits in a few hundred characters.
MAX_LINE = 8192


def cut_lines(text: str, limit: int = MAX_LINE) -> str:
    """The text with every line (up to each `\\n`) cut at `limit` characters; the text itself when no line is longer,
    found without splitting it (8 MiB of short lines costs len/limit steps)."""
    if not _has_long_line(text, limit):
        return text
    return "\n".join(line[:limit] for line in text.split("\n"))


def _has_long_line(text: str, limit: int = MAX_LINE) -> bool:
    """Whether some `limit` + 1 characters in a row hold no newline: each step jumps to the last newline of the next
    window."""
    start = 0
    while len(text) - start > limit:
        newline = text.rfind("\n", start, start + limit + 1)
        if newline < 0:
            return True
        start = newline + 1
    return False


def bounded_lines(text: str, limit: int = MAX_LINE) -> list[str]:
    """The text's lines (`str.splitlines`), each cut at `limit` characters: what a line-by-line reader matches."""
    return [line[:limit] for line in text.splitlines()]
