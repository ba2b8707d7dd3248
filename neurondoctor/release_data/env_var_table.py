"""Lookups over `manifests/env-vars.json`: what the Neuron docs say each environment variable takes, and which
ones were retired for what.

A value is judged only where the page gives the complete set (`closed`): a variable whose values are "not stated"
is never a finding, whatever it holds, and a name the data does not list is nobody's business.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from neurondoctor.release_data.schema import NOT_STATED, RUNTIME_BOOLEANS
from neurondoctor.strict_numbers import count_problem

# INT_MAX has 10 digits; a longer value is not a number any documented range holds.
_MAX_DIGITS = 10


@dataclass(frozen=True)
class DocumentedVariable:
    """One variable as its page describes it."""

    name: str
    owner: str
    kind: str
    values: Optional[tuple[str, ...]]  # None: the page does not state them
    closed: bool
    case_insensitive: bool
    bounds: Optional[tuple[int, Optional[int]]]
    invalid: str
    judged_by: str
    families: tuple[str, ...]
    source: str

    def value_problem(self, value: str) -> Optional[str]:
        """Why the docs do not allow `value` (`not one of 0, 1, false, true`), or None when they do or do not
        say. A variable another rule judges (`judged_by`) is that rule's."""
        if not self.closed or self.judged_by:
            return None
        if self.values is not None:
            fold = str.casefold if self.case_insensitive else str
            if fold(value) in {fold(allowed) for allowed in self.values}:
                return None
            return f"not one of {', '.join(self.values)}"
        if self.bounds is None:
            return None
        low, high = self.bounds
        return count_problem(value, maximum=high, minimum=low, max_digits=_MAX_DIGITS)


@dataclass(frozen=True)
class RetiredVariable:
    """A variable the docs retired or deprecated, and what took its place."""

    name: str
    owner: str
    effect: str  # ignored | honoured | not stated
    warns: bool
    retired_in: Optional[str]
    deprecated_in: str
    replaced_by: tuple[str, ...]
    direct_equivalent: Optional[str]
    replacement: str
    source: str


def _documented(name: str, item: Mapping[str, Any], booleans: tuple[str, ...], booleans_fold: bool,
                ) -> DocumentedVariable:
    raw = item.get("values")
    values: Optional[tuple[str, ...]] = None
    case_insensitive = bool(item.get("case_insensitive", False))
    if raw == RUNTIME_BOOLEANS:
        values, case_insensitive = booleans, booleans_fold
    elif isinstance(raw, list):
        values = tuple(raw)
    bounds = item.get("range")
    return DocumentedVariable(
        name=name, owner=str(item["owner"]), kind=str(item["kind"]), values=values, closed=bool(item["closed"]),
        case_insensitive=case_insensitive, bounds=(bounds[0], bounds[1]) if isinstance(bounds, list) else None,
        invalid=str(item.get("invalid", NOT_STATED)), judged_by=str(item.get("judged_by", "")),
        families=tuple(item.get("families", ())), source=str(item["source"]))


def _retired(name: str, item: Mapping[str, Any]) -> RetiredVariable:
    return RetiredVariable(
        name=name, owner=str(item["owner"]), effect=str(item["effect"]), warns=bool(item.get("warns", False)),
        retired_in=item.get("retired_in"), deprecated_in=str(item.get("deprecated_in", "")),
        replaced_by=tuple(item.get("replaced_by", ())), direct_equivalent=item.get("direct_equivalent"),
        replacement=str(item["replacement"]), source=str(item["source"]))


class EnvVarTable:
    """The documented and the retired variables, built once per run from the loaded document ({} when the file
    could not be used: then nothing is judged from it)."""

    def __init__(self, document: Mapping[str, Any]) -> None:
        booleans = document.get("runtime_booleans") or {}
        values = tuple(booleans.get("values", ()))
        fold = bool(booleans.get("case_insensitive", False))
        self.variables: dict[str, DocumentedVariable] = {
            name: _documented(name, item, values, fold) for name, item in document.get("variables", {}).items()}
        self.retired: dict[str, RetiredVariable] = {
            name: _retired(name, item) for name, item in document.get("retired", {}).items()}

    @property
    def names(self) -> frozenset[str]:
        """Every variable the data lists, documented or retired."""
        return frozenset(self.variables) | frozenset(self.retired)

    def documented(self, name: str) -> Optional[DocumentedVariable]:
        return self.variables.get(name)
