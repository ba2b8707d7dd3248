"""Lines that read well at any terminal width: prose wrapped at word boundaries with hanging indents, and shell
commands that stay copy-pasteable (whole on their line, or continued with ` \\` between shell words, never
inside a quoted word or a comment).

With no width (output to a file or a pipe) nothing is wrapped, so logs and `grep` see one line per item.
"""

from __future__ import annotations

import textwrap
from typing import Optional

from neurondoctor.output_text import field_text
from neurondoctor.rules.fix import Command, Step

# A command narrower than this after its indent is left on one line however narrow the terminal: a broken
# command on a 40-column screen helps nobody.
_MIN_COMMAND_WIDTH = 30


def wrap_words(text: str, width: Optional[int], first: str, rest: str) -> list[str]:
    """`text` after `first`, continued on lines that start with `rest`; one line when width is None. The text is one
    field (`field_text`) before it is wrapped: a newline in it is shown, never turned into a space or a line."""
    text = field_text(text)
    if width is None or len(first) + len(text) <= width:
        return [first + text]
    return textwrap.wrap(text, width=width, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False) or [first]


def wrap_command(step: Step, width: Optional[int], first: str, rest: str) -> list[str]:
    """The step on one line when it fits, else continued with ` \\` between its rendered words under `rest` (a
    quoted word is never split; a note is never broken)."""
    line = step.render()
    if (not isinstance(step, Command) or width is None or len(first) + len(line) <= width
            or width - len(rest) < _MIN_COMMAND_WIDTH):
        return [first + line]
    tokens = step.tokens()
    lines: list[str] = []
    current = first + tokens[0]
    for token in tokens[1:]:
        if len(current) + 1 + len(token) + len(" \\") > width:
            lines.append(current + " \\")
            current = rest + token
        else:
            current += " " + token
    if step.note:
        current += f"  # {step.note}"  # a comment ends the command: it may overflow, never precede a continuation
    lines.append(current)
    return lines
