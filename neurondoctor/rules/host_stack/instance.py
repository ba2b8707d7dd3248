"""instance-unsupported: packages built for another instance family than this host's.

Each manifest entry lists its instances: torch-neuron is Inf1 only; libtorch_neuronx_lite is trn2/trn3
only (n2-manifest.json). Judged only when the instance type is known.
"""

from __future__ import annotations

from typing import Optional

from neurondoctor.facts.host import HostSnapshot
from neurondoctor.neuron_version import normalize_neuron_version, release_tuple
from neurondoctor.python_packaging import parse_requirement
from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext, inf1_host, pip_command
from neurondoctor.rules.finding import SEVERITY_ERROR, Finding
from neurondoctor.rules.fix import Fix, command, note
from neurondoctor.rules.host_stack.node_driver import module_only, node_driver_version
from neurondoctor.rules.host_stack.node_ways import drain_first, kept_by_the_image
from neurondoctor.rules.host_stack.os_commands import RELOAD_DRIVER, install_command, remove_command
from neurondoctor.rules.python_stack.release_detection import PackageReleases


def _instances(ctx: RuleContext, package: PackageReleases) -> list[str]:
    """Every family any release lists this version for, as ND-INST-003 reads host packages: AWS's manifest of
    2.29.0-2.30.0 lists tensorflow-neuronx 2.10.1.2.1.0 for trn1 and inf1, where 2.10.0-2.28.1 say trn1 and inf2."""
    version = normalize_neuron_version(package.dist.version)
    return sorted({instance for release in package.releases for entry in ctx.catalog.entries(release, package.dist.name)
                   if entry.matches(version) for instance in entry.instances})


def wrong_instance_packages(ctx: RuleContext) -> list[Finding]:
    """ND-INST-001: an installed Neuron package's release entry does not list this instance family. A package that
    one listed for this family requires is not judged by its own, narrower list: torch-neuronx 2.9.0.2.15.32035 is
    listed for trn2/trn3 and requires libneuronxla 2.x, which the manifest lists for trn1/inf2 only."""
    family = ctx.facts.host.instance_family
    if family is None:
        return []
    findings = []
    for env in ctx.facts.environments:
        packages = ctx.release_of(env).packages
        judged = [(package, _instances(ctx, package)) for package in packages]
        required = {requirement.name for package, instances in judged if family in instances
                    for requirement in map(parse_requirement, package.dist.requires) if requirement is not None}
        for package, instances in judged:
            if not instances or family in instances or package.dist.name in required:
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
                fix=Fix([pip_command(env, "uninstall", "-y", package.dist.display_name)]),
            ))
    return findings


# about-neuron/announcements/neuron2.x/announce-correction-neuron-driver-support-inf1.rst: drivers above 2.24
# support non-Inf1 instances only, from Neuron 2.26 (it corrects the earlier "2.21" announcement); Inf1 users pin
# aws-neuronx-dkms=2.24.* (2.24.13.0 adds kernel 6.18). The release data says the same: the newest driver entry
# that lists inf1 is 2.24.7.0 (Neuron 2.26.1), so the boundary is read from it, not written here.
DKMS = "aws-neuronx-dkms"
_SOURCE = "announce-correction-neuron-driver-support-inf1.rst; n2-manifest.json supported_instances"


def last_inf1_driver(ctx: RuleContext) -> str:
    """`2.24`: major.minor of the newest driver the release data lists for inf1, or "" without one."""
    versions = [entry.normalized_version for release in ctx.catalog.release_names
                for entry in ctx.catalog.entries(release, DKMS) if "inf1" in entry.instances]
    if not versions:
        return ""
    return ".".join(str(part) for part in max(release_tuple(version) for version in versions)[:2])


def _inf1_driver(snapshot: HostSnapshot) -> tuple[Optional[str], str]:
    """(the driver version judged, what it is): the package's; on a node whose driver is its image's module file
    (Bottlerocket), the module's (loaded, else the file's .modinfo; None when neither can be read)."""
    package = snapshot.packages.get(DKMS)
    if package is not None:
        return normalize_neuron_version(package.version), DKMS
    if module_only(snapshot):
        version, source = node_driver_version(snapshot)
        return version, f"the Neuron driver ({source})"
    return None, DKMS


def _inf1_driver_fix(snapshot: HostSnapshot, last: str) -> Fix:
    """Install the Inf1 line and reload; a node whose driver is its image's moves to an image that pins the Inf1 line
    (the EKS and ECS AMIs and Bottlerocket pin Inf1 nodes to one), and a managed node drains before the reload."""
    role = snapshot.node_role
    if role is not None and snapshot.inf1_pin is not None:
        # A managed image that pins Inf1 at boot (host/node_role.py) has no Neuron repository to install from: its
        # own service installs the package it caches, with the no-op update-pciids that keeps the install going.
        return Fix([*drain_first(role), command("sudo", "systemctl", "restart", snapshot.inf1_pin.unit),
                    *RELOAD_DRIVER])
    if role is not None and module_only(snapshot):
        return Fix([note(f"launch this node from an image release whose driver is of the Inf1 line {last} (the "
                         "EKS and ECS AMIs and Bottlerocket pin Inf1 nodes to such a driver)")])
    lines = [install_command(snapshot, [(DKMS, f"{last}.")]), *RELOAD_DRIVER]
    return Fix([*drain_first(role), *lines, kept_by_the_image()] if role is not None else lines)


def inf1_driver_too_new(ctx: RuleContext) -> list[Finding]:
    """ND-INST-002: an Inf1 host with a driver newer than the last one that supports Inf1."""
    snapshot = ctx.facts.host.snapshot
    version, what = _inf1_driver(snapshot)
    if version is None or not inf1_host(ctx):
        return []
    last = last_inf1_driver(ctx)
    if not last:
        return []
    if release_tuple(version)[:2] <= release_tuple(last):
        return []
    pin = snapshot.inf1_pin
    return [Finding(
        id="ND-INST-002",
        category="instance-unsupported",
        severity=SEVERITY_ERROR,
        title=(f"aws-neuronx-dkms {version}" if what == DKMS else f"the Neuron driver {version} of this node's image")
              + f" does not support Inf1; the last driver that does is {last}.*",
        detail=f"Drivers above {last} support Trn and Inf2 instances only ({_SOURCE})." + (
            f" This image's boot service {pin.unit} ({pin.service}) puts aws-neuronx-dkms {pin.line}.* on Inf1 and "
            "did not: `systemctl status` of it says why." if pin else ""),
        evidence={"aws-neuronx-dkms": version, "read_from": what, "last_inf1_driver": last,
                  "instance_type": ctx.facts.host.instance_type, **({"image_inf1_pin": pin.service} if pin else {})},
        fix=_inf1_driver_fix(snapshot, last),
    )]


def family_version(catalog: ReleaseCatalog, release: str, name: str, family: str) -> str | None:
    """The version of `name` that `release` ships for this family (2.21.1 has a runtime-lib line for inf1)."""
    for entry in catalog.entries(release, name):
        if family in entry.instances:
            return entry.version
    return None


def wrong_instance_os_packages(ctx: RuleContext) -> list[Finding]:
    """ND-INST-003: a host OS package whose release entry does not list this instance family (runtime-lib 2.33
    on Inf1; the Inf1 runtime-lib line 2.12 on Trn1). The driver on Inf1 is ND-INST-002."""
    family = ctx.facts.host.instance_family
    snapshot = ctx.facts.host.snapshot
    if family is None:
        return []
    findings = []
    for name, package in sorted(snapshot.packages.items()):
        version = normalize_neuron_version(package.version)
        releases = ctx.catalog.releases_with(name, version)
        if name == DKMS or not releases:
            continue
        instances = sorted({instance for release in releases for entry in ctx.catalog.entries(release, name)
                            if entry.matches(version) for instance in entry.instances})
        if not instances or family in instances:
            continue
        right = family_version(ctx.catalog, releases[0], name, family)
        findings.append(Finding(
            id="ND-INST-003", category="instance-unsupported", severity=SEVERITY_ERROR,
            title=f"{name} {version} is built for {', '.join(instances)}, not for this {ctx.facts.host.instance_type}",
            detail=(f"Neuron {releases[0]} ships " + (f"{name} {right} for {family}" if right else
                                                       f"no {name} for {family}") + f" ({_SOURCE})."),
            evidence={"package": name, "version": version, "instances": instances,
                      "instance_type": ctx.facts.host.instance_type},
            fix=Fix([install_command(snapshot, [(name, right)]) if right else remove_command(snapshot, [name])]),
        ))
    return findings


RULE_SET = RuleSet(
    rules=(wrong_instance_packages, inf1_driver_too_new, wrong_instance_os_packages),
    findings=(FindingSpec("ND-INST-001", "instance-unsupported", SEVERITY_ERROR,
                          "a package built for another instance family"),
              FindingSpec("ND-INST-002", "instance-unsupported", SEVERITY_ERROR,
                          "an Inf1 host with a driver newer than the last one that supports Inf1"),
              FindingSpec("ND-INST-003", "instance-unsupported", SEVERITY_ERROR,
                          "a host OS package built for another instance family")),
)
