"""AWS's published support rules (manifests/support-ranges.json), judged on the environments they apply to.

A release's notes publish which versions of a framework or library it supports beside a Neuron package (JAX 0.10.0
to 0.11.2 beside jax-neuronx in 2.34) and which instance families a package line runs on (vLLM Neuron: Trn2 and
Trn3). An installed version outside its range is ND-SUP-001, a line on a family it does not run on ND-SUP-002.

One place decides the severity of both, the entry's `outside`: what the page documents as not working is an error,
what it documents as unsupported (untested, no longer supported) a warning (docs/contracts.md §6). A pair another
finding already judges is left to it: an unmet Requires-Dist on the same package (ND-REQ-001), a package the release
data lists for other families only (ND-INST-001), versions under a range that an end-of-support announcement covers
(ND-EOS-001). What the pages do not publish is in the file's `not_published` list, and no rule guesses it.

The release judged against is the one the end-of-support rule uses (`--release`, the host's, the environment's); a
host whose packages are newer than the data is on a release the data does not know, whose rules are not judged.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Optional

from neurondoctor.facts.python_env import Distribution, PythonEnvironment
from neurondoctor.neuron_version import normalize_neuron_version, release_tuple
from neurondoctor.python_packaging import below_range, matches, newest_admitted
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext, pip_command
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_INFO, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Fix, Note, Step
from neurondoctor.rules.python_stack.end_of_support import release_in_effect
from neurondoctor.rules.python_stack.requirements import reported_unmet


def severity_of(entry: Mapping[str, Any]) -> str:
    """The one place a published rule's severity is decided: documented as not working is an error, documented as
    unsupported a warning."""
    return SEVERITY_ERROR if entry.get("outside") == "fails" else SEVERITY_WARNING


def _entries(ctx: RuleContext, key: str) -> Iterator[dict[str, Any]]:
    yield from (entry for entry in ctx.catalog.support_ranges.get(key, []) if isinstance(entry, dict))


def in_span(release: str, entry: Mapping[str, Any]) -> bool:
    """The entry speaks for this release: from its first release through its last (an open span has no last)."""
    span = entry.get("releases") or {}
    last = span.get("to")
    return release_tuple(str(span.get("from"))) <= release_tuple(release) and (
        last is None or release_tuple(release) <= release_tuple(str(last)))


def judged_release(ctx: RuleContext, env: PythonEnvironment) -> Optional[str]:
    """The release whose rules apply to this environment; None for a host newer than the data (ND-REL-005 says its
    release is not known) or an environment of no known release."""
    release, newer = release_in_effect(ctx, env)
    return None if newer else release


def _holds(dists: Mapping[str, Distribution], wanted: Mapping[str, str]) -> bool:
    """Every package the entry is beside is installed, at a version its specifier admits."""
    return all((dist := dists.get(name)) is not None and not dist.placeholder
               and matches(dist.version, specifier) is True for name, specifier in wanted.items())


def _ended_below(ctx: RuleContext, entry: Mapping[str, Any], dist: Distribution) -> bool:
    """A version under the range that the named end-of-support announcement covers: ND-EOS-001 judges it."""
    named = entry.get("below_covered_by")
    if not named or below_range(dist.version, str(entry["supported"])) is not True:
        return False
    ended = [item for item in ctx.catalog.end_of_support.get("announcements", [])
             if isinstance(item, dict) and item.get("id") == named]
    return any(matches(dist.version, str(item.get("packages", {}).get(dist.name, ""))) is True for item in ended)


def _range_fix(env: PythonEnvironment, entry: Mapping[str, Any]) -> Fix:
    """`pip install 'jax==0.11.2'`: the newest version the page names, else the range itself."""
    top = newest_admitted(str(entry["supported"]))
    words = f"{entry['package']}=={top}" if top else f"{entry['package']}{entry['supported']}"
    return Fix([pip_command(env, "install", words)])


def _range_finding(env: PythonEnvironment, entry: Mapping[str, Any], dist: Distribution, release: str) -> Finding:
    beside = ", ".join(sorted(entry["beside"]))
    supported = str(entry["supported"])
    note = f" {entry['note']}" if entry.get("note") else ""
    return Finding(
        id="ND-SUP-001", category="framework-pin-mismatch", severity=severity_of(entry),
        title=(f"{env.path}: {dist.display_name} {dist.version} is outside the versions Neuron {release} supports "
               f"beside {beside} ({entry['package']}{supported})"),
        detail=(("AWS documents this combination as not working" if severity_of(entry) == SEVERITY_ERROR else
                 "AWS does not test or support this combination; it may run, but problems are not fixed")
                + f" ({entry['source']}).{note}"),
        evidence={"venv": env.path, "package": dist.display_name, "version": dist.version, "supported": supported,
                  "beside": dict(entry["beside"]), "release": release, "rule": entry["id"]},
        fix=_range_fix(env, entry),
        docs=[str(entry["source"])],
    )


_Installed = tuple[PythonEnvironment, str, dict[str, Distribution], Mapping[str, Any], Distribution]


def _installed_entries(ctx: RuleContext, kind: str) -> Iterator[_Installed]:
    """(environment, its judged release, its distributions, entry, the entry's installed package) for each entry of
    `kind` whose package an environment holds, inside the entry's span of releases, and that no other finding
    covers."""
    for env in ctx.facts.environments:
        release = judged_release(ctx, env)
        if release is None:
            continue
        dists = env.effective_distributions()
        for entry in _entries(ctx, kind):
            dist = dists.get(str(entry["package"]))
            if not entry.get("covered_by") and dist is not None and not dist.placeholder and in_span(release, entry):
                yield env, release, dists, entry, dist


def outside_published_ranges(ctx: RuleContext) -> list[Finding]:
    """ND-SUP-001: a framework or library version outside the range the environment's release publishes."""
    findings = []
    reported: dict[int, frozenset[str]] = {}
    for env, release, dists, entry, dist in _installed_entries(ctx, "ranges"):
        if (not _holds(dists, entry["beside"]) or matches(dist.version, str(entry["supported"])) is not False
                or _ended_below(ctx, entry, dist)):
            continue
        if id(env) not in reported:
            reported[id(env)] = reported_unmet(ctx, env)
        if dist.name not in reported[id(env)]:
            findings.append(_range_finding(env, entry, dist, release))
    return findings


def _listed_elsewhere(ctx: RuleContext, dist: Distribution, family: str) -> bool:
    """The release data lists this version for other families only: ND-INST-001 judges it."""
    version = normalize_neuron_version(dist.version)
    listed = {instance for release in ctx.catalog.releases_with(dist.name, version)
              for entry in ctx.catalog.entries(release, dist.name) if entry.matches(version)
              for instance in entry.instances}
    return bool(listed) and family not in listed


def _instance_fix(env: PythonEnvironment, entry: Mapping[str, Any], dist: Distribution) -> Fix:
    """What cannot run here is removed (as ND-INST-001 removes it); the page's way forward follows as advice."""
    steps: list[Step] = []
    if severity_of(entry) == SEVERITY_ERROR:
        steps.append(pip_command(env, "uninstall", "-y", dist.display_name))
    way = entry.get("way_forward")
    if way:
        steps.append(Note("the way forward: {} ({})", (str(way), str(entry["source"]))))
    elif not steps:
        steps.append(Note("the supported families and the way forward: {}", (str(entry["source"]),)))
    return Fix(steps)


def _family_severity(entry: Mapping[str, Any], env: PythonEnvironment) -> str:
    """Not running here is an error wherever it is found. No longer supported here is a warning for the environment
    the user named, and an info for one the doctor found: an image ships its environments for every family (the
    multi-framework DLAMI's `aws_neuronx_venv_pytorch_*_nxd_inference` is on a trn1 as on a trn2), and one nobody
    named may not be the one in use: unsupported is not broken."""
    if severity_of(entry) == SEVERITY_ERROR:
        return SEVERITY_ERROR
    return SEVERITY_WARNING if env.discovered_by == "argument" else SEVERITY_INFO


def wrong_family_lines(ctx: RuleContext) -> list[Finding]:
    """ND-SUP-002: a package line on an instance family its pages say it does not run on, or no longer supports."""
    family = ctx.facts.host.instance_family
    if family is None:
        return []
    findings = []
    for env, release, _, entry, dist in _installed_entries(ctx, "instances"):
        if (family in entry["instances"] or matches(dist.version, str(entry["versions"])) is not True
                or _listed_elsewhere(ctx, dist, family)):
            continue
        families = ", ".join(entry["instances"])
        broken = severity_of(entry) == SEVERITY_ERROR
        findings.append(Finding(
            id="ND-SUP-002", category="instance-unsupported", severity=_family_severity(entry, env),
            title=(f"{env.path}: {dist.display_name} {dist.version} "
                   + ("runs on " if broken else f"is supported from Neuron {entry['releases']['from']} on ")
                   + f"{families} only, not on this {ctx.facts.host.instance_type}"),
            detail=(("AWS documents it as not running here" if broken else
                     "AWS no longer supports it here; it may still run, but problems are not fixed")
                    + f" ({entry['source']})." + (f" {entry['note']}" if entry.get("note") else "")),
            evidence={"venv": env.path, "package": dist.display_name, "version": dist.version,
                      "instances": list(entry["instances"]), "instance_type": ctx.facts.host.instance_type,
                      "release": release, "rule": entry["id"]},
            fix=_instance_fix(env, entry, dist),
            docs=[str(entry["source"])],
        ))
    return findings


RULE_SET = RuleSet(
    rules=(outside_published_ranges, wrong_family_lines),
    findings=(
        FindingSpec("ND-SUP-001", "framework-pin-mismatch", SEVERITY_WARNING,
                    "a framework or library version outside the range the environment's Neuron release publishes "
                    "(an error where AWS documents it as not working)", also=(SEVERITY_ERROR,)),
        FindingSpec("ND-SUP-002", "instance-unsupported", SEVERITY_WARNING,
                    "a package line on an instance family AWS's pages say it is not supported on (an error where "
                    "they say it does not run there; an info for an environment the doctor found rather than one "
                    "named)", also=(SEVERITY_ERROR, SEVERITY_INFO)),
    ),
)
