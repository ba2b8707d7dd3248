"""framework-pin-mismatch from Requires-Dist: what `pip check` sees, judged as a Neuron user needs it.

Every installed distribution's requirements are evaluated with their markers, as `pip check` evaluates them
(`packaging`, pip's own library; a test holds the two to the same answers marker by marker). An unmet
requirement of a Neuron package, of a Neuron add-on (compat.json `neuron_addons`) or, in a Neuron environment, of
what the framework pins, is an error: a declared requirement is a documented one (docs/contracts.md §6). The rest
of the environment's unmet requirements come as one info finding.

pip records no extras, so `pip check` never judges an extra's pins and nothing says an extra was asked for. The
pins of an extra that pulls an installed Neuron package (optimum-neuron's `[neuronx]` pins torch-neuronx,
neuronx-cc, libneuronxla, torch and torchvision: optimum-neuron 0.4.x METADATA on PyPI) are evidence of the
Neuron release the add-on targets: an unmet one is an info naming that release, never an error. Other extras are
not judged. What a package needs and does not declare is data with its source (compat.json
`undeclared_requirements`). Pairs the pin rules judge against the release data (torch-neuronx → torch) are left to
them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional

from neurondoctor.facts.python_env import Distribution, PythonEnvironment
from neurondoctor.neuron_version import normalize_neuron_version
from neurondoctor.python_packaging import (
    Requirement,
    marker_applies,
    marker_extras,
    marker_variables,
    matches,
    parse_requirement,
)
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext, pip_command
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_INFO, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Fix

FRAMEWORK_IMPORTS = frozenset({"torch", "torch-xla", "torch-neuronx", "libneuronxla", "neuronx-cc",
                               "libtorch-neuronx-lite"})
# What the Neuron framework pins or brings: their requirements matter in a Neuron environment.
PINNED_BESIDE = frozenset({"torch", "torch-xla", "torchvision", "torchaudio", "transformers", "accelerate",
                           "optimum", "numpy"})
BUILD_TOOLING = frozenset({"wheel", "setuptools", "pip"})
INFO_LISTED = 12


@dataclass(frozen=True)
class Unmet:
    """A requirement of an installed distribution that the environment does not meet."""

    dist: Distribution
    requirement: Requirement
    installed: Optional[str]  # None: not installed
    extra: Optional[str] = None  # the extra it belongs to; None: a requirement of the distribution itself

    def described(self) -> str:
        found = f"has {self.installed}" if self.installed else "is not installed"
        return f"{self.dist.display_name} {self.dist.version} requires {self.requirement.shown()}; " \
               f"{self.requirement.display_name} {found}"


def _neuron_extras(requirements: list[Requirement], installed: dict[str, Distribution], neuron: frozenset[str],
                   python: Optional[str], machine: Optional[str]) -> set[str]:
    """Extras of this distribution that pull an installed Neuron package: those are in use."""
    extras = set()
    for requirement in requirements:
        if requirement.name not in neuron or requirement.name not in installed:
            continue
        for candidate in marker_extras(requirement.marker):
            if marker_applies(requirement.marker, marker_variables(python, machine, candidate)):
                extras.add(candidate)
    return extras


def unmet_requirements(ctx: RuleContext, env: PythonEnvironment) -> list[Unmet]:
    installed = env.effective_distributions()
    neuron = ctx.catalog.neuron_pip_packages()
    python, machine = env.python_version, ctx.facts.host.snapshot.machine
    base = marker_variables(python, machine, "")
    unmet = []
    for dist in installed.values():
        requirements = [parsed for parsed in (parse_requirement(text) for text in dist.requires) if parsed]
        in_use = [(extra, marker_variables(python, machine, extra))
                  for extra in sorted(_neuron_extras(requirements, installed, neuron, python, machine))]
        for requirement in requirements:
            extra = None
            if not marker_applies(requirement.marker, base):
                extra = next((name for name, variables in in_use if marker_applies(requirement.marker, variables)),
                             None)
                if extra is None:
                    continue
            if requirement.name == dist.name:
                continue
            target = installed.get(requirement.name)
            if target is None:
                if requirement.name not in BUILD_TOOLING:
                    unmet.append(Unmet(dist, requirement, None, extra))
                continue
            if requirement.url is None and matches(target.version, requirement.specifier) is False:
                unmet.append(Unmet(dist, requirement, target.version, extra))
    return unmet


def _pin_rules_judge(ctx: RuleContext, item: Unmet) -> bool:
    """torch-neuronx → torch, libneuronxla → neuronx-cc …: the pin rules judge these against the release data;
    torchvision/torchaudio → torch is torch_companions.py's (its fix moves the companion, not the pinned torch)."""
    framework = ctx.catalog.compat.get("framework_packages", {})
    if item.dist.name in ("torchvision", "torchaudio") and item.requirement.name == "torch":
        return True
    return (item.dist.name in framework or item.dist.name == "torch-xla") and item.requirement.name in (
        FRAMEWORK_IMPORTS)


def _neuron_side(ctx: RuleContext, env: PythonEnvironment, dist: Distribution) -> bool:
    addons = ctx.catalog.compat.get("neuron_addons", {})
    return (dist.name in ctx.catalog.neuron_pip_packages() or dist.name in addons
            or (dist.name in PINNED_BESIDE and ctx.neuron_env(env)))


def reported_unmet(ctx: RuleContext, env: PythonEnvironment) -> frozenset[str]:
    """The packages ND-REQ-001 reports a declared requirement on: a published range of the same package is then
    the same fact, and ND-REQ-001 alone says it."""
    return frozenset(item.requirement.name for item in unmet_requirements(ctx, env)
                     if item.extra is None and not _pin_rules_judge(ctx, item) and _neuron_side(ctx, env, item.dist))


def _install(ctx: RuleContext, env: PythonEnvironment, items: list[Unmet], neuron_index: bool = False) -> Fix:
    specs = [item.requirement.shown() for item in items]
    index = neuron_index or any(item.requirement.name in ctx.catalog.neuron_pip_packages() for item in items)
    return Fix([pip_command(env, "install", *specs,
                            *(["--extra-index-url", ctx.catalog.pip_repository] if index else []))])


def requirement_mismatches(ctx: RuleContext) -> list[Finding]:
    """ND-REQ-001: an unmet requirement on the Neuron side; ND-REQ-002: the environment's other unmet ones."""
    findings = []
    for env in ctx.facts.environments:
        rest = []
        through_extras: dict[tuple[str, str], list[Unmet]] = {}
        for item in unmet_requirements(ctx, env):
            if _pin_rules_judge(ctx, item):
                continue
            if item.extra is not None:
                through_extras.setdefault((item.dist.name, item.extra), []).append(item)
                continue
            if not _neuron_side(ctx, env, item.dist):
                rest.append(item)
                continue
            findings.append(Finding(
                id="ND-REQ-001", category="framework-pin-mismatch", severity=SEVERITY_ERROR,
                title=item.described(),
                detail=("pip installs what one command asks for and only warns about what that breaks; "
                        f"{item.dist.display_name} was built and tested against {item.requirement.shown()}."),
                evidence={"venv": env.path, "package": item.dist.display_name, "version": item.dist.version,
                          "requirement": item.requirement.text, "installed": item.installed},
                fix=_install(ctx, env, [item])))
        if rest:
            listed = [item.described() for item in rest[:INFO_LISTED]]
            more = f" (and {len(rest) - INFO_LISTED} more)" if len(rest) > INFO_LISTED else ""
            findings.append(Finding(
                id="ND-REQ-002", category="framework-pin-mismatch", severity=SEVERITY_INFO,
                title=f"{len(rest)} other unmet requirement(s) in {env.path}",
                detail="; ".join(listed) + more + ". They do not touch the Neuron stack; `pip check` lists the same.",
                evidence={"venv": env.path, "unmet": [item.described() for item in rest]},
                fix=_install(ctx, env, rest)))
        findings += [_extra_pins_finding(ctx, env, items) for items in through_extras.values()]
    return findings


def extra_release(ctx: RuleContext, dist: Distribution, extra: str) -> Optional[str]:
    """The Neuron release whose torch-neuronx the add-on's extra pins (optimum-neuron 0.4.5 → 2.26.1)."""
    for text in dist.requires:
        requirement = parse_requirement(text)
        if (requirement and requirement.name == "torch-neuronx" and extra in marker_extras(requirement.marker)
                and requirement.specifier.startswith("==")):
            releases = ctx.catalog.releases_with("torch-neuronx", normalize_neuron_version(requirement.specifier[2:]))
            return releases[0] if releases else None
    return None


def _extra_pins_finding(ctx: RuleContext, env: PythonEnvironment, items: list[Unmet]) -> Finding:
    """ND-REQ-004: pins of an extra (`optimum-neuron[neuronx]`) that the environment does not meet. pip records no
    extras, so `pip check` never judges them, and nothing says the extra was asked for: they are evidence of the
    Neuron release the add-on targets, an info, never an error."""
    dist, extra = items[0].dist, str(items[0].extra)
    release = extra_release(ctx, dist, extra)
    targets = f" targets Neuron {release}" if release else " pins its own versions"
    return Finding(
        id="ND-REQ-004", category="framework-pin-mismatch", severity=SEVERITY_INFO,
        title=f"{dist.display_name} {dist.version}'s [{extra}] extra{targets}; {len(items)} of its pins differ here",
        detail=("; ".join(item.described() for item in items) + f". pip does not record which extras were asked "
                f"for, so `pip check` does not judge these; installing {dist.display_name}[{extra}]=={dist.version} "
                "would bring the extra's versions back."),
        evidence={"venv": env.path, "package": dist.display_name, "version": dist.version, "extra": extra,
                  "extra_release": release, "unmet": [item.described() for item in items]})


def _entry_applies(entry: Mapping[str, object], installed: Mapping[str, Distribution]) -> Optional[Distribution]:
    """The installed package an entry speaks of, when its versions and its `beside` package are there too."""
    dist = installed.get(str(entry.get("package", "")))
    if dist is None or matches(dist.version, str(entry.get("versions", ""))) is not True:
        return None
    beside = entry.get("beside")
    return dist if beside is None or str(beside) in installed else None


def undeclared_requirements(ctx: RuleContext) -> list[Finding]:
    """ND-REQ-003: what a package needs and its metadata does not declare (compat.json `undeclared_requirements`,
    each entry with its source): `pip check` cannot see it, the import fails. Documented (release notes, AWS's
    answer) is an error; reported (a maintainer's tested combination) a warning (docs/contracts.md §6).
    An entry may hold only `beside` another package (torch-neuron's TensorFlow comes with its compiler, neuron-cc),
    and may judge only a version that is installed (`judged: when-installed`: a serving image without TensorFlow
    runs precompiled models); `index: neuron` when the right version is on the Neuron repository only."""
    findings = []
    for env in ctx.facts.environments:
        installed = env.effective_distributions()
        for entry in ctx.catalog.compat.get("undeclared_requirements", []):
            dist = _entry_applies(entry, installed)
            requirement = parse_requirement(str(entry.get("requires", "")))
            if dist is None or requirement is None:
                continue
            target = installed.get(requirement.name)
            if target is None and entry.get("judged") == "when-installed":
                continue
            if target is not None and matches(target.version, requirement.specifier) is not False:
                continue
            found = f"has {target.version}" if target else "is not installed"
            beside = f" beside {entry['beside']}" if entry.get("beside") else ""
            findings.append(Finding(
                id="ND-REQ-003", category="framework-pin-mismatch",
                severity=SEVERITY_ERROR if entry.get("basis") == "documented" else SEVERITY_WARNING,
                title=(f"{dist.display_name} {dist.version}{beside} needs {requirement.shown()}, which its metadata "
                       f"does not declare; {requirement.display_name} {found}"),
                detail=f"{entry.get('symptom', '')} ({entry.get('source', '')}).",
                evidence={"venv": env.path, "package": dist.display_name, "version": dist.version,
                          "requirement": requirement.text, "installed": target.version if target else None,
                          "basis": entry.get("basis")},
                fix=_install(ctx, env, [Unmet(dist, requirement, target.version if target else None)],
                             neuron_index=entry.get("index") == "neuron")))
    return findings


RULE_SET = RuleSet(
    rules=(requirement_mismatches, undeclared_requirements),
    findings=(
        FindingSpec("ND-REQ-001", "framework-pin-mismatch", SEVERITY_ERROR,
                    "a requirement of a Neuron package, add-on or what it pins, unmet in the environment"),
        FindingSpec("ND-REQ-002", "framework-pin-mismatch", SEVERITY_INFO,
                    "the environment's other unmet requirements (what `pip check` would list)"),
        FindingSpec("ND-REQ-003", "framework-pin-mismatch", SEVERITY_ERROR,
                    "a documented requirement the package's metadata does not declare (a warning when only "
                    "reported)", also=(SEVERITY_WARNING,)),
        FindingSpec("ND-REQ-004", "framework-pin-mismatch", SEVERITY_INFO,
                    "an add-on's extra (optimum-neuron[neuronx]) pins versions this environment does not have: "
                    "evidence of the Neuron release it targets"),
    ),
)
