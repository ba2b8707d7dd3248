"""Lines that read well at any terminal width: prose wrapped at word boundaries with hanging indents, and shell
commands that stay copy-pasteable (whole on their line, or continued with ` \\` between shell words, never
inside a quoted word or a comment).

With no width (output to a file or a pipe) nothing is wrapped, so logs and `grep` see one line per item.
"""

from __future__ import annotations

import textwrap
from typing import Optional

# A command narrower than this after its indent is left on one line however narrow the terminal: a broken
# command on a 40-column screen helps nobody.
_MIN_COMMAND_WIDTH = 30


def wrap_words(text: str, width: Optional[int], first: str, rest: str) -> list[str]:
    """`text` after `first`, continued on lines that start with `rest`; one line when width is None."""
    if width is None or len(first) + len(text) <= width:
        return [first + text]
    return textwrap.wrap(text, width=width, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first]


def shell_words(command: str) -> tuple[list[str], str]:
    """(the words of a command, keeping quoted words whole; a trailing `# comment`, or "")."""
    words: list[str] = []
    current = ""
    quote: Optional[str] = None
    index = 0
    while index < len(command):
        char = command[index]
        if quote:
            current += char
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
            current += char
        elif char == "#" and not current:
            return words, command[index:].strip()
        elif char == " ":
            if current:
                words.append(current)
            current = ""
        else:
            current += char
        index += 1
    if current:
        words.append(current)
    return words, ""


def wrap_command(command: str, width: Optional[int], first: str, rest: str) -> list[str]:
    """The command on one line when it fits, else continued with ` \\` at word boundaries under `rest`."""
    if width is None or len(first) + len(command) <= width or width - len(rest) < _MIN_COMMAND_WIDTH:
        return [first + command]
    words, comment = shell_words(command)
    if not words:
        return [first + command]
    lines: list[str] = []
    current = first + words[0]
    for word in words[1:]:
        if len(current) + 1 + len(word) + len(" \\") > width:
            lines.append(current + " \\")
            current = rest + word
        else:
            current += " " + word
    if comment:
        current += f"  {comment}"  # a comment ends the command: it may overflow, never precede a continuation
    lines.append(current)
    return lines
