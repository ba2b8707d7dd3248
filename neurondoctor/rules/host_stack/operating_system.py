"""os-unsupported: an OS, kernel or GLIBC this host's Neuron release is not tested on or cannot run on.

The verdict depends on the release (manifests/os-support.json, from the runtime's and driver's compatibility
tables in release-notes/components/runtime.rst): Debian 12 is tested from 2.30.0 on, Ubuntu 20.04 not after
2.21, Amazon Linux 2 lost the runtime in 2.20. Untested is a warning (it can work); a documented end of
support, a kernel below the driver's minimum and a GLIBC below what a binary needs are errors.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from neurondoctor.neuron_version import release_tuple
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Fix, alternative, command, note
from neurondoctor.rules.host_stack.node_driver import driver_release, module_only
from neurondoctor.rules.host_stack.os_commands import host_target_release, install_command

if TYPE_CHECKING:  # the tables' module is imported by the catalog when a rule here first asks (catalog.os_facts)
    from neurondoctor.release_data.os_support import OsSupport, TestedOs


def _applies(ctx: RuleContext) -> bool:
    snapshot = ctx.facts.host.snapshot
    return bool(snapshot.has_neuron_hardware or snapshot.packages)


def _os_name(ctx: RuleContext) -> str:
    os = ctx.facts.host.snapshot.os
    return os.pretty_name or f"{os.id or ''} {os.version_id or ''}".strip() or "unknown OS"


def _names(rows: list[TestedOs]) -> str:
    return ", ".join(dict.fromkeys(row.name for row in rows))


def _untested_fix(support: OsSupport, ctx: RuleContext, release: str) -> Fix:
    """The release that is tested on this OS (nearest newer, else nearest older), and the OSes this one is.
    The notes say "this OS": its name comes from os-release, data that no comment carries."""
    os, family = ctx.facts.host.snapshot.os, ctx.facts.host.instance_family
    testing = support.releases_testing(os.id or "", os.version_id or "", "runtime", family)
    newer = [candidate for candidate in testing if release_tuple(candidate) > release_tuple(release)]
    fix = []
    if newer:
        fix.append(note(f"Neuron {newer[0]} is the first release whose runtime is tested on this OS: upgrade to it"))
    elif testing:
        fix.append(note(f"Neuron {testing[-1]} is the last release whose runtime was tested on this OS"))
    tested = _names(support.tested(release, "runtime", family))
    if tested:
        fix.append(note(f"Neuron {release} is tested on {tested}: move this host to one of them"))
    return Fix(fix)


def os_support(ctx: RuleContext) -> list[Finding]:
    """ND-OS-001: an OS past a documented end of support (error) or outside the release's tested table (warning)."""
    snapshot = ctx.facts.host.snapshot
    os_id, version = snapshot.os.id or "", snapshot.os.version_id or ""
    release = host_target_release(ctx)
    if not _applies(ctx) or not os_id or release is None or ctx.facts.host.instance_family == "inf1":
        return []  # Inf1 is outside the tables (Inf2/Trn1/Trn2); its own rules judge it
    support = ctx.catalog.os_facts
    from neurondoctor.release_data.os_support import os_matches  # loaded with os_facts

    name = _os_name(ctx)
    evidence: dict[str, object] = {"os": os_id, "version": version, "release": release}
    end = support.end_for(os_id, version, release)
    if end is not None:
        return [Finding(
            id="ND-OS-001", category="os-unsupported", severity=end.severity,
            title=f"{name} is not supported by Neuron {release}: its {end.part} ends with Neuron {end.last_line}",
            detail=end.source, evidence={**evidence, "last_release": end.last_line},
            fix=Fix([note(f"move this host to {end.replacement} (Neuron DLAMIs are Ubuntu 24.04 from 2.30)"),
                     alternative(f"stay on Neuron {end.last_line}, the last release that supports this OS")]))]
    family = ctx.facts.host.instance_family
    role = snapshot.node_role
    if role is not None and role.platform == "bottlerocket":
        return []  # Bottlerocket builds the driver into its own kernel kit; the runtime's OS is each image's
    if role is not None and any(os_matches(os_id, version, row.os, row.version)
                                for row in support.tested(release, "driver", family)):
        return []  # a container node runs only the driver: the runtime's table is the images' concern
    runtime = support.tested(release, "runtime", family)
    if not runtime:
        return []  # before 2.28.0 no table is published: only documented ends judge
    if any(os_matches(os_id, version, row.os, row.version) for row in runtime):
        return []
    driver_only = [row for row in support.tested(release, "driver", family)
                   if os_matches(os_id, version, row.os, row.version)]
    table = support.table_for(release) or {}
    what = ("The Neuron driver is tested on it, the runtime is not" if driver_only
            else "Neither its runtime nor its driver is tested on it")
    return [Finding(
        id="ND-OS-001", category="os-unsupported", severity=SEVERITY_WARNING,
        title=f"{name} is not an OS Neuron {release} is tested on",
        detail=f"{what}; a configuration outside the tables can work but was not tested "
               f"({table.get('source', 'os-support.json')}).",
        evidence=evidence, fix=_untested_fix(support, ctx, release))]


def old_kernel(ctx: RuleContext) -> list[Finding]:
    """ND-OS-002: a kernel older than the driver's minimum."""
    snapshot = ctx.facts.host.snapshot
    minimum = str(ctx.catalog.compat.get("minimum_kernel", "0"))
    if not _applies(ctx) or not snapshot.kernel or release_tuple(snapshot.kernel)[:2] >= release_tuple(minimum):
        return []
    since = ctx.catalog.compat.get("minimum_kernel_from", {})
    image_module = module_only(snapshot)  # the driver is the image's module: its release is the driver's own
    release = driver_release(ctx) if image_module else host_target_release(ctx)
    if isinstance(since, dict) and since.get("release") and release and \
            release_tuple(release) < release_tuple(str(since["release"])):
        return []  # the minimum of today's drivers is not one of a 2022 release's
    return [Finding(id="ND-OS-002", category="os-unsupported", severity=SEVERITY_ERROR,
                    title=f"kernel {snapshot.kernel} is older than {minimum}, the driver's minimum",
                    detail="The Neuron driver needs kernel 5.10 or newer (announce-no-support-al2.rst)."
                    + (" This node's image built its driver for this kernel; its kernel comes with the image."
                       if image_module else ""),
                    evidence={"kernel": snapshot.kernel, "release": release},
                    fix=Fix([note(f"launch this node from an image release whose kernel is {minimum} or newer")])
                    if image_module else _kernel_fix(ctx, minimum))]


def _kernel_fix(ctx: RuleContext, minimum: str) -> Fix:
    """Amazon Linux 2 ships 4.14 and offers 5.10 as an extra (the AL2 kernel-5.10 AMIs); elsewhere, a comment."""
    os = ctx.facts.host.snapshot.os
    if os.id == "amzn" and os.version_id == "2":
        return Fix([command("sudo", "amazon-linux-extras", "install", "-y", "kernel-5.10"), command("sudo", "reboot"),
                    note("then reinstall aws-neuronx-dkms so DKMS builds the driver for 5.10")])
    return Fix([note(f"boot a kernel {minimum} or newer, then reinstall aws-neuronx-dkms so DKMS builds for it")])


def _host_glibc(ctx: RuleContext, support: OsSupport) -> tuple[Optional[str], str]:
    """(GLIBC version, where it was read) — the package database or libc itself, else what the OS ships."""
    snapshot = ctx.facts.host.snapshot
    if snapshot.glibc:
        return snapshot.glibc, snapshot.glibc_source or "the C library"
    shipped = support.shipped_glibc(snapshot.os.id or "", snapshot.os.version_id or "")
    return shipped, f"what {_os_name(ctx)} ships (the C library could not be read)"


def old_glibc(ctx: RuleContext) -> list[Finding]:
    """ND-OS-003: an installed Neuron package whose binaries need a newer GLIBC than the host has."""
    snapshot = ctx.facts.host.snapshot
    if not snapshot.packages:
        return []
    support = ctx.catalog.os_facts
    glibc, source = _host_glibc(ctx, support)
    findings = []
    for need in support.glibc_needs:
        package = snapshot.packages.get(need.package)
        if (glibc is None or package is None or release_tuple(package.version) < release_tuple(need.from_version)
                or release_tuple(glibc) >= release_tuple(need.glibc)):
            continue
        findings.append(Finding(
            id="ND-OS-003", category="os-unsupported", severity=SEVERITY_ERROR,
            title=f"{need.package} {package.version} needs GLIBC {need.glibc}; {_os_name(ctx)} has {glibc}",
            detail=(f"{need.binaries} fail to start (`version 'GLIBC_{need.glibc}' not found`). GLIBC {glibc} "
                    f"is {source}. {need.source}."),
            evidence={"package": need.package, "version": package.version, "glibc": glibc,
                      "needs": need.glibc},
            fix=Fix([note(f"move this host to an OS with GLIBC {need.glibc} or newer (Ubuntu 24.04, Amazon Linux "
                          "2023)"),
                     alternative(f"until then, the last {need.package} without that need (Neuron "
                                 f"{need.release_without}):"),
                     install_command(snapshot, [(need.package, need.last_version_without)])])))
    return findings


def framework_os(ctx: RuleContext) -> list[Finding]:
    """ND-OS-004: an environment's framework outside its own support matrix (TorchNeuron's in 2.33: Ubuntu 24.04
    and 26.04 on x86_64): its documented end of support or a machine it has no wheels for is an error, an OS the
    matrix does not list a warning (it can work, untested)."""
    snapshot = ctx.facts.host.snapshot
    os_id, version = snapshot.os.id or "", snapshot.os.version_id or ""
    findings = []
    for env in ctx.facts.environments:
        stack = ctx.torch_stack(env)
        release = ctx.release_of(env).release
        if stack.framework is None or stack.stack is None or release is None:
            continue
        matrix = ctx.catalog.os_facts.framework_matrix(stack.framework.name, stack.stack, release)
        if matrix is None:
            continue
        verdict = matrix.verdict(os_id, version) if os_id else None
        machine = snapshot.machine
        wrong_machine = bool(machine and matrix.arch and machine not in matrix.arch)
        if verdict is None and not wrong_machine:
            continue
        name = "TorchNeuron" if stack.stack == "native" else stack.framework.display_name
        supported = ", ".join(f"{'Ubuntu' if os == 'ubuntu' else os} {number}" for os, number in matrix.supported)
        what = (f"{machine}, which it publishes no wheels for" if wrong_machine else
                f"{_os_name(ctx)}, whose support it ended" if verdict == "ended" else
                f"{_os_name(ctx)}, which its support matrix does not list")
        findings.append(Finding(
            id="ND-OS-004", category="os-unsupported",
            severity=SEVERITY_ERROR if wrong_machine or verdict == "ended" else SEVERITY_WARNING,
            title=f"{name} ({stack.framework.display_name} {stack.framework.version}) on {what}",
            detail=f"{name} supports {supported} on {', '.join(matrix.arch)} ({matrix.source}).",
            evidence={"venv": env.path, "os": os_id, "version": version, "machine": machine, "release": release,
                      "supported": [f"{os} {number}" for os, number in matrix.supported]},
            fix=Fix([note(f"run {name} on {supported} ({', '.join(matrix.arch)}): the Neuron DLAMIs are Ubuntu "
                          "24.04")])))
    return findings


RULE_SET = RuleSet(
    rules=(os_support, old_kernel, old_glibc, framework_os),
    findings=(
        FindingSpec("ND-OS-001", "os-unsupported", SEVERITY_WARNING,
                    "an OS this release is not tested on, or one whose support ended", also=(SEVERITY_ERROR,)),
        FindingSpec("ND-OS-002", "os-unsupported", SEVERITY_ERROR, "a kernel older than the driver's minimum"),
        FindingSpec("ND-OS-003", "os-unsupported", SEVERITY_ERROR,
                    "a Neuron binary that needs a newer GLIBC than the host has"),
        FindingSpec("ND-OS-004", "os-unsupported", SEVERITY_ERROR,
                    "a framework outside its own support matrix: its ended OS or a machine without wheels (a "
                    "warning for an OS it does not list)", also=(SEVERITY_WARNING,)),
    ),
)
