"""PEP 508 requirements as wheels declare them (`Requires-Dist`), and their environment markers.

`packaging.requirements` would parse them, but it imports `packaging.tags` (sysconfig, platform, …), about
100 ms on a `check` that takes 300. The grammar wheels use is small: a name, extras, a version set or an
`@ url`, and a marker of `and`/`or`/parentheses over comparisons. Version sets are judged by `pep440.matches`,
which tests hold to `packaging.specifiers`.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from typing import Optional

from neurondoctor.neuron_version import normalize_package_name
from neurondoctor.pep440 import matches, parse_version
from neurondoctor.records import dataclass


class MarkerError(ValueError):
    """A marker this parser cannot read: the requirement is skipped, never judged on a guess."""


class UnknownMarkerVariable(LookupError):
    """The marker asks about something unknown for this environment (`platform_machine` of a copied tree)."""


@dataclass(frozen=True)
class Requirement:
    name: str  # normalised
    display_name: str
    extras: tuple[str, ...]
    specifier: str  # ">=1.22.2,<=1.26.4"; "" for any version
    url: Optional[str]
    marker: Optional[str]
    text: str

    def shown(self) -> str:
        """`transformers~=4.57.1`: what a person writes on a pip command line."""
        extras = f"[{','.join(self.extras)}]" if self.extras else ""
        return f"{self.display_name}{extras}{self.specifier}"


_NAME = re.compile(r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*")
_SPECIFIER = re.compile(r"^(?:(?:~=|===|==|!=|<=|>=|<|>)[A-Za-z0-9.*+!_-]+)(?:,(?:~=|===|==|!=|<=|>=|<|>)"
                        r"[A-Za-z0-9.*+!_-]+)*$")


_PROJECT_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\Z", re.ASCII)


@functools.lru_cache(maxsize=8192)
def metadata_problem(name: str, version: str) -> str:
    """Why a distribution record's name or version is not one pip could have written ('' when both are): such a
    record is data someone placed, and no fix may carry it (issue 25 §3)."""
    if not _PROJECT_NAME.match(name):
        return "its name is not a PEP 508 project name"
    if len(version) > 128 or parse_version(version) is None:
        return "its version is not a PEP 440 version"
    return ""


@functools.lru_cache(maxsize=8192)
def parse_requirement(text: str) -> Optional[Requirement]:
    """One `Requires-Dist` value; None for one this parser does not understand (never a guess). Cached: several
    rules read the same distributions' requirements."""
    body, separator, marker = text.partition(";")
    if "@" in body and separator and not marker.startswith((" ", "\t")):
        return None  # `name @ url;x`: a URL with a `;` in it — rare; skipped rather than misread
    match = _NAME.match(body)
    if match is None:
        return None
    rest = body[match.end():].strip()
    extras: tuple[str, ...] = ()
    if rest.startswith("["):
        closing = rest.find("]")
        if closing < 0:
            return None
        extras = tuple(normalize_package_name(extra) for extra in rest[1:closing].split(",") if extra.strip())
        rest = rest[closing + 1:].strip()
    url = None
    specifier = ""
    if rest.startswith("@"):
        url = rest[1:].strip()
    else:
        if rest.startswith("(") and rest.endswith(")"):
            rest = rest[1:-1]
        specifier = re.sub(r"\s+", "", rest)
        if specifier and not _SPECIFIER.match(specifier):
            return None
    return Requirement(normalize_package_name(match.group(1)), match.group(1), extras, specifier, url,
                       marker.strip() or None, text)


_EXTRA_TEST = re.compile(r"extra\s*==\s*['\"]([^'\"]+)['\"]")


def marker_extras(marker: Optional[str]) -> list[str]:
    """The extras a marker names (`extra == "neuronx"` → `["neuronx"]`), normalised as PEP 685 compares them."""
    return [normalize_package_name(name) for name in _EXTRA_TEST.findall(marker or "")]


def satisfies(version: str, specifier: str) -> Optional[bool]:
    """Whether an installed version is in the set; installed pre-releases count, as `pip check` counts them.
    None when either side is not PEP 440."""
    return matches(version, specifier)


_TOKEN = re.compile(r"\s*(?:(?P<string>'[^']*'|\"[^\"]*\")|(?P<op>===|==|!=|<=|>=|~=|<|>|\(|\))|"
                    r"(?P<word>[A-Za-z_][A-Za-z0-9_.]*))")
_VERSION_VARIABLES = frozenset({"python_version", "python_full_version", "implementation_version"})


def _tokens(marker: str) -> list[tuple[str, str]]:
    tokens, position = [], 0
    while position < len(marker):
        if marker[position:].strip() == "":
            break
        match = _TOKEN.match(marker, position)
        if match is None:
            raise MarkerError(f"cannot read marker {marker!r} at {position}")
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        position = match.end()
    return tokens


class _MarkerParser:
    """Recursive descent over `or` < `and` < comparison / parentheses (PEP 508 `marker` grammar)."""

    def __init__(self, tokens: list[tuple[str, str]], variables: Mapping[str, str]) -> None:
        self.tokens, self.variables, self.index = tokens, variables, 0

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.index] if self.index < len(self.tokens) else ("end", "")

    def take(self) -> tuple[str, str]:
        token = self.peek()
        self.index += 1
        return token

    def parse(self) -> bool:
        value = self.either()
        if self.peek()[0] != "end":
            raise MarkerError(f"unexpected {self.peek()[1]!r}")
        return value

    def either(self) -> bool:
        return self.chain("or", self.both, any)

    def both(self) -> bool:
        return self.chain("and", self.atom, all)

    def chain(self, word: str, operand: Callable[[], bool], combine: Callable[[list[bool]], bool]) -> bool:
        """`a or b or c` / `a and b`: every operand is parsed (it consumes its tokens), then combined."""
        values = [operand()]
        while self.peek() == ("word", word):
            self.take()
            values.append(operand())
        return combine(values)

    def atom(self) -> bool:
        if self.peek() == ("op", "("):
            self.take()
            value = self.either()
            if self.take() != ("op", ")"):
                raise MarkerError("unbalanced parentheses")
            return value
        left_name, left = self.value()
        operator = self.operator()
        right_name, right = self.value()
        return _compare(left, operator, right, left_name or right_name)

    def value(self) -> tuple[Optional[str], str]:
        kind, text = self.take()
        if kind == "string":
            return None, text[1:-1]
        if kind == "word" and text not in ("and", "or", "in", "not"):
            if text not in self.variables:
                raise UnknownMarkerVariable(text)
            return text, self.variables[text]
        raise MarkerError(f"expected a value, got {text!r}")

    def operator(self) -> str:
        kind, text = self.take()
        if kind == "op" and text not in ("(", ")"):
            return text
        if (kind, text) == ("word", "in"):
            return "in"
        if (kind, text) == ("word", "not") and self.take() == ("word", "in"):
            return "not in"
        raise MarkerError(f"expected an operator, got {text!r}")


def _compare(left: str, operator: str, right: str, variable: Optional[str]) -> bool:
    if variable == "extra":
        left, right = normalize_package_name(left), normalize_package_name(right)
    if operator == "in":
        return left in right
    if operator == "not in":
        return left not in right
    if variable in _VERSION_VARIABLES or operator in ("~=", "<", ">", "<=", ">="):
        verdict = satisfies(left, f"{operator}{right}")
        if verdict is not None:
            return verdict
    if operator in ("==", "==="):
        return left == right
    if operator == "!=":
        return left != right
    raise MarkerError(f"cannot compare {left!r} {operator} {right!r}")


def evaluate_marker(marker: Optional[str], variables: Mapping[str, str]) -> bool:
    """True when the requirement applies; raises MarkerError or UnknownMarkerVariable when that is not known."""
    if not marker:
        return True
    return _MarkerParser(_tokens(marker), variables).parse()


def marker_variables(python_version: Optional[str], machine: Optional[str], extra: str = "") -> dict[str, str]:
    """A CPython on Linux (every Neuron host); `platform_machine` only when known."""
    variables = {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix",
                 "implementation_name": "cpython", "platform_python_implementation": "CPython", "extra": extra}
    if python_version:
        parts = python_version.split(".")
        variables["python_version"] = ".".join(parts[:2])
        variables["python_full_version"] = python_version
        variables["implementation_version"] = python_version
    if machine:
        variables["platform_machine"] = machine
    return variables
