"""Requires-Dist judged like `pip check`, Neuron-aware. The environments are built by real pip from a
PEP 503 index on 127.0.0.1. Its wheels carry the real names, versions and Requires-Dist: optimum-neuron 0.4.5 as
its PyPI METADATA declares it (`[neuronx]` pins the Neuron 2.26.1 stack), transformers, torchvision 0.23/0.24
pinning their torch, and fastapi 0.115.0. Every fix the doctor prints is run, and the check after it is clean.
Static `--venv` and live `--python` must agree."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurondoctor.python_packaging import marker_applies, marker_variables, matches, parse_requirement
from tests.conftest import check_json
from tests.hf_index import pip, run_fix
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import simple_wheel, torchvision_wheel
from tests.wheelhouse import VenvFactory, add_pip, venv_python, write_pip_conf


def requirement_findings(root: Path, venv: Path) -> list[dict[str, object]]:
    """ND-REQ findings of `check --venv` and of `check --python`: the two must agree."""
    static = [finding for finding in check_json(["--root", str(root), "--venv", str(venv)])[1]["findings"]
              if str(finding["id"]).startswith("ND-REQ-")]
    live = [finding for finding in check_json(["--root", str(root), "--python", str(venv_python(venv))])[1][
        "findings"] if str(finding["id"]).startswith("ND-REQ-")]
    assert [(item["id"], item["severity"], item["title"], item["fix"]) for item in static] == [
        (item["id"], item["severity"], item["title"], item["fix"]) for item in live]
    return static


@pytest.fixture
def neuron_host(tmp_path: Path) -> Path:
    return build_host(tmp_path / "host", HostSpec(release="2.26.1"))


def optimum_neuron_venv(venvs: VenvFactory, hf_index_url: str, name: str) -> Path:
    """A venv with its own pip, as `python3 -m venv` leaves it, so the printed `bin/python -m pip` fix runs."""
    venv = venvs.create(name)
    add_pip(venv)
    pip(venv, hf_index_url, "optimum-neuron[neuronx]==0.4.5")
    write_pip_conf(venv)
    return venv


def test_optimum_neuron_with_its_neuronx_extra_is_clean(venvs: VenvFactory, hf_index_url: str,
                                                         neuron_host: Path) -> None:
    venv = optimum_neuron_venv(venvs, hf_index_url, "req-healthy")
    assert requirement_findings(neuron_host, venv) == []


def test_a_transformers_downgrade_under_optimum_neuron(venvs: VenvFactory, hf_index_url: str,
                                                       neuron_host: Path) -> None:
    venv = optimum_neuron_venv(venvs, hf_index_url, "req-transformers")
    pip(venv, hf_index_url, "transformers==4.46.3")  # pip installs it and only warns
    found = requirement_findings(neuron_host, venv)
    assert [(item["id"], item["severity"], item["title"]) for item in found] == [
        ("ND-REQ-001", "error", "optimum-neuron 0.4.5 requires transformers~=4.57.1; transformers has 4.46.3")]
    assert found[0]["category"] == "framework-pin-mismatch"
    assert found[0]["fix"] == [f"{venv_python(venv)} -m pip install 'transformers~=4.57.1'"]
    run_fix(str(found[0]["fix"][0]), hf_index_url)
    assert requirement_findings(neuron_host, venv) == []


def test_a_torchvision_for_another_torch(venvs: VenvFactory, hf_index_url: str, neuron_host: Path) -> None:
    """torchvision 0.24 pins torch 2.9.0 (that pair is torch_companions.py's ND-TORCH-005, whose fix moves
    torchvision, not the pinned torch), and the `[neuronx]` extra pins torchvision 0.23.*. pip records no extras
    and `pip check` is silent about the extra's pin: it is evidence of the release the add-on targets, an info."""
    venv = optimum_neuron_venv(venvs, hf_index_url, "req-torchvision")
    venvs.install(venv, [torchvision_wheel("0.24.0", "cu128", "2.9.0")])  # PyPI's, over the extra's
    found = requirement_findings(neuron_host, venv)
    assert [(item["id"], item["severity"], item["title"]) for item in found] == [
        ("ND-REQ-004", "info", "optimum-neuron 0.4.5's [neuronx] extra targets Neuron 2.26.1; 1 of its pins differ "
                               "here")]
    assert found[0]["evidence"]["unmet"] == ["optimum-neuron 0.4.5 requires torchvision==0.23.*; torchvision has "
                                             "0.24.0"]
    assert "fix" not in found[0] or not found[0]["fix"]
    assert "optimum-neuron" not in pip_check(venv)  # what pip itself judges: nothing about the extra


def test_a_neuron_package_missing_from_the_extra(venvs: VenvFactory, hf_index_url: str, neuron_host: Path) -> None:
    venv = optimum_neuron_venv(venvs, hf_index_url, "req-missing")
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv_python(venv)), "uninstall", "-y", "-q",
                    "neuronx-distributed"], check=True, capture_output=True, timeout=120)
    found = requirement_findings(neuron_host, venv)
    assert [(item["id"], item["severity"], item["evidence"]["unmet"]) for item in found] == [
        ("ND-REQ-004", "info", ["optimum-neuron 0.4.5 requires neuronx_distributed==0.15.22404; neuronx_distributed "
                                "is not installed"])]
    assert found[0]["evidence"]["extra_release"] == "2.26.1"
    assert "optimum-neuron" not in pip_check(venv)


def pip_check(venv: Path) -> str:
    """What `pip check` itself reports for the environment (its exit code is 1 when it reports anything)."""
    done = subprocess.run([str(venv_python(venv)), "-m", "pip", "check"], capture_output=True, text=True,
                          timeout=120)
    return done.stdout


def _reported_venv(venvs: VenvFactory, name: str, packages: dict[str, str]) -> Path:
    """A venv holding exactly the packages a report lists (their own metadata declares nothing between them)."""
    venv = venvs.create(name)
    add_pip(venv)
    venvs.install(venv, [simple_wheel(package, version) for package, version in packages.items()])
    write_pip_conf(venv)
    return venv


# huggingface/optimum-neuron#492, the reporter's `optimum-cli env` (inf2, Amazon Linux 2023, Python 3.9).
REPORT_492 = {"optimum-neuron": "0.0.19", "optimum": "1.17.1", "transformers": "4.36.2",
              "transformers-neuronx": "0.8.268", "neuronx-distributed": "0.5.0"}


def test_what_optimum_neuron_0_0_19_needs_and_does_not_declare(venvs: VenvFactory, hf_index_url: str,
                                                                neuron_host: Path) -> None:
    """Its import fails with transformers-neuronx 0.8.268, works with 0.9.474 (the maintainers'
    answer, so reported: a warning); `pip check` is silent because the metadata names no version."""
    venv = _reported_venv(venvs, "req-492", REPORT_492)
    found = requirement_findings(neuron_host, venv)
    assert [(item["id"], item["severity"], item["title"]) for item in found] == [
        ("ND-REQ-003", "warning", "optimum-neuron 0.0.19 needs transformers-neuronx>=0.9.474, which its metadata "
                                  "does not declare; transformers-neuronx has 0.8.268")]
    assert "huggingface/optimum-neuron#492" in str(found[0]["detail"])
    run_fix(str(found[0]["fix"][0]), hf_index_url)
    assert requirement_findings(neuron_host, venv) == []


def test_near_miss_optimum_neuron_0_0_19_with_the_tested_transformers_neuronx(venvs: VenvFactory,
                                                                              neuron_host: Path) -> None:
    venv = _reported_venv(venvs, "req-492-fixed", {**REPORT_492, "transformers-neuronx": "0.9.474"})
    assert requirement_findings(neuron_host, venv) == []


def test_transformers_neuronx_0_6_under_an_older_torch_neuronx(venvs: VenvFactory, hf_index_url: str,
                                                               neuron_host: Path) -> None:
    """aws-neuron/transformers-neuronx#33: 0.6 (Neuron 2.13) with torch-neuronx 1.13.1.1.9.0 fails on
    `neuron_xla_compile`; the release notes pair it with torch-neuronx 1.13.1.1.10: documented, an error."""
    venv = _reported_venv(venvs, "req-tnx-33", {"transformers-neuronx": "0.6.106", "torch-neuronx": "1.13.1.1.9.0"})
    found = [item for item in requirement_findings(neuron_host, venv) if item["id"] == "ND-REQ-003"]
    assert [(item["severity"], item["evidence"]["installed"]) for item in found] == [("error", "1.13.1.1.9.0")]
    run_fix(str(found[0]["fix"][0]), hf_index_url)
    assert [item for item in requirement_findings(neuron_host, venv) if item["id"] == "ND-REQ-003"] == []


def test_other_unmet_requirements_are_one_info_line(venvs: VenvFactory, hf_index_url: str, neuron_host: Path) -> None:
    venv = optimum_neuron_venv(venvs, hf_index_url, "req-other")
    pip(venv, hf_index_url, "--no-deps", "fastapi==0.115.0")
    found = requirement_findings(neuron_host, venv)
    assert [(item["id"], item["severity"]) for item in found] == [("ND-REQ-002", "info")]
    assert found[0]["evidence"]["unmet"] == [
        "fastapi 0.115.0 requires starlette<0.39.0,>=0.37.2; starlette is not installed",
        "fastapi 0.115.0 requires typing-extensions>=4.8.0; typing-extensions is not installed"]
    code = check_json(["--root", str(neuron_host), "--venv", str(venv)])[0]
    assert code == 0  # info never fails a check


def test_near_miss_an_extra_that_is_not_installed_is_not_judged(venvs: VenvFactory, hf_index_url: str,
                                                                neuron_host: Path) -> None:
    """`[tests]` wants pytest<=8.0.0 and psutil; with psutil installed and no pytest, tests is still not in use."""
    venv = optimum_neuron_venv(venvs, hf_index_url, "req-extra")
    pip(venv, hf_index_url, "--no-deps", "wheel==0.45.1")
    assert requirement_findings(neuron_host, venv) == []


@pytest.mark.parametrize(("text", "shown", "marker"), [
    ("transformers~=4.57.1", "transformers~=4.57.1", None),
    ("numpy (<=1.26.4,>=1.22.2)", "numpy<=1.26.4,>=1.22.2", None),
    ('torch==2.8.0.*; extra == "neuronx"', "torch==2.8.0.*", 'extra == "neuronx"'),
    ("neuron-cc[tensorflow]==1.22.0.0", "neuron-cc[tensorflow]==1.22.0.0", None),
    ("pkg @ https://example.invalid/pkg-1.0-py3-none-any.whl ; python_version >= '3.9'", "pkg",
     'python_version >= "3.9"'),
])
def test_requirements_parse_as_wheels_write_them(text: str, shown: str, marker: str | None) -> None:
    requirement = parse_requirement(text)
    assert requirement is not None and requirement.shown() == shown
    assert (None if requirement.marker is None else str(requirement.marker)) == marker


def test_unreadable_requirements_are_skipped_not_guessed() -> None:
    assert parse_requirement("torch >= 2.0 <3") is None
    assert parse_requirement("[extra]") is None
    assert parse_requirement('pkg; python_version <') is None  # a marker pip cannot read: never judged
    assert parse_requirement('pkg; (python_version < "3.13"') is None
    assert matches("not-a-version", ">=1") is None


def applies(marker: str, variables: dict[str, str]) -> bool | None:
    """Whether a requirement with this marker applies, as the rules ask it."""
    requirement = parse_requirement(f"pkg; {marker}")
    assert requirement is not None, marker
    return marker_applies(requirement.marker, variables)


def test_markers_evaluate_as_pip_evaluates_them() -> None:
    py312 = marker_variables("3.12.4", "x86_64")
    assert applies('python_version < "3.13" and (sys_platform == "linux" or os_name == "nt")', py312)
    assert applies('python_full_version >= "3.12.5"', py312) is False
    assert applies("platform_machine == 'x86_64' and platform_system == 'Linux'", py312)
    assert applies('"linux" in sys_platform and "win" not in sys_platform', py312)
    assert applies('extra == "Neuron_X"', marker_variables("3.12.4", None, "neuron-x"))
    assert applies('extra == "tests"', py312) is False
    # a copied tree whose machine is not known: not judged, never the machine the doctor runs on
    assert applies('platform_machine == "x86_64"', marker_variables("3.12.4", None)) is None
    assert applies('platform_machine != "x86_64"', marker_variables("3.12.4", None)) is None
    assert applies('python_version >= "3.9"', marker_variables(None, "x86_64")) is None


@given(st.text(max_size=120))
@settings(max_examples=300, deadline=None)
def test_garbage_requirements_and_markers_never_raise(text: str) -> None:
    """Requires-Dist comes from any wheel on the path: a parse gives a Requirement or None, a marker a verdict or
    None (not known)."""
    for candidate in (text, f"pkg; {text}"):
        requirement = parse_requirement(candidate)
        assert requirement is None or requirement.name
        if requirement is not None:
            assert marker_applies(requirement.marker, marker_variables("3.11.7", "x86_64")) in (True, False, None)


# Every marker path, each beside its near miss: what applies to this interpreter on this machine, and what does
# not (another Python, another platform, an extra nobody asked for).
MARKER_CASES = {
    "dep-python-new": 'python_version >= "3.0"',
    "dep-python-old": 'python_version < "3.0"',
    "dep-full-version": 'python_full_version >= "3.0.0"',
    "dep-machine-here": f'platform_machine == "{platform.machine()}"',
    "dep-machine-other": 'platform_machine == "s390x"',
    "dep-platform-in": '"linux" in sys_platform',
    "dep-platform-win": 'sys_platform == "win32"',
    "dep-extra": 'extra == "tests"',
    "dep-extra-and-python": 'extra == "tests" and python_version >= "3.0"',
    "dep-or": 'os_name == "nt" or implementation_name == "cpython"',
}


def test_markers_are_judged_as_pip_check_judges_them(venvs: VenvFactory) -> None:
    """A real `pip check` on the live machine is the oracle: the doctor's unmet requirements (static `--venv` and
    live `--python` alike) are exactly the ones pip reports, marker by marker."""
    venv = venvs.create("req-markers")
    add_pip(venv)
    requires = tuple(f"{name}>=2; {marker}" for name, marker in MARKER_CASES.items())
    venvs.install(venv, [simple_wheel("marker-user", "1.0", requires),
                         *(simple_wheel(name, "1.0") for name in MARKER_CASES)])
    reported = {line.split(" has requirement ")[1].split(">=")[0] for line in pip_check(venv).splitlines()
                if line.startswith("marker-user 1.0 has requirement ")}
    assert reported == {"dep-python-new", "dep-full-version", "dep-machine-here", "dep-platform-in", "dep-or"}
    for target in (["--venv", str(venv)], ["--python", str(venv_python(venv))]):
        document = check_json(["--root", "/", *target, "--select", "ND-REQ"])[1]
        unmet = [line for finding in document["findings"] for line in finding["evidence"].get("unmet", [])]
        doctor = {line.split(" requires ")[1].split(">=")[0] for line in unmet if line.startswith("marker-user ")}
        assert doctor == reported, (target, unmet)
