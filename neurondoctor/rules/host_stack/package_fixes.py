"""known-bug: a host package version whose bug a later version fixes, as AWS's release notes say (news, an info).

The bugs are data (manifests/package-fixes.json, each with its release-notes page): runtime-lib 2.35.33.0 (Neuron
2.33.1) fixes a DMA race of 2.35.30.0 that can hang the chip. A host on an affected version is told what the bug does
and what a user sees, with the upgrade to the fixing release's host packages (runtime, collectives and tools together,
and the driver when the installed one is older: one release, never a runtime alone beside the rest).
"""

from __future__ import annotations

from typing import Any

from neurondoctor.neuron_version import normalize_neuron_version
from neurondoctor.python_packaging import matches
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_INFO, Finding
from neurondoctor.rules.fix import Fix, note
from neurondoctor.rules.host_stack.runtime import host_upgrade_commands

CATEGORY = "known-bug"


def _affected(ctx: RuleContext, fix: dict[str, Any]) -> str:
    """The installed version of the fix's package when the fix's `affected` range holds it, else ''."""
    package = ctx.facts.host.snapshot.packages.get(str(fix.get("package")))
    if package is None:
        return ""
    version = normalize_neuron_version(package.version)
    return version if matches(version, str(fix.get("affected"))) is True else ""


def fixed_in_a_later_version(ctx: RuleContext) -> list[Finding]:
    """ND-RT-006: a host package version with a bug that a later release fixes (manifests/package-fixes.json)."""
    findings = []
    snapshot = ctx.facts.host.snapshot
    for fix in ctx.catalog.package_fixes:
        version = _affected(ctx, fix)
        release = str(fix.get("release"))
        if not version or release not in ctx.catalog.releases:
            continue
        name = str(fix["package"])
        findings.append(Finding(
            id="ND-RT-006", category=CATEGORY, severity=SEVERITY_INFO,
            title=f"{name} {version}: {fix['fixed_in']} (Neuron {release}) fixes {fix['what'].split(';')[0]}",
            detail=(f"Neuron {release}'s release notes: {fix['what']}. If you see {fix['symptom']}, this is a likely "
                    f"cause; the upgrade moves the host's packages to Neuron {release} together ({fix['source']})."),
            evidence={"package": name, "version": version, "affected": fix["affected"], "fixed_in": fix["fixed_in"],
                      "release": release, "fix_id": fix.get("id")},
            fix=Fix([*([note("on the host whose image this is, or in the image's build:")] if snapshot.container
                       else []), *host_upgrade_commands(ctx, release)]),
        ))
    return findings


RULE_SET = RuleSet(
    rules=(fixed_in_a_later_version,),
    findings=(
        FindingSpec("ND-RT-006", CATEGORY, SEVERITY_INFO,
                    "info: a host package version with a bug a later release fixes (its release notes say what)"),
    ),
)
