"""framework-pin-mismatch: framework packages from releases that do not go together, and known conflicts.

torch-neuronx, neuronx-cc, libneuronxla, transformers-neuronx, NxD and jax-neuronx are released together;
a loose pin that pulls libneuronxla from a newer release fails with `Unknown flags in XLA_FLAGS` (gh#1012).
Known bad neighbours (torch-neuron beside torch-neuronx, TensorFlow/JAX beside torch-xla) are listed in
`compat.json` with their sources.
"""

from __future__ import annotations

from neurondoctor.facts.python_env import PythonEnvironment
from neurondoctor.python_packaging import canonical_name, matches
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext, pin, pip_command
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Fix
from neurondoctor.rules.python_stack.release_detection import EnvironmentRelease, PackageReleases
from neurondoctor.rules.python_stack.torch_build import cpu_torch_command

CATEGORY = "framework-pin-mismatch"


def version_in_release(ctx: RuleContext, release: str, name: str, installed: str) -> str | None:
    """The version of `name` that `release` lists, preferring the installed line (libneuronxla 2.2 vs 3.0)."""
    entries = ctx.catalog.entries(release, name)
    if not entries:
        return None
    line = ".".join(installed.split(".")[:2])
    for entry in entries:
        if entry.version.startswith(line + "."):
            return entry.version
    return entries[0].version


def realign_command(ctx: RuleContext, env: PythonEnvironment, verdict: EnvironmentRelease,
                    package: PackageReleases) -> Fix:
    """`pip install 'name==version-of-the-agreed-release'`, or nothing when that release has no such package."""
    release = verdict.release
    if release is None:
        return Fix()
    wanted = version_in_release(ctx, release, package.dist.name, package.dist.version)
    if wanted is None:
        return Fix([pip_command(env, "uninstall", "-y", package.dist.display_name)])
    return Fix([pip_command(env, "install", pin(package.dist.display_name, wanted),
                            "--extra-index-url", ctx.catalog.pip_repository)])


def describe_releases(releases: tuple[str, ...] | list[str]) -> str:
    return ", ".join(releases[:3]) + (" …" if len(releases) > 3 else "")


def release_outliers(ctx: RuleContext) -> list[Finding]:
    """ND-PIN-001: a framework package from a release the environment's anchor package is not from."""
    framework = ctx.catalog.compat.get("framework_packages", {})
    findings = []
    for env in ctx.facts.environments:
        verdict = ctx.release_of(env)
        for package in verdict.outliers:
            props = framework.get(package.dist.name)
            if props is None:
                continue
            if verdict.target:
                against = f"the target release {verdict.target}"
            elif verdict.anchor:
                against = (f"the release of {verdict.anchor.dist.display_name} {verdict.anchor.dist.version} "
                           f"(Neuron {describe_releases(verdict.agreed)})")
            else:
                against = "the release of the environment"
            symptom = str(props.get("symptom", ""))
            findings.append(Finding(
                id="ND-PIN-001",
                category=CATEGORY,
                severity=str(props["severity"]),
                title=(f"{package.dist.display_name} {package.dist.version} is from Neuron "
                       f"{describe_releases(package.releases)}, not from {against}"),
                detail=("Neuron framework packages are released together and must be pinned to one release."
                        + (f" Symptom: {symptom}" if symptom else "") + f" ({props.get('source', '')})"),
                evidence={"venv": env.path, "package": package.dist.display_name,
                          "version": package.dist.version, "package_releases": list(package.releases),
                          "environment_releases": verdict.agreed},
                fix=realign_command(ctx, env, verdict, package),
            ))
    return findings


def known_conflicts(ctx: RuleContext) -> list[Finding]:
    """ND-PIN-002: packages known to break each other in one environment (compat.json `conflicts`)."""
    findings = []
    for env in ctx.facts.environments:
        dists = env.effective_distributions()
        for conflict in ctx.catalog.compat.get("conflicts", []):
            beside = [dists[name] for name in map(canonical_name, conflict["beside"]) if name in dists]
            present = [dists[name] for name in map(canonical_name, conflict["installed"]) if name in dists]
            if not beside or not present:
                continue
            removable = {canonical_name(name) for name in conflict["remove"]}
            to_remove = [dist.display_name for dist in present if dist.name in removable]
            findings.append(Finding(
                id="ND-PIN-002",
                category=CATEGORY,
                severity=SEVERITY_ERROR,
                title=(", ".join(f"{dist.display_name} {dist.version}" for dist in present) + " installed beside "
                       + ", ".join(dist.display_name for dist in beside)),
                detail=f"{conflict['why']} ({conflict.get('source', '')}). Keep them in separate environments.",
                evidence={"venv": env.path, "installed": [dist.display_name for dist in present],
                          "beside": [dist.display_name for dist in beside]},
                fix=Fix([pip_command(env, "uninstall", "-y", *to_remove)] if to_remove else []),
            ))
    return findings


def missing_framework_partners(ctx: RuleContext) -> list[Finding]:
    """ND-PIN-003: torch-neuronx without torch, or without torch-xla on the XLA path."""
    findings = []
    for env in ctx.facts.environments:
        stack = ctx.torch_stack(env)
        if stack.framework is None or stack.framework_torch is None:
            continue
        missing = []
        if stack.torch is None:
            missing.append("torch")
        if stack.stack == "xla" and stack.torch_xla is None:
            missing.append("torch-xla")
        if not missing:
            continue
        fix = ([cpu_torch_command(ctx, env, stack.framework_torch, replace=False)] if "torch" in missing else []) + (
            [pip_command(env, "install", pin("torch-xla", ctx.catalog.torch_xla_for(stack.framework_torch)))]
            if "torch-xla" in missing else [])
        findings.append(Finding(
            id="ND-PIN-003",
            category=CATEGORY,
            severity=SEVERITY_ERROR,
            title=f"{stack.framework.display_name} {stack.framework.version} is installed without "
                  + " and ".join(missing),
            detail=f"{stack.framework.display_name} needs torch {stack.framework_torch}"
                   + (" and the matching torch-xla" if stack.stack == "xla" else "")
                   + "; `import torch_neuronx` fails without them.",
            evidence={"venv": env.path, "missing": missing},
            fix=Fix(fix),
        ))
    return findings


def _at_pin(installed: str, pinned: str) -> bool:
    """Whether the installed version is the guard's pin, as pip reads `==PIN`: a TorchNeuron family pin
    (`2.14.3.0.*`) holds every build of the family; a local label on the pin (`+cpu`) is not asked of the
    installed version."""
    verdict = matches(installed, "==" + pinned.split("+")[0])
    return verdict if verdict is not None else installed.split("+")[0] == pinned.split("+")[0]


def guard_pins_moved(ctx: RuleContext) -> list[Finding]:
    """ND-PIN-004: a package of a neurondoctor-built environment no longer at the version its guard pins."""
    findings = []
    for env in ctx.facts.environments:
        if not env.guard_pins:
            continue
        dists = env.effective_distributions()
        moved = {name: (pinned, dists[name].version) for name, pinned in env.guard_pins.items()
                 if name in dists and not _at_pin(dists[name].version, pinned)}
        if not moved:
            continue
        findings.append(Finding(
            id="ND-PIN-004",
            category=CATEGORY,
            severity=SEVERITY_ERROR,
            title="pinned packages moved despite the guard: " + ", ".join(
                f"{name} {installed} (pinned {pinned})" for name, (pinned, installed) in sorted(moved.items())),
            detail="Something installed around the guard (`--no-deps`, `PIP_CONSTRAINT=`, or uv outside the "
                   "activated environment).",
            evidence={"venv": env.path, "moved": {name: list(pair) for name, pair in moved.items()}},
            fix=Fix([pip_command(env, "install", *[pin(name, pinned) for name, (pinned, _) in sorted(moved.items())])]),
        ))
    return findings


RULE_SET = RuleSet(
    rules=(release_outliers, known_conflicts, missing_framework_partners, guard_pins_moved),
    findings=(
        FindingSpec("ND-PIN-001", "framework-pin-mismatch", SEVERITY_ERROR,
                    "Neuron framework packages from releases that do not go together", also=(SEVERITY_WARNING,)),
        FindingSpec("ND-PIN-002", "framework-pin-mismatch", SEVERITY_ERROR,
                    "a known conflict (torch-neuron beside torch-neuronx, TensorFlow/JAX beside torch-xla, …)"),
        FindingSpec("ND-PIN-003", "framework-pin-mismatch", SEVERITY_ERROR, "torch-neuronx without torch or torch-xla"),
        FindingSpec("ND-PIN-004", "framework-pin-mismatch", SEVERITY_ERROR,
                    "a package of a neurondoctor-built environment moved off its guarded pin"),
    ),
)
