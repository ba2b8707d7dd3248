"""Whether a Python distribution's version is in a version set, as pip decides it (PEP 440), in one function.

Every rule that asks "is this installed version allowed" — a Requires-Dist range, a family of versions such as
TorchNeuron's `2.14.3.0.*`, a documented minimum — asks `matches` (issue 26 §3). Before, a family was a string
prefix, so `2.14.3.0` was not in `2.14.3.0.*`, which PEP 440 (and pip) says it is. `packaging.specifiers` decides
the same thing, and tests/test_pep440.py holds this function to it over thousands of generated cases; it is not
imported here because `check` stays light. Debian and rpm versions are not PEP 440 and keep their own rules
(neuron_version.release_tuple).

The rules are PEP 440's "Version specifiers" section: `==` and `!=` compare public versions unless the specifier
names a local label, and with `.*` compare the release segment padded with zeros; `~=X.Y.Z` is `>=X.Y.Z, ==X.Y.*`;
`<V` excludes the pre-releases of a final V, and `>V` the post-releases and local versions of V; `===` is string
equality. Where the PEP leaves a corner open (`<V.postN`, `>V.devN`) the answer is packaging 26's (the test's
oracle). Installed pre-releases count, as `pip check` counts them.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple, Optional

# PEP 440, appendix B ("Parsing version strings with regular expressions"), case-insensitive.
_VERSION_SOURCE = (
    r"""^\s*v?
    (?:(?P<epoch>[0-9]+)!)?
    (?P<release>[0-9]+(?:\.[0-9]+)*)
    (?P<pre>[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>[0-9]+)?)?
    (?P<post>(?:-(?P<post_n1>[0-9]+))|(?:[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>[0-9]+)?))?
    (?P<dev>[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>[0-9]+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?
    \s*$""")

_PRE_LETTER = {"alpha": "a", "a": "a", "beta": "b", "b": "b", "c": "rc", "pre": "rc", "preview": "rc", "rc": "rc"}
_PRE_RANK = {"a": 0, "b": 1, "rc": 2}

# The version part of one specifier clause, per operator (PEP 440: a wildcard only after a plain release and only
# with == and !=; a local label only with == and !=; ~= needs two release parts; === takes any string).
_PRE, _POST, _DEV = (r"(?:[-_.]?(?:alpha|beta|preview|pre|a|b|c|rc)[-_.]?[0-9]*)?",
                     r"(?:(?:-[0-9]+)|(?:[-_.]?(?:post|rev|r)[-_.]?[0-9]*))?", r"(?:[-_.]?dev[-_.]?[0-9]*)?")
_EPOCH_RELEASE = r"v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)*"
_CLAUSE_SOURCE = (
    r"^\s*(?:"
    r"(?P<arbitrary>===)\s*(?P<any>[^\s;)]*)"
    r"|(?P<equality>==|!=)\s*(?P<eq_version>" + _EPOCH_RELEASE
    + r"(?:\.\*|" + _PRE + _POST + _DEV + r"(?:\+[a-z0-9]+(?:[-_.][a-z0-9]+)*)?))"
    r"|(?P<compatible>~=)\s*(?P<compatible_version>v?(?:[0-9]+!)?[0-9]+(?:\.[0-9]+)+" + _PRE + _POST + _DEV + r")"
    r"|(?P<ordered><=|>=|<|>)\s*(?P<ordered_version>" + _EPOCH_RELEASE + _PRE + _POST + _DEV + r")"
    r")\s*$")
# Most versions are a plain release with perhaps a local label (`2.9.0.2.15.32035`, `2.13.0+cpu`) and most
# clauses an operator and such a release (`>=1.20`, `==2.14.3.0.*`): those are parsed with string methods, and the
# two patterns above are compiled only when something else turns up (compiling them cost `check` 3 ms on every
# run; tests/test_pep440.py holds both paths to packaging's answers).
_OPERATORS = ("===", "==", "!=", "~=", "<=", ">=", "<", ">")


@functools.cache
def _pattern(name: str) -> re.Pattern[str]:
    if name == "version":
        return re.compile(_VERSION_SOURCE, re.VERBOSE | re.IGNORECASE | re.ASCII)
    return re.compile(_CLAUSE_SOURCE, re.IGNORECASE | re.ASCII)


def _plain_release(text: str) -> bool:
    """`N(.N)*` in ASCII digits, nothing else."""
    return all(part.isdigit() and part.isascii() for part in text.split("."))


class Version(NamedTuple):
    """A parsed PEP 440 version: the parts comparisons need."""

    epoch: int
    release: tuple[int, ...]
    pre: Optional[tuple[str, int]]
    post: Optional[int]
    dev: Optional[int]
    local: Optional[tuple[str, ...]]

    @property
    def key(self) -> tuple[object, ...]:
        """The total order of PEP 440: trailing zeros of the release do not count; a dev-only release sorts before
        its pre-releases, which sort before the release; a local label sorts after the public version."""
        release = list(self.release)
        while len(release) > 1 and release[-1] == 0:
            release.pop()
        if self.pre is not None:
            pre: tuple[int, ...] = (1, _PRE_RANK[self.pre[0]], self.pre[1])
        else:
            pre = (0,) if self.post is None and self.dev is not None else (2,)
        local = () if self.local is None else tuple(
            (1, int(part), "") if part.isdigit() else (0, 0, part) for part in self.local)
        return (self.epoch, tuple(release), pre, (0,) if self.post is None else (1, self.post),
                (1,) if self.dev is None else (0, self.dev), (0,) if self.local is None else (1, local))

    @property
    def public(self) -> Version:
        return self._replace(local=None)

    @property
    def base(self) -> Version:
        return Version(self.epoch, self.release, None, None, None, None)

    @property
    def is_prerelease(self) -> bool:
        return self.pre is not None or self.dev is not None

    def __str__(self) -> str:
        text = (f"{self.epoch}!" if self.epoch else "") + ".".join(str(part) for part in self.release)
        text += f"{self.pre[0]}{self.pre[1]}" if self.pre else ""
        text += f".post{self.post}" if self.post is not None else ""
        text += f".dev{self.dev}" if self.dev is not None else ""
        return text + ("+" + ".".join(self.local) if self.local else "")


@functools.lru_cache(maxsize=8192)
def parse_version(text: str) -> Optional[Version]:
    """The version, or None when it is not PEP 440 (a Debian version, a placed record's garbage)."""
    release, plus, label = text.partition("+")
    if _plain_release(release):
        parts = label.lower().replace("-", ".").replace("_", ".").split(".")
        if not plus or all(part.isalnum() and part.isascii() for part in parts):
            return Version(0, tuple(int(part) for part in release.split(".")), None, None, None,
                           tuple(parts) if plus else None)
    match = _pattern("version").match(text)
    if match is None:
        return None
    pre = (_PRE_LETTER[match["pre_l"].lower()], int(match["pre_n"] or 0)) if match["pre_l"] else None
    post = None
    if match["post"]:
        post = int(match["post_n1"] or match["post_n2"] or 0)
    local = tuple(re.split(r"[-_.]", match["local"].lower())) if match["local"] else None
    return Version(int(match["epoch"] or 0), tuple(int(part) for part in match["release"].split(".")), pre, post,
                   int(match["dev_n"] or 0) if match["dev"] else None, local)


def _admitted(text: str) -> Version:
    """The version of a clause the clause pattern admitted (so it parses)."""
    parsed = parse_version(text)
    if parsed is None:
        raise ValueError(f"not a PEP 440 version: {text!r}")
    return parsed


def _prefix_match(version: Version, prefix: str) -> bool:
    """`==X.Y.*`: the same epoch, and the release padded with zeros begins with X.Y."""
    spec = _admitted(prefix)
    width = len(spec.release)
    padded = version.release + (0,) * max(0, width - len(version.release))
    return version.epoch == spec.epoch and padded[:width] == spec.release


def _equal(version: Version, text: str) -> bool:
    if text.endswith(".*"):
        return _prefix_match(version, text[:-2])
    spec = _admitted(text)
    return (version if spec.local is not None else version.public).key == spec.key


_ASCII_SPACE = " \t\n\r\f\v"  # what `\s` is under re.ASCII: `str.strip()` alone would also take Unicode spaces


def _parse_clause(part: str) -> Optional[tuple[str, str]]:
    """(operator, version text) of one specifier clause, or None when PEP 440 does not allow it."""
    text = part.strip(_ASCII_SPACE)
    operator = next((candidate for candidate in _OPERATORS if text.startswith(candidate)), None)
    if operator is not None and operator != "===":
        rest = text[len(operator):].strip(_ASCII_SPACE)
        core = rest[:-2] if operator in ("==", "!=") and rest.endswith(".*") else rest
        if _plain_release(core) and (operator != "~=" or "." in core):
            return operator, rest
    match = _pattern("clause").match(part)
    if match is None:
        return None
    if match["arbitrary"]:
        return "===", match["any"]
    if match["equality"]:
        return match["equality"], match["eq_version"].strip()
    if match["compatible"]:
        return "~=", match["compatible_version"]
    return match["ordered"], match["ordered_version"]


def _clause_matches(version: Version, operator: str, text: str) -> bool:
    if operator == "===":
        return str(version).lower() == text.lower()
    if operator in ("==", "!="):
        equal = _equal(version, text)
        return equal if operator == "==" else not equal
    if operator == "~=":
        spec = _admitted(text)
        prefix = (f"{spec.epoch}!" if spec.epoch else "") + ".".join(str(part) for part in spec.release[:-1])
        return version.public.key >= spec.key and _prefix_match(version, prefix)
    spec = _admitted(text)
    if operator == "<=":
        return version.public.key <= spec.key
    if operator == ">=":
        return version.public.key >= spec.key
    if operator == "<":  # below V.dev0, the first pre-release of a final V; below V itself when V is one
        bound = spec if spec.is_prerelease else spec._replace(dev=0, local=None)
        return version.key < bound.key
    if spec.dev is not None:  # `>V.devN`: from V.dev(N+1) on
        return version.key >= spec._replace(dev=spec.dev + 1, local=None).key
    if spec.post is not None:  # `>V.postN`: from V.post(N+1).dev0 on
        return version.key >= spec._replace(post=spec.post + 1, dev=0, local=None).key
    same_release = version.key[:2] == spec.key[:2] and version.pre == spec.pre  # V's posts and local versions
    return version.key > spec.key and not same_release


@functools.lru_cache(maxsize=8192)
def matches(version: str, specifier: str) -> Optional[bool]:
    """Whether `version` is in the comma-separated `specifier` (`>=1.22,<2`, `==2.14.3.0.*`; '' admits every
    version). None when either is not PEP 440: such a pair is never judged on a guess."""
    parsed = parse_version(version)
    if parsed is None:
        return None
    clauses = [] if not specifier.strip() else [_parse_clause(part) for part in specifier.split(",")]
    if any(clause is None for clause in clauses):
        return None
    try:
        return all(_clause_matches(parsed, *clause) for clause in clauses if clause is not None)
    except ValueError:
        return None
