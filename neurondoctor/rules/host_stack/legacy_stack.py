"""Neuron 1.x OS packages left on a host: Runtime 1.x (`neuron-rtd`) and the tools' old name.

Neuron Runtime 1.x (`aws-neuron-runtime`, the `neuron-rtd` daemon) entered maintenance with Neuron 1.16.0, when
the frameworks moved to Runtime 2.x (libnrt.so); from Neuron 2.3 the driver and tools no longer support it
(general/announcements/neuron2.x/neuron-rtd-eol.rst). From Neuron 2.5 `aws-neuron-tools` is `aws-neuronx-tools`
for every instance, Inf1 included (announcements: "Introducing Neuron packaging and installation changes for Inf1
customers"). The old driver package, aws-neuron-dkms, is driver.py's ND-DKMS-004.
"""

from __future__ import annotations

from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Fix, command
from neurondoctor.rules.host_stack.os_commands import (
    host_target_release,
    install_command,
    release_version,
    remove_command,
)

RUNTIME_1X = ("aws-neuron-runtime", "aws-neuron-runtime-base")
LEGACY_TOOLS = "aws-neuron-tools"
TOOLS = "aws-neuronx-tools"


def runtime_1x_installed(ctx: RuleContext) -> list[Finding]:
    """ND-RT-004: Runtime 1.x (neuron-rtd) packages, which no framework since Neuron 1.16 uses."""
    snapshot = ctx.facts.host.snapshot
    present = [name for name in RUNTIME_1X if name in snapshot.packages]
    if not present:
        return []
    versions = {name: snapshot.packages[name].version for name in present}
    return [Finding(
        id="ND-RT-004", category="mixed-sdk-release", severity=SEVERITY_WARNING,
        title="Neuron Runtime 1.x (neuron-rtd) is installed: " + ", ".join(f"{name} {version}"
                                                                      for name, version in versions.items()),
        detail=("Frameworks use Runtime 2.x (libnrt.so) since Neuron 1.16, and from Neuron 2.3 the driver and tools "
                "no longer support Runtime 1.x; a running neuron-rtd holds NeuronCores the frameworks then cannot "
                "get (neuron-rtd-eol.rst)."),
        evidence={"packages": versions},
        fix=Fix([command("sudo", "systemctl", "disable", "--now", "neuron-rtd"), remove_command(snapshot, present)]),
    )]


def legacy_tools_installed(ctx: RuleContext) -> list[Finding]:
    """ND-RT-005: aws-neuron-tools, renamed aws-neuronx-tools for every instance from Neuron 2.5."""
    snapshot = ctx.facts.host.snapshot
    legacy = snapshot.packages.get(LEGACY_TOOLS)
    if legacy is None:
        return []
    fix = [remove_command(snapshot, [LEGACY_TOOLS])]
    if TOOLS not in snapshot.packages:
        fix.append(install_command(snapshot, [(TOOLS, release_version(ctx, host_target_release(ctx), TOOLS))]))
    return [Finding(
        id="ND-RT-005", category="mixed-sdk-release", severity=SEVERITY_WARNING,
        title=f"the Neuron 1.x tools package aws-neuron-tools {legacy.version} is installed",
        detail=("From Neuron 2.5 the tools are aws-neuronx-tools on every instance, Inf1 included; the old "
                "package's neuron-ls and neuron-top predate the current driver."),
        evidence={"package": LEGACY_TOOLS, "version": legacy.version},
        fix=Fix(fix),
    )]


RULE_SET = RuleSet(
    rules=(runtime_1x_installed, legacy_tools_installed),
    findings=(
        FindingSpec("ND-RT-004", "mixed-sdk-release", SEVERITY_WARNING,
                    "Neuron Runtime 1.x (neuron-rtd) packages on the host"),
        FindingSpec("ND-RT-005", "mixed-sdk-release", SEVERITY_WARNING, "the Neuron 1.x aws-neuron-tools package"),
    ),
)
