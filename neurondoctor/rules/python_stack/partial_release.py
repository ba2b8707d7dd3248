"""A release the data knows only in part: judged on what it lists, and one line on what could not be judged.

AWS publishes a release's pieces before its package list (2.34.0: the TorchNeuron families and the announcements,
weeks before the n2-manifest at its tag). The hand-kept file of such a release says what is not known
(release_data/hand_kept.py `not_known`); an environment one of its listed packages places in it is that release, its
other Neuron packages are not outliers (release_detection.py), and a component newer than every version the data
lists, whose release is known in part, is most likely of that release. Neither is a wall of "unknown version"
warnings, nor a bare "newer than the data": one info per release that names what was not judged and where the whole
list will be (`neurondoctor manifests update` fetches AWS's manifest).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_INFO, Finding
from neurondoctor.rules.fix import Fix, command

MANIFESTS_UPDATE = Fix([command("neurondoctor", "manifests", "update")])
SHOWN = 4  # components named in the title; the evidence holds them all


@dataclass
class Unjudged:
    """What one release known in part leaves unjudged on this host."""

    release: str
    environments: dict[str, list[str]] = field(default_factory=dict)  # path -> the packages that placed it there
    components: list[str] = field(default_factory=list)  # `name version (where)`


def unjudged_by_release(ctx: RuleContext) -> dict[str, Unjudged]:
    """Per release known in part: the environments placed in it, and the host's and environments' components whose
    version in it the data does not know."""
    catalog = ctx.catalog
    found: dict[str, Unjudged] = {}
    host = ctx.host_release()
    target = ctx.target_release if ctx.target_release in catalog.partial else None
    for name, version in host.versions.items():
        if target and catalog.not_known_in(target, name):  # --release names a release known in part
            release: str | None = target
        elif name in host.unknown and catalog.newer_than_known(name, version):
            release = catalog.partial_newer_than(name)
        else:
            release = None
        if release:
            found.setdefault(release, Unjudged(release)).components.append(f"{name} {version} (host)")
    for env in ctx.facts.environments:
        verdict = ctx.release_of(env)
        release = verdict.release
        on_partial = release in catalog.partial  # detected, or named with --release
        if on_partial and release is not None:
            placed = [f"{package.dist.display_name} {package.dist.version}" for package in verdict.packages
                      if release in package.releases]
            found.setdefault(release, Unjudged(release)).environments[env.path] = placed
        for package in verdict.packages:
            name, version = package.dist.name, package.dist.version
            where = f"{package.dist.display_name} {version} ({env.path})"
            if on_partial and release is not None and catalog.not_known_in(release, name) \
                    and release not in package.releases:
                found[release].components.append(where)
            elif not package.releases and catalog.newer_than_known(name, version):
                newer = catalog.partial_newer_than(name)
                if newer:
                    found.setdefault(newer, Unjudged(newer)).components.append(where)
    return found


def taken(ctx: RuleContext) -> set[str]:
    """The components this rule reports (`name version (where)`), which the unknown-version rules leave to it."""
    return {component for item in unjudged_by_release(ctx).values() for component in item.components}


def partial_release_line(ctx: RuleContext) -> list[Finding]:
    """ND-REL-006: a host or environment of a release the data knows only in part."""
    findings = []
    for release, item in sorted(unjudged_by_release(ctx).items()):
        partial = ctx.catalog.partial[release]
        listed = sorted({entry.version for entry in ctx.catalog.releases.get(release, ())})
        not_judged = item.components[:SHOWN] + ([f"+{len(item.components) - SHOWN} more"]
                                                if len(item.components) > SHOWN else [])
        facts = list(partial.facts) if item.environments else []
        placed_in = "".join(f"; {path} is judged as {release} on {', '.join(packages)}"
                            for path, packages in sorted(item.environments.items()))
        title = (f"Neuron {release} is known only in part{placed_in}; not judged: "
                 + "; ".join(part for part in (", ".join(not_judged), "; ".join(facts)) if part))
        findings.append(Finding(
            id="ND-REL-006", category="unknown-version", severity=SEVERITY_INFO, title=title,
            detail=(f"The data holds what AWS has published of Neuron {release} ({', '.join(listed) or 'no package'}"
                    f"; {partial.source}), not its package list: the versions it ships of "
                    f"{', '.join(sorted(partial.packages))} are not known, so the pairings that need them are not "
                    "judged (never guessed). "
                    f"The whole list: {partial.complete_source} (`neurondoctor manifests update` fetches it)."),
            evidence={"release": release, "environments": item.environments, "not_judged": item.components,
                      "not_known_packages": sorted(partial.packages), "not_known_facts": list(partial.facts),
                      "complete_source": partial.complete_source},
            fix=MANIFESTS_UPDATE,
        ))
    return findings


RULE_SET = RuleSet(
    rules=(partial_release_line,),
    findings=(
        FindingSpec("ND-REL-006", "unknown-version", SEVERITY_INFO,
                    "info: a release the data knows only in part: judged on what it lists, and what was not judged"),
    ),
)
