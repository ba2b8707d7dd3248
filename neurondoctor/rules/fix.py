"""A fix as a value: commands made of words, fixed notes, and the alternative ways out (docs/trust-model.md).

neurondoctor runs as root on strings others control: a package's name, a directory's, a process's command line.
A fix line built as text from them runs code when it is pasted. So a rule builds its fix from words: every word
that comes from the host or an environment is data, quoted by `quote_word` when the line is rendered, so it can
never change the number of words or run anything. What is not data the rule writes itself: the operators between
commands (`|`, `&&`), shell syntax such as `$(uname -r)` (`Shell`), and the text of notes. The edge renders the
value (reporters, the JSON `fix` list of strings), the plan merges values, and `--fix` runs a command's words as
argv with no shell, refusing any form it cannot run that way.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Optional, Union

from neurondoctor.output_text import neutralize

# Left unquoted: what POSIX shells read as one literal word, ASCII only (shlex.quote's set without `=`, which
# starts an assignment in a command's first word). Options such as `--device=/dev/neuron0` stay readable.
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_@%+:,./-]+\Z", re.ASCII)
_PLAIN_OPTION = re.compile(r"-[A-Za-z0-9_.-]*=[A-Za-z0-9_@%+:,./-]*\Z", re.ASCII)


def quote_word(text: str) -> str:
    """The one POSIX-quoting function: the word as a shell reads it back, whatever it holds (spaces, quotes, `$`,
    backticks, newlines, non-ASCII are single-quoted; a single quote becomes `'"'"'`)."""
    if text and (_PLAIN_WORD.match(text) or _PLAIN_OPTION.match(text)):
        return text
    return "'" + text.replace("'", "'\"'\"'") + "'"


@dataclass(frozen=True)
class Shell:
    """Shell syntax the rule writes itself (`$(uname -r)`, a glob `/*`): rendered as is, never built from data."""

    text: str


Part = Union[str, Shell]
# A word: data (a str, quoted when rendered), rule-written syntax, or a sequence of both rendered side by side
# (`linux-headers-` + `$(uname -r)`, a path + `/*`).
Word = Union[str, Shell, tuple[Part, ...]]
OPERATORS = frozenset({"|", "&&", "||"})
ALTERNATIVE_PREFIX = "# or "  # the note that starts another way out


def render_word(word: Word) -> str:
    if isinstance(word, str):
        return quote_word(word)
    if isinstance(word, Shell):
        return word.text
    merged: list[Part] = []
    for part in word:  # data side by side is one quoted run: 'deb [signed-by=…] URL noble main'
        if merged and isinstance(part, str) and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    return "".join(quote_word(part) if isinstance(part, str) else part.text for part in merged)


@dataclass(frozen=True)
class Command:
    """One line to run: one or more simple commands joined by operators the rule chose, and an optional trailing
    note (fixed text, like every note)."""

    segments: tuple[tuple[Word, ...], ...]
    operators: tuple[str, ...] = ()
    note: str = ""

    def __post_init__(self) -> None:
        if not self.segments or any(not segment for segment in self.segments):
            raise ValueError("a command needs words")
        if len(self.operators) != len(self.segments) - 1 or not OPERATORS.issuperset(self.operators):
            raise ValueError(f"operators {self.operators!r} do not join {len(self.segments)} commands")

    def tokens(self) -> list[str]:
        """The rendered words and operators, in order (where a long line may be continued)."""
        tokens = [render_word(word) for word in self.segments[0]]
        for operator, segment in zip(self.operators, self.segments[1:]):
            tokens += [operator, *(render_word(word) for word in segment)]
        return tokens

    def render(self) -> str:
        return " ".join(self.tokens()) + (f"  # {self.note}" if self.note else "")

    @property
    def argv(self) -> Optional[list[str]]:
        """The words to run without a shell, or None when the command needs one (operators, `Shell` syntax)."""
        if len(self.segments) != 1 or not all(isinstance(word, str) for word in self.segments[0]):
            return None
        return [str(word) for word in self.segments[0]]


@dataclass(frozen=True)
class Note:
    """A comment line for the reader: fixed text, with data only as quoted words filled into `{}` slots.

    `alternative` starts another way out (`# or …`): tools that run fixes run one way, never all of them."""

    text: str
    words: tuple[str, ...] = ()
    alternative: bool = False

    def render(self) -> str:
        # a data word is quoted and its controls shown escaped: it can neither end the comment nor add a line
        text = self.text.format(*(neutralize(quote_word(word)) for word in self.words)) if self.words else self.text
        return (ALTERNATIVE_PREFIX if self.alternative else "# ") + text


Step = Union[Command, Note]


def command(*words: Word, note: str = "") -> Command:
    """One simple command: `command("sudo", "modprobe", "neuron")`."""
    return Command((tuple(words),), note=note)


def pipeline(*segments: Sequence[Word], operator: str = "|", note: str = "") -> Command:
    """Simple commands joined by one operator: `pipeline(["echo", x], ["sudo", "tee", path])`."""
    return Command(tuple(tuple(segment) for segment in segments), (operator,) * (len(segments) - 1), note)


_VARIABLE_NAME = r"(?a)[A-Za-z_][A-Za-z0-9_]*\Z"  # compiled by `re` for the first variable fix


def _variable(variable: str) -> str:
    if not re.match(_VARIABLE_NAME, variable):
        raise ValueError(f"not a variable name: {variable!r}")
    return variable


def export(variable: str, value: str) -> Command:
    """`export NAME=value`: the name is the rule's own (checked), the value a quoted data word."""
    return command("export", (Shell(f"{_variable(variable)}="), value))


def unset(variable: str) -> Command:
    return command("unset", _variable(variable))


def note(text: str, *words: str) -> Note:
    return Note(text, tuple(words))


def alternative(text: str, *words: str) -> Note:
    return Note(text, tuple(words), alternative=True)


class Fix:
    """The steps of one finding's fix, in order; `# or` notes split them into ways out."""

    __slots__ = ("steps",)

    def __init__(self, steps: Iterable[Step] = ()) -> None:
        self.steps: tuple[Step, ...] = tuple(steps)
        for step in self.steps:
            if not isinstance(step, (Command, Note)):
                raise TypeError(f"a fix step is a Command or a Note, not {type(step).__name__}: {step!r}")

    def lines(self) -> list[str]:
        """The rendered lines: what the JSON `fix` list holds and what a user pastes."""
        return [step.render() for step in self.steps]

    def ways(self) -> list[Fix]:
        """The alternative ways out, each to be run alone."""
        ways: list[list[Step]] = [[]]
        for step in self.steps:
            if isinstance(step, Note) and step.alternative:
                ways.append([])
            ways[-1].append(step)
        return [Fix(way) for way in ways if way]

    def user_space_way(self) -> Fix:
        """The first way out that needs no root (the one an environment's plan can run), else the first."""
        ways = self.ways()
        for way in ways:
            if not any(isinstance(step, Command) and step.segments[0][0] == "sudo" for step in way.steps):
                return way
        return ways[0] if ways else Fix()

    def __iter__(self) -> Iterator[Step]:
        return iter(self.steps)

    def __len__(self) -> int:
        return len(self.steps)

    def __bool__(self) -> bool:
        return bool(self.steps)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Fix) and other.steps == self.steps

    def __hash__(self) -> int:
        return hash(self.steps)

    def __repr__(self) -> str:
        return f"Fix({self.lines()!r})"


def aside_stamp(now: Optional[float] = None) -> str:
    """The UTC time a folder moved aside is named by (`<folder>.neurondoctor-20261205T143000Z`): one form for every
    fix line and action that moves something aside, so backups sort by time."""
    return time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now))
