"""The doctor's use of `packaging` (pip's own library) over generated versions, specifiers, markers and
requirements, spelled every way PEP 440 and PEP 508 allow, from a small number space so that equal, padded and
neighbouring versions meet often.

What is held here is what the doctor adds to `packaging`: an installed pre-release counts (as `pip check` counts
it); text that is not PEP 440 or 508 is "not judged" (None), never an exception; a marker that reads a variable the
environment does not tell is "not known", never answered with the machine the doctor runs on; a requirement is
shown as a person writes it on a pip command line, and that line means the same requirement again."""

from __future__ import annotations

import platform
from typing import Optional

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.markers import Marker
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from neurondoctor.python_packaging import (
    below_range,
    canonical_name,
    marker_applies,
    marker_extras,
    marker_variables,
    matches,
    metadata_problem,
    newest_admitted,
    parse_requirement,
    valid_specifier,
)

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


def _parsed(version: str, specifier: str) -> Optional[tuple[Version, SpecifierSet]]:
    try:
        return Version(version), SpecifierSet(specifier)
    except (InvalidSpecifier, InvalidVersion):
        return None


@settings(max_examples=2500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(version=_versions(), specifier=_specifiers())
def test_an_installed_version_is_judged_as_pip_check_judges_it(version: str, specifier: str) -> None:
    """Judged exactly when both sides are PEP 440; then a pre-release installed is in the set when pip would
    install it on request (`pip check` reports no conflict for it), which is packaging's answer with
    pre-releases admitted."""
    parsed = _parsed(version, specifier)
    verdict = matches(version, specifier)
    if parsed is None:
        assert verdict is None, (version, specifier)
        return
    installed, version_set = parsed
    assert verdict is version_set.contains(installed, prereleases=True), (version, specifier)
    if not installed.is_prerelease:
        assert verdict is version_set.contains(installed), (version, specifier)  # the policy changes nothing else


@settings(max_examples=1500, deadline=None)
@given(version=st.one_of(_versions(), st.text(max_size=16)), specifier=st.one_of(_specifiers(), st.text(max_size=16)))
def test_any_text_is_judged_or_not_judged_never_an_exception(version: str, specifier: str) -> None:
    assert matches(version, specifier) in (True, False, None)


@pytest.mark.parametrize(("version", "specifier", "expected"), [
    ("2.14.3.0", "==2.14.3.0.*", True),  # a family's stem is in the family: TorchNeuron's `2.14.3.0.*`
    ("2.14.3", "==2.14.3.0.*", True),  # padded with zeros
    ("2.14.3.0.41200", "==2.14.3.0.*", True),
    ("2.14.30.0", "==2.14.3.0.*", False),  # a string prefix is not a version prefix
    ("2.9.0+cpu", "==2.9.0", True),  # a local label is ignored unless named
    ("2.9.1+cu128", "==2.9.0", False),
    ("4.57.6", "~=4.57.1", True),
    ("4.58.0", "~=4.57.1", False),
    ("2.27.5334.0+0a1b", ">=2.27,<2.28", True),
    ("2.1.1.2.0.1b0", ">=2.1,<2.2", True),  # an installed pre-release counts, as pip check counts it
    ("2.9.0", "", True),  # no version set admits every version
    ("1:2.27.34.0-ec8cd5e8b", ">=2.27", None),  # a Debian version is not judged as PEP 440
    ("2.9.0", ">=2.9,<=>", None),  # nor is a set that is not a specifier
])
def test_documented_cases(version: str, specifier: str, expected: Optional[bool]) -> None:
    assert matches(version, specifier) is expected


_MARKER_VALUES = {"python_version": ["3.9", "3.10", "3.12", "3.13"], "python_full_version": ["3.11.7", "3.12.4"],
                  "platform_machine": ["x86_64", "aarch64"], "sys_platform": ["linux", "win32"],
                  "extra": ["neuronx", "Neuron_X", "tests"], "os_name": ["posix", "nt"]}


@st.composite
def _markers(draw: st.DrawFn, depth: int = 0) -> str:
    if depth < 2 and draw(st.integers(0, 2)) == 0:
        joined = f" {draw(st.sampled_from(['and', 'or']))} ".join(
            draw(st.lists(_markers(depth + 1), min_size=2, max_size=3)))
        return f"({joined})"
    variable = draw(st.sampled_from(sorted(_MARKER_VALUES)))
    operator = draw(st.sampled_from(["==", "!=", "<", ">=", "in", "not in"] if "version" in variable
                                    else ["==", "!=", "in", "not in"]))
    value = draw(st.sampled_from(_MARKER_VALUES[variable]))
    quote = draw(st.sampled_from(["'", '"']))
    if draw(st.booleans()):
        return f"{variable} {operator} {quote}{value}{quote}"
    return f"{quote}{value}{quote} {operator} {variable}"


@st.composite
def _environments(draw: st.DrawFn) -> dict[str, str]:
    python = draw(st.sampled_from([None, "3.10.14", "3.12.4", "3.13.1"]))
    machine = draw(st.sampled_from([None, "x86_64", "aarch64"]))
    return marker_variables(python, machine, draw(st.sampled_from(["", "neuronx", "tests"])))


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(marker=_markers(), variables=_environments())
def test_a_marker_applies_as_pip_decides_or_is_not_known(marker: str, variables: dict[str, str]) -> None:
    """Known variables: packaging's answer for this environment. A variable the environment does not tell: not
    known, whatever the machine running the doctor would answer."""
    parsed = Marker(marker)
    verdict = marker_applies(parsed, variables)
    reads = {name for name in _MARKER_VALUES if name in marker}
    if not reads <= variables.keys():
        assert verdict is None, (marker, variables)
        return
    assert verdict is parsed.evaluate(dict(variables)), (marker, variables)


def test_the_machine_running_the_doctor_never_answers_for_a_copied_tree() -> None:
    here = platform.machine()
    unknown = marker_variables("3.12.4", None)
    assert marker_applies(Marker(f'platform_machine == "{here}"'), unknown) is None
    assert marker_applies(Marker(f'platform_machine != "{here}"'), unknown) is None
    assert marker_applies(Marker(f'platform_machine != "{here}"'), marker_variables("3.12.4", here)) is False
    assert marker_applies(None, unknown) is True


@pytest.mark.parametrize(("marker", "extras"), [
    ('extra == "neuronx"', ["neuronx"]),
    ("'NeuronX' == extra", ["neuronx"]),  # either order; normalised as PEP 685 compares extras
    ('python_version >= "3.9" and (extra == "neuronx" or extra == "Neuron_Inf")', ["neuronx", "neuron-inf"]),
    ('python_version >= "3.9"', []),
    ('sys_platform == "extra"', []),  # a value that spells the word is no extra
])
def test_the_extras_a_marker_names(marker: str, extras: list[str]) -> None:
    requirement = parse_requirement(f"torch-neuronx==2.8.0.2.10.13553; {marker}")
    assert requirement is not None and marker_extras(requirement.marker) == extras


_NAMES = st.sampled_from(["torch", "Torch_Neuronx", "neuronx.cc", "libneuronxla", "optimum-neuron", "a", "x--y"])


@st.composite
def _requirement_texts(draw: st.DrawFn) -> tuple[str, str]:
    name = text = draw(_NAMES)
    if draw(st.booleans()):
        text += "[" + ",".join(draw(st.lists(st.sampled_from(["neuronx", "Tests", "all_x"]), min_size=1,
                                             max_size=3))) + "]"
    if draw(st.booleans()):
        specifier = draw(_specifiers())
        text += f" ({specifier})" if draw(st.booleans()) else specifier
    if draw(st.booleans()):
        text += "; " + draw(_markers())
    return name, text


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(drawn=_requirement_texts())
def test_a_requirement_shown_on_a_command_line_is_the_same_requirement(drawn: tuple[str, str]) -> None:
    """`shown()` goes into fix lines (`pip install 'X[e]>=1,<2'`): read back, it names the same project, extras and
    version set; the name is the one installed packages are keyed by."""
    name, text = drawn
    requirement = parse_requirement(text)
    if requirement is None:
        return  # a specifier packaging refuses (`~=1`): the requirement is skipped, never guessed
    assert requirement.name == canonical_name(name) and requirement.text == text
    again = parse_requirement(requirement.shown())
    assert again is not None and again.name == requirement.name
    assert again.parsed.extras == requirement.parsed.extras and again.specifier == requirement.specifier
    assert again.marker is None and again.text == requirement.shown()


@pytest.mark.parametrize(("name", "version", "problem"), [
    ("torch-neuronx", "2.8.0.2.10.13553", ""),
    ("neuronx_cc", "2.21.33363.0+82129205", ""),
    ("evil pkg", "1.0", "its name is not a PEP 508 project name"),
    ("-leading", "1.0", "its name is not a PEP 508 project name"),
    ("torch", "1.0\nFAKE: healthy", "its version is not a PEP 440 version"),
    ("torch", "1." + "0" * 200, "its version is not a PEP 440 version"),  # longer than any pip writes
    ("torch", "1:2.27.34.0-ec8cd5e8b", "its version is not a PEP 440 version"),
])
def test_a_record_pip_could_not_have_written_is_named(name: str, version: str, problem: str) -> None:
    assert metadata_problem(name, version) == problem


def test_a_published_range_read_as_pip_reads_it() -> None:
    """support-ranges.json: the lower bound a version fails, the one top a range names (the pin a fix installs)."""
    assert below_range("0.9.2", ">=0.10.0,<=0.11.2") is True
    assert below_range("0.12.0", ">=0.10.0,<=0.11.2") is False and below_range("0.10.0", ">=0.10.0") is False
    assert below_range("0.11.2; touch x", ">=0.10.0") is None
    assert newest_admitted(">=0.10.0,<=0.11.2") == "0.11.2" and newest_admitted("==0.13.0") == "0.13.0"
    assert newest_admitted(">=3.20") is None and newest_admitted("==0.29.0.1.*") is None
    assert valid_specifier("") and valid_specifier("==0.29.0.1.*") and not valid_specifier(">=>0.1")
