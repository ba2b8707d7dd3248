"""instance-unsupported: packages built for another instance family than this host's.

Each manifest entry lists its instances: torch-neuron is Inf1 only; libtorch_neuronx_lite is trn2/trn3
only (n2-manifest.json). Judged only when the instance type is known.
"""

from __future__ import annotations

from neurondoctor.neuron_version import normalize_neuron_version
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext, pip_command
from neurondoctor.rules.finding import SEVERITY_ERROR, Finding


def wrong_instance_packages(ctx: RuleContext) -> list[Finding]:
    """ND-INST-001: an installed Neuron package's release entry does not list this instance family."""
    family = ctx.facts.host.instance_family
    if family is None:
        return []
    findings = []
    for env in ctx.facts.environments:
        for package in ctx.release_of(env).packages:
            if not package.releases:
                continue
            entries = [entry for entry in ctx.catalog.entries(package.releases[0], package.dist.name)
                       if entry.normalized_version == normalize_neuron_version(package.dist.version)]
            instances = sorted({instance for entry in entries for instance in entry.instances})
            if not instances or family in instances:
                continue
            findings.append(Finding(
                id="ND-INST-001",
                category="instance-unsupported",
                severity=SEVERITY_ERROR,
                title=(f"{package.dist.display_name} {package.dist.version} is built for "
                       f"{', '.join(instances)}, not for this {ctx.facts.host.instance_type}"),
                detail="It cannot use this instance's NeuronCores; remove it or use the package for this family.",
                evidence={"venv": env.path, "package": package.dist.display_name, "instances": instances,
                          "instance_type": ctx.facts.host.instance_type},
                fix=[pip_command(env, "uninstall", "-y", package.dist.display_name)],
            ))
    return findings


RULE_SET = RuleSet(
    rules=(wrong_instance_packages,),
    findings=(FindingSpec("ND-INST-001", "instance-unsupported", SEVERITY_ERROR,
                          "a package built for another instance family"),),
)
