"""mixed-sdk-release and unknown-version: Neuron packages outside the environment's release, or in none.

Framework packages out of step are `framework-pin-mismatch` (python_stack/framework_pins.py); every other Neuron
package (nki, neuronx-cc-stubs, runtime-discovery, …) from another release is reported here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from neurondoctor.neuron_version import release_words
from neurondoctor.rules.check import Check, FindingSpec, RuleSet, no_environment
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_INFO, SEVERITY_WARNING, Finding
from neurondoctor.rules.host_stack import instance, package_fixes, runtime
from neurondoctor.rules.python_stack import end_of_support, image_family, partial_release, support_ranges
from neurondoctor.rules.python_stack.framework_pins import describe_releases, realign_command
from neurondoctor.rules.python_stack.package_index import placeholder_words
from neurondoctor.rules.python_stack.partial_release import MANIFESTS_UPDATE

if TYPE_CHECKING:  # made only for a version the data does not list (catalog.neighbours)
    from neurondoctor.release_data.neighbours import Neighbours


def mixed_release_packages(ctx: RuleContext) -> list[Finding]:
    """ND-REL-001: a non-framework Neuron package from another release than the environment's."""
    framework = ctx.catalog.compat.get("framework_packages", {})
    findings = []
    for env in ctx.facts.environments:
        verdict = ctx.release_of(env)
        for package in verdict.outliers:
            if package.dist.name in framework:
                continue
            findings.append(Finding(
                id="ND-REL-001",
                category="mixed-sdk-release",
                severity=SEVERITY_WARNING,
                title=(f"{package.dist.display_name} {package.dist.version} is from Neuron "
                       f"{describe_releases(package.releases)}; the environment is on {verdict.describe()}"),
                detail="Components from different SDK releases are not tested together.",
                evidence={"venv": env.path, "package": package.dist.display_name, "version": package.dist.version,
                          "package_releases": list(package.releases), "environment_releases": verdict.agreed},
                fix=realign_command(ctx, env, verdict, package),
            ))
    return findings


def _neighbour_text(neighbours: Neighbours) -> str:
    parts = []
    if neighbours.lower:
        parts.append(f"older: {neighbours.lower[0]} (Neuron {describe_releases(neighbours.lower[1])})")
    if neighbours.higher:
        parts.append(f"newer: {neighbours.higher[0]} (Neuron {describe_releases(neighbours.higher[1])})")
    return "; ".join(parts) or "no known version of this package"


def unknown_versions(ctx: RuleContext) -> list[Finding]:
    """ND-REL-002: a Neuron package version found in no release manifest, with its nearest neighbours (one above
    every known version is ND-REL-005's)."""
    findings = []
    for env in ctx.facts.environments:
        release = ctx.release_of(env).release
        for package in ctx.release_of(env).unknown:
            if ctx.catalog.newer_than_known(package.dist.name, package.dist.version) or (
                    release and ctx.catalog.not_known_in(release, package.dist.name)):  # ND-REL-006's
                continue
            neighbours = ctx.catalog.neighbours(package.dist.name, package.dist.version)
            findings.append(Finding(
                id="ND-REL-002",
                category="unknown-version",
                severity=SEVERITY_WARNING,
                title=f"{package.dist.display_name} {package.dist.version} is in no known Neuron release",
                detail=(f"Nearest known versions: {_neighbour_text(neighbours)}. Either the release data is "
                        f"older than this package (newest known: {ctx.catalog.latest}) or the package came "
                        "from a pre-release or private build."),
                evidence={"venv": env.path, "package": package.dist.display_name, "version": package.dist.version,
                          "nearest_lower": neighbours.lower[0] if neighbours.lower else None,
                          "nearest_higher": neighbours.higher[0] if neighbours.higher else None},
                fix=MANIFESTS_UPDATE,
            ))
    return findings


def newer_than_the_data(ctx: RuleContext) -> list[Finding]:
    """ND-REL-005: components newer than every version the release data lists. A release after the data (a 2.34
    host while the data ends at 2.33) is not a wall of unknown-version warnings: one note, and the rules that judge
    from the versions themselves (torch X.Y against torch-neuronx X.Y) still do."""
    host = ctx.host_release()
    reported = partial_release.taken(ctx)  # components of a release the data knows in part: ND-REL-006 names them
    newer = [f"{name} {host.versions[name]}" for name in host.unknown
             if ctx.catalog.newer_than_known(name, host.versions[name])
             and f"{name} {host.versions[name]} (host)" not in reported]
    for env in ctx.facts.environments:
        newer += [f"{package.dist.display_name} {package.dist.version} ({env.path})"
                  for package in ctx.release_of(env).unknown
                  if ctx.catalog.newer_than_known(package.dist.name, package.dist.version)
                  and f"{package.dist.display_name} {package.dist.version} ({env.path})" not in reported]
    if not newer:
        return []
    return [Finding(
        id="ND-REL-005", category="unknown-version", severity=SEVERITY_INFO,
        title=f"this host runs Neuron components newer than neurondoctor's data ({ctx.catalog.latest}): "
              + ", ".join(newer[:4]) + (f" (+{len(newer) - 4})" if len(newer) > 4 else ""),
        detail=("They are most likely from a release after the data; which release they belong to, and the "
                "pairings only the release data knows, are not judged until the data has it."),
        evidence={"components": newer, "data_release": ctx.catalog.latest},
        fix=MANIFESTS_UPDATE,
    )]


def release_summary(ctx: RuleContext) -> str:
    envs = ctx.facts.environments
    if not envs:  # the host's packages were still judged (ND-REL-003, ND-INST-*)
        host = ctx.host_release().release
        return (f"host on Neuron {host}; " if host else "") + no_environment(ctx)
    named = sorted({release_words(ctx.release_of(env).agreed) for env in envs
                    if ctx.release_of(env).release and ctx.release_of(env).packages})  # --release alone names none
    if not named:
        placeholders = {dist.display_name: dist.version for env in envs
                        for dist in env.effective_distributions().values() if dist.placeholder}
        return "no Neuron packages installed" + (
            f", but {placeholder_words(placeholders)}" if placeholders else "")
    framework = ctx.catalog.compat.get("framework_packages", {})
    outliers = sorted({(package.dist.display_name, "ND-PIN-001" if package.dist.name in framework else "ND-REL-001")
                       for env in envs for package in ctx.release_of(env).outliers})
    if outliers:  # reported by their own findings: never "every package is in that release" beside them
        return (f"Neuron {', '.join(named)} except " + ", ".join(f"{name} (see {finding_id})"
                                                                for name, finding_id in outliers)
                + f" (newest known: {ctx.catalog.latest})")
    partial = sorted({ctx.release_of(env).release or "" for env in envs} & set(ctx.catalog.partial))
    if partial:  # what it lists agrees, the rest is not known: never "every package is in that release"
        return (f"Neuron {', '.join(named)}; {', '.join(partial)} is known only in part (see ND-REL-006; "
                f"newest known whole: {ctx.catalog.whole_latest})")
    return (f"Neuron {', '.join(named)}; every package is in that release "
            f"(newest known: {ctx.catalog.latest})")


RULE_SET = RuleSet(
    rules=(mixed_release_packages, unknown_versions, newer_than_the_data),
    findings=(
        FindingSpec("ND-REL-001", "mixed-sdk-release", SEVERITY_WARNING,
                    "a Neuron package from a different release than the rest"),
        FindingSpec("ND-REL-002", "unknown-version", SEVERITY_WARNING,
                    "a Neuron version in no known release, with its nearest known neighbours"),
        FindingSpec("ND-REL-005", "unknown-version", SEVERITY_INFO,
                    "info: components newer than every version the release data lists (run manifests update)"),
    ),
)
CHECK = Check("neuron-release", "Neuron release",
              (RULE_SET, partial_release.RULE_SET, runtime.HOST_RELEASE_RULE_SET, package_fixes.RULE_SET,
               instance.RULE_SET, end_of_support.RULE_SET, support_ranges.RULE_SET, image_family.RULE_SET),
              release_summary,
              needs=("packages", "environments"))
