"""`pep440.matches` decides as pip does: `packaging.specifiers` (pip's own library) is the oracle over generated
versions and specifiers (issue 26 §3), spelled every way PEP 440 allows, from a small number space so that equal,
padded and neighbouring versions meet often."""

from __future__ import annotations

from typing import Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from neurondoctor.pep440 import matches, parse_version

_SEPARATOR = st.sampled_from(["", ".", "-", "_"])
_NUMBER = st.sampled_from(["0", "1", "2", "00", "10"])


@st.composite
def _releases(draw: st.DrawFn) -> str:
    return ".".join(draw(st.lists(_NUMBER, min_size=1, max_size=5)))


@st.composite
def _versions(draw: st.DrawFn, with_local: bool = True) -> str:
    text = draw(st.sampled_from(["", "", "", "1!", "v"])) + draw(_releases())
    if draw(st.booleans()):
        letter = draw(st.sampled_from(["a", "b", "rc", "c", "alpha", "beta", "pre", "preview", "RC"]))
        text += draw(_SEPARATOR) + letter + draw(st.sampled_from(["", "0", "1", "2"]))
    if draw(st.booleans()):
        text += draw(st.sampled_from(["-1", ".post1", "post0", ".post", "_r2", "-rev1", ".POST2"]))
    if draw(st.integers(0, 3)) == 0:
        text += draw(st.sampled_from([".dev0", "dev", "-dev1", ".dev2"]))
    if with_local and draw(st.integers(0, 3)) == 0:
        text += "+" + draw(st.sampled_from(["cpu", "cu128", "1", "abc.2", "Ubuntu-1_2", "8e870898"]))
    return text


@st.composite
def _specifiers(draw: st.DrawFn) -> str:
    clauses = []
    for _ in range(draw(st.integers(1, 3))):
        operator = draw(st.sampled_from(["==", "!=", "<", "<=", ">", ">=", "~=", "==="]))
        if operator in ("==", "!=") and draw(st.booleans()):
            version = draw(st.sampled_from(["", "1!"])) + draw(_releases()) + ".*"
        else:
            version = draw(_versions(with_local=operator in ("==", "!=", "===") or draw(st.integers(0, 9)) == 0))
        clauses.append(operator + draw(st.sampled_from(["", " "])) + version)
    return ",".join(clauses)


def oracle(version: str, specifier: str) -> Optional[bool]:
    try:
        return SpecifierSet(specifier).contains(Version(version), prereleases=True)
    except (InvalidSpecifier, InvalidVersion):
        return None


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(version=_versions(), specifier=_specifiers())
def test_matches_decides_as_packaging_does(version: str, specifier: str) -> None:
    assert matches(version, specifier) == oracle(version, specifier), (version, specifier)


@settings(max_examples=500, deadline=None)
@given(left=_versions(), right=_versions())
def test_the_order_is_packagings(left: str, right: str) -> None:
    ours_left, ours_right = parse_version(left), parse_version(right)
    assert ours_left is not None and ours_right is not None
    assert (ours_left.key < ours_right.key) == (Version(left) < Version(right)), (left, right)
    assert (ours_left.key == ours_right.key) == (Version(left) == Version(right)), (left, right)
    assert str(ours_left) == str(Version(left))


@pytest.mark.parametrize(("version", "specifier", "expected"), [
    ("2.14.3.0", "==2.14.3.0.*", True),  # the family's stem is in the family (the bug issue 26 §3 names)
    ("2.14.3", "==2.14.3.0.*", True),  # padded with zeros
    ("2.14.3.0.41200", "==2.14.3.0.*", True),
    ("2.14.30.0", "==2.14.3.0.*", False),  # a string prefix is not a version prefix
    ("2.9.0+cpu", "==2.9.0", True),  # a local label is ignored unless named
    ("2.9.1+cu128", "==2.9.0", False),
    ("4.57.6", "~=4.57.1", True),
    ("4.58.0", "~=4.57.1", False),
    ("2.27.5334.0+0a1b", ">=2.27,<2.28", True),
    ("1:2.27.34.0-ec8cd5e8b", ">=2.27", None),  # a Debian version is not judged as PEP 440
    ("2.9.0", ">=2.9,<=>", None),  # nor is a set that is not a specifier
])
def test_documented_cases(version: str, specifier: str, expected: Optional[bool]) -> None:
    assert matches(version, specifier) == expected == oracle(version, specifier)


@settings(max_examples=3000, deadline=None)
@given(text=st.one_of(_versions(), _releases(),
                      st.text(alphabet="0123456789.+-_abcrpostdevCPU v!\u00a0\u0663", max_size=14)))
def test_the_plain_release_shortcut_parses_as_the_pattern_does(text: str) -> None:
    """`parse_version` skips the PEP 440 pattern for `N(.N)*[+local]`: the result is the pattern's."""
    from neurondoctor.pep440 import _pattern

    match = _pattern("version").match(text)
    parsed = parse_version(text)
    assert (parsed is None) is (match is None)
    if match is not None and parsed is not None:
        assert parsed.release == tuple(int(part) for part in match["release"].split("."))
        assert parsed.local == (tuple(match["local"].lower().replace("-", ".").replace("_", ".").split("."))
                                if match["local"] else None)


@settings(max_examples=3000, deadline=None)
@given(part=st.text(alphabet="0123456789.*=!<>~ v+\u00a0\t", max_size=12))
def test_the_plain_clause_shortcut_reads_as_the_pattern_does(part: str) -> None:
    """A clause with a plain release is read without the clause pattern: admitted exactly when the pattern admits
    it."""
    from neurondoctor.pep440 import _parse_clause, _pattern

    assert (_parse_clause(part) is None) is (_pattern("clause").match(part) is None)
