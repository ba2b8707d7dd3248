"""python-unsupported: the interpreter's X.Y is not one the installed release builds its wheels for.

Each manifest entry lists the Python versions of its wheels (n2-manifest `supported_python_versions`);
e.g. 2.30 dropped Python 3.10 (announcement-python-3-10-eol.rst) and torch-neuronx 2.7 never supported 3.12.
"""

from __future__ import annotations

from typing import Optional

from neurondoctor.facts.python_env import PythonEnvironment
from neurondoctor.neuron_version import normalize_neuron_version, release_tuple
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_ERROR, Finding
from neurondoctor.rules.fix import Command, Fix, command


def supported_pythons(ctx: RuleContext, release: str, name: str, version: Optional[str]) -> tuple[str, ...]:
    """The Python versions the release's entry for this package (this exact version, if given) lists."""
    wanted = normalize_neuron_version(version) if version else None
    for entry in ctx.catalog.entries(release, name):
        if wanted is None or entry.matches(wanted):
            return entry.python
    return ()


def rebuild_command(env: PythonEnvironment, release: str, python: str) -> Command:
    """A fresh, guarded venv of the release on a supported Python, beside this one. `pip install neuronx-cc
    torch-neuronx` into a bare venv would bring PyPI's CUDA torch (ND-TORCH-002); venv create installs the CPU
    torch and the release's exact pins."""
    return command("neurondoctor", "venv", "create", env.path.rstrip("/") + "-py" + python, "--release", release,
                   "--python", f"python{python}")


def closest_supported(python: str, supported: list[str]) -> str:
    """The next supported Python above this one (the smallest move), else the newest supported."""
    above = [version for version in supported if release_tuple(version) > release_tuple(python)]
    return above[0] if above else supported[-1]


def unsupported_python(ctx: RuleContext) -> list[Finding]:
    """ND-PY-001: Neuron packages of this release have no wheels for this Python X.Y."""
    findings = []
    for env in ctx.facts.environments:
        python = env.python_major_minor
        verdict = ctx.release_of(env)
        release = verdict.release
        if python is None or release is None:
            continue
        checked: list[tuple[str, Optional[str]]] = [
            (package.dist.name, package.dist.version) for package in verdict.packages if release in package.releases]
        if verdict.target is not None:
            checked.append(("neuronx-cc", None))
        refused: dict[str, tuple[str, ...]] = {}
        for name, version in checked:
            supported = supported_pythons(ctx, release, name, version)
            if supported and python not in supported:
                refused[name] = supported
        if not refused:
            continue
        wanted = sorted({version for versions in refused.values() for version in versions}, key=release_tuple)
        choice = closest_supported(python, wanted)
        findings.append(Finding(
            id="ND-PY-001",
            category="python-unsupported",
            severity=SEVERITY_ERROR,
            title=f"Python {python} is not supported by Neuron {release} "
                  f"({', '.join(sorted(refused))} support {', '.join(wanted)})",
            detail=("Neuron ships compiled wheels per Python version; on an unsupported Python, installs fail "
                    "or pull an older release, and native extensions fail to import."),
            evidence={"venv": env.path, "python": env.python_version, "release": release,
                      "supported": {name: list(versions) for name, versions in refused.items()}},
            fix=Fix([rebuild_command(env, release, choice)]),
        ))
    return findings


PATH_FALLBACK = "python3 on PATH"  # discovery's last resort: the OS's Python, not an environment made for Neuron


def release_pythons(ctx: RuleContext, release: str) -> list[str]:
    """The Pythons a venv for this release can be built on: neuronx-cc's wheels, narrowed to those some
    torch-neuronx of the release also has (2.32.0 carries 2.31's torch-neuronx)."""
    compiler = {python for entry in ctx.catalog.entries(release, "neuronx-cc") for python in entry.python}
    framework = {python for entry in ctx.catalog.entries(release, "torch-neuronx") for python in entry.python}
    both = compiler & framework if compiler and framework else compiler or framework
    return sorted(both, key=release_tuple)


def python_for_the_release(ctx: RuleContext) -> list[Finding]:
    """ND-PY-002: an environment without Neuron packages whose Python the host's release (or --release) has no
    wheels for: `pip install neuronx-cc torch-neuronx` there ends in `Could not find a version that satisfies`."""
    release = ctx.target_release or ctx.host_release().release
    if release is None:
        return []
    supported = release_pythons(ctx, release)
    findings = []
    for env in ctx.facts.environments:
        python = env.python_major_minor
        if (not supported or python is None or python in supported or ctx.neuron_env(env)
                or env.discovered_by == PATH_FALLBACK):
            continue
        choice = closest_supported(python, supported)
        findings.append(Finding(
            id="ND-PY-002", category="python-unsupported", severity=SEVERITY_ERROR,
            title=f"Python {python} cannot install Neuron {release}: its wheels are for {', '.join(supported)}",
            detail=("pip finds no neuronx-cc or torch-neuronx wheel for this interpreter (`Could not find a version "
                    "that satisfies the requirement`); build the environment on a supported Python."),
            evidence={"venv": env.path, "python": env.python_version, "release": release, "supported": supported},
            fix=Fix([rebuild_command(env, release, choice)]),
        ))
    return findings


RULE_SET = RuleSet(
    rules=(unsupported_python, python_for_the_release),
    findings=(FindingSpec("ND-PY-001", "python-unsupported", SEVERITY_ERROR,
                          "the interpreter's X.Y has no wheels in the environment's release"),
              FindingSpec("ND-PY-002", "python-unsupported", SEVERITY_ERROR,
                          "an environment without Neuron packages on a Python the release has no wheels for")),
)
