"""Versions, version sets, requirements and markers as pip judges them, with `packaging`, pip's own library.

The rules ask three questions of what a wheel declares: is this installed version in that version set
(`>=1.22,<2`, TorchNeuron's family `==2.14.3.0.*`), what does this `Requires-Dist` ask for, and does its
marker apply to this environment. `packaging` answers each as pip does. This module adds what a doctor reading
other people's files needs on top:

- text that is not PEP 440 or PEP 508 (a Debian version, a placed record's garbage) is "not judged" (None),
  never an exception and never a guess;
- a marker that asks about something the environment does not tell (the `platform_machine` of a copied tree)
  is "not known" (None): `packaging` would fill the gap with the machine the doctor runs on.

Debian and rpm versions are not PEP 440 and keep their own rules (`neuron_version.release_tuple`). `packaging`
is imported when a question is first asked, so a run that asks none does not load it.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:
    from packaging.markers import Marker
    from packaging.requirements import Requirement as PackagingRequirement

# The longest version a placed record may carry and still be judged; pip's own records are far shorter.
MAX_VERSION_LENGTH = 128


@functools.lru_cache(maxsize=8192)
def matches(version: str, specifier: str) -> Optional[bool]:
    """Whether `version` is in the comma-separated `specifier` ('' admits every version). Installed pre-releases
    count, as `pip check` counts them. None when either side is not PEP 440: such a pair is never judged."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        return SpecifierSet(specifier).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return None


def valid_specifier(specifier: str) -> bool:
    """Whether pip reads this as a version set (`>=0.10.0,<=0.11.2`; '' admits every version)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        SpecifierSet(specifier)
    except InvalidSpecifier:
        return False
    return True


def below_range(version: str, specifier: str) -> Optional[bool]:
    """Whether `version` fails a lower bound (`>=`, `>`) of the set: older than every version it admits. None when
    either side is not PEP 440."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet
    from packaging.version import InvalidVersion, Version

    try:
        parsed = Version(version)
        return any(item.operator in (">=", ">") and not item.contains(parsed, prereleases=True)
                   for item in SpecifierSet(specifier))
    except (InvalidSpecifier, InvalidVersion):
        return None


def newest_admitted(specifier: str) -> Optional[str]:
    """The one version a set names as its top (`<=0.11.2` or `==0.13.0` → that version), which an install can pin;
    None when the set has no such bound (`>=3.20` admits every later version: the set itself is the pin)."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        tops = [item.version for item in SpecifierSet(specifier)
                if item.operator in ("<=", "==", "===") and "*" not in item.version]
    except InvalidSpecifier:
        return None
    return tops[0] if len(tops) == 1 else None


@functools.lru_cache(maxsize=8192)
def metadata_problem(name: str, version: str) -> str:
    """Why a distribution record's name or version is not one pip could have written ('' when both are): such a
    record is data someone placed, and no fix may carry it."""
    from packaging.utils import InvalidName, canonicalize_name
    from packaging.version import InvalidVersion, Version

    try:
        canonicalize_name(name, validate=True)
    except InvalidName:
        return "its name is not a PEP 508 project name"
    try:
        if len(version) > MAX_VERSION_LENGTH:
            raise InvalidVersion(version)
        Version(version)
    except InvalidVersion:
        return "its version is not a PEP 440 version"
    return ""


@functools.lru_cache(maxsize=8192)
def canonical_name(name: str) -> str:
    """The PEP 503 name pip compares (`neuronx_distributed` and `Neuronx.Distributed` are `neuronx-distributed`).
    Cached: the release data and every install record ask for the same few thousand names."""
    from packaging.utils import canonicalize_name

    return str(canonicalize_name(name.strip()))


@dataclass(frozen=True)
class Requirement:
    """One `Requires-Dist` as `packaging` parsed it, with its canonical name (what installed packages are keyed by)
    and the text it came from (kept in evidence as the wheel wrote it)."""

    name: str
    parsed: PackagingRequirement
    text: str

    @property
    def display_name(self) -> str:
        return self.parsed.name

    @property
    def specifier(self) -> str:
        """The version set as pip prints it (`<=1.26.4,>=1.22.2`); '' for any version."""
        return str(self.parsed.specifier)

    @property
    def url(self) -> Optional[str]:
        return self.parsed.url

    @property
    def marker(self) -> Optional[Marker]:
        return self.parsed.marker

    def shown(self) -> str:
        """`transformers~=4.57.1`: what a person writes on a pip command line (no marker, no URL)."""
        extras = f"[{','.join(sorted(self.parsed.extras))}]" if self.parsed.extras else ""
        return f"{self.display_name}{extras}{self.specifier}"


@functools.lru_cache(maxsize=8192)
def parse_requirement(text: str) -> Optional[Requirement]:
    """One `Requires-Dist` value; None for one that is not PEP 508 (never a guess). Cached: several rules read the
    same distributions' requirements."""
    from packaging.requirements import InvalidRequirement
    from packaging.requirements import Requirement as PackagingRequirement

    try:
        parsed = PackagingRequirement(text)
    except InvalidRequirement:
        return None
    return Requirement(canonical_name(parsed.name), parsed, text)


_EXTRA_TEST = r'\bextra == "([^"]+)"|"([^"]+)" == extra\b'  # compiled by `re` for the first extra


def marker_extras(marker: Optional[Marker]) -> list[str]:
    """The extras a marker names (`extra == "neuronx"` → `["neuronx"]`), normalised as PEP 685 compares them.
    `packaging` writes a parsed marker with its canonical variable names and double quotes, so one pattern reads
    either order of the comparison."""
    if marker is None:
        return []
    return [canonical_name(left or right) for left, right in re.findall(_EXTRA_TEST, str(marker))]


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_MARKER_KEYWORDS = frozenset({"and", "or", "in", "not"})


def _marker_variable_names(marker: Marker) -> set[str]:
    """The environment variables a parsed marker reads: its words outside quoted values (a marker `packaging`
    parsed has no quote inside a value of the other kind)."""
    return {word for word in _WORD.findall(_QUOTED.sub(" ", str(marker))) if word not in _MARKER_KEYWORDS}


def marker_applies(marker: Optional[Marker], variables: Mapping[str, str]) -> Optional[bool]:
    """True when the requirement applies to an environment with these marker variables; None when that is not
    known: the marker reads a variable this environment does not tell, or compares what cannot be compared."""
    if marker is None:
        return True
    from packaging.markers import InvalidMarker, UndefinedComparison, UndefinedEnvironmentName

    if not _marker_variable_names(marker) <= variables.keys():
        return None
    try:
        return marker.evaluate(dict(variables))
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName):
        return None


def marker_variables(python_version: Optional[str], machine: Optional[str], extra: str = "") -> dict[str, str]:
    """A CPython on Linux (every Neuron host); the Python version and `platform_machine` only when known."""
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
