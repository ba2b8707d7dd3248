"""The kernel driver: missing, not loaded, stale (loaded version ≠ package), legacy package, not built.

Sources: nrt-ts (`Unable to determine Neuron Driver version`, rmmod/modprobe after the holders stop; `modinfo`
shows the new version while the old module is still loaded), gh#661 (legacy `aws-neuron-dkms`), gh#843 and
whats-new 2.28.1 (kernel 6.18 needs aws-neuronx-dkms 2.26.10.0).
"""

from __future__ import annotations

from typing import Optional

from neurondoctor.facts.host import DriverModuleFile, HostSnapshot
from neurondoctor.neuron_version import names_a_release, normalize_neuron_version, release_tuple, release_words
from neurondoctor.rules.check import Check, FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext, neuron_host
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Command, Fix, Step, command, note, pipeline
from neurondoctor.rules.host_stack import node_driver
from neurondoctor.rules.host_stack.node_driver import node_driver_version
from neurondoctor.rules.host_stack.node_ways import drain_first, loaded_at_boot, or_reboot, reboot_then_replace
from neurondoctor.rules.host_stack.os_commands import (
    RELOAD_DRIVER,
    headers_command,
    host_target_release,
    install_command,
    package_manager,
    release_version,
    remove_command,
    repository_commands,
)

DKMS_PACKAGE = "aws-neuronx-dkms"
LEGACY_DKMS_PACKAGE = "aws-neuron-dkms"
MODPROBE = RELOAD_DRIVER[1]


def _stop_holders(snapshot: HostSnapshot) -> list[Command]:
    """One `sudo kill PID` per holder; which program each is stays in the evidence (a comment carries no data)."""
    return [command("sudo", "kill", str(holder.pid)) for holder in snapshot.holders]


def _host_driver_loaded(snapshot: HostSnapshot) -> bool:
    return "neuron" in snapshot.modules or snapshot.loaded_driver_version is not None


def _container_driver_missing(ctx: RuleContext) -> list[Finding]:
    """In a container the driver is the host's: only a loaded module counts, and the fix runs on the host."""
    snapshot = ctx.facts.host.snapshot
    if _host_driver_loaded(snapshot) or not snapshot.has_neuron_hardware:
        return []
    version = release_version(ctx, host_target_release(ctx), DKMS_PACKAGE)
    return [Finding(
        id="ND-DRV-001",
        category="driver-missing",
        severity=SEVERITY_ERROR,
        title="this is a container and the host has no Neuron driver loaded",
        detail=("A container uses the host's `neuron` module: install aws-neuronx-dkms on the host (not in the "
                "image) and start the container with the Neuron devices."),
        evidence={"container": True, "pci_functions": [function.address for function in snapshot.pci]},
        fix=Fix([note("on the host, not in this container:"),
                 command("sudo", "apt-get", "install", "-y", f"{DKMS_PACKAGE}={version}*" if version else DKMS_PACKAGE),
                 MODPROBE]),
    )]


def driver_missing(ctx: RuleContext) -> list[Finding]:
    """ND-DRV-001: Neuron hardware (or Neuron runtime packages) but no driver package and no module."""
    snapshot = ctx.facts.host.snapshot
    if snapshot.container:
        return _container_driver_missing(ctx)
    has_runtime = any(name.startswith("aws-neuronx-") for name in snapshot.packages)
    if DKMS_PACKAGE in snapshot.packages or "neuron" in snapshot.modules or _image_module(snapshot):
        return []  # a module file without a package (Bottlerocket) is a driver that is not loaded: ND-DRV-002
    if not snapshot.has_neuron_hardware and not has_runtime:
        return []
    if snapshot.os.id == "bottlerocket":
        return [_bottlerocket_without_driver(snapshot)]
    release = host_target_release(ctx)
    version = release_version(ctx, release, DKMS_PACKAGE)
    return [Finding(
        id="ND-DRV-001",
        category="driver-missing",
        severity=SEVERITY_ERROR,
        title=f"no Neuron driver installed ({len(snapshot.pci)} Neuron device(s) on PCI)",
        detail=("Without aws-neuronx-dkms every runtime call fails with `NRT:nrt_init Unable to determine Neuron "
                "Driver version. Please check aws-neuron-dkms package is installed.`"),
        evidence={"pci_functions": [function.address for function in snapshot.pci],
                  "packages": sorted(snapshot.packages), "release": release},
        fix=Fix([*repository_commands(ctx, snapshot), headers_command(snapshot),
                 install_command(snapshot, [(DKMS_PACKAGE, version)])]),
    )]


def _image_module(snapshot: HostSnapshot) -> bool:
    """A module file on a host without a package database (Bottlerocket): the image's driver. Where a package
    manager is, a module left behind by a removed package is no installed driver."""
    return snapshot.driver_module is not None and snapshot.package_source is None


def _bottlerocket_without_driver(snapshot: HostSnapshot) -> Finding:
    """Bottlerocket has no package manager: the driver comes with the variant (its aws variants carry the kernel
    kit's kmod-*-neuron, which the nvidia flavors conflict with: bottlerocket-kernel-kit kmod-6.1-neuron.spec)."""
    return Finding(
        id="ND-DRV-001", category="driver-missing", severity=SEVERITY_ERROR,
        title=(f"no Neuron driver in this Bottlerocket image ({snapshot.os.variant_id or 'variant not known'}) "
               f"with {len(snapshot.pci)} Neuron device(s) on PCI"),
        detail=("Bottlerocket cannot install packages: the Neuron driver comes with the variant, and its nvidia "
                "variants do not carry it."),
        evidence={"pci_functions": [function.address for function in snapshot.pci],
                  "variant": snapshot.os.variant_id, "modules_searched": "/lib/modules/<kernel>, /usr/libexec/neuron"},
        fix=Fix([note("launch this node from a Bottlerocket aws-k8s or aws-ecs variant that is not an nvidia one")]),
    )


def legacy_driver_package(ctx: RuleContext) -> list[Finding]:
    """ND-DKMS-004: the deprecated aws-neuron-dkms, which conflicts with aws-neuronx-dkms (gh#661)."""
    snapshot = ctx.facts.host.snapshot
    if LEGACY_DKMS_PACKAGE not in snapshot.packages and not snapshot.dkms.legacy_registered:
        return []
    release = host_target_release(ctx)
    legacy = snapshot.packages.get(LEGACY_DKMS_PACKAGE)
    return [Finding(
        id="ND-DKMS-004",
        category="dkms-build",
        severity=SEVERITY_ERROR,
        title="the deprecated aws-neuron-dkms driver package is installed",
        detail="It builds the same `neuron` module as aws-neuronx-dkms and conflicts with it (gh#661).",
        evidence={"package": legacy.version if legacy else None,
                  "dkms_registered": snapshot.dkms.legacy_registered},
        fix=Fix([remove_command(snapshot, [LEGACY_DKMS_PACKAGE]),
                 install_command(snapshot, [(DKMS_PACKAGE, release_version(ctx, release, DKMS_PACKAGE))])]),
    )]


def _kernel_minimum(ctx: RuleContext, kernel: str) -> tuple[str, str] | None:
    """(minimum dkms version, source) when this kernel needs a newer driver than some releases ship."""
    for rule in ctx.catalog.compat.get("kernel_driver_minimums", []):
        if release_tuple(kernel)[:2] >= release_tuple(rule["kernel_at_least"]):
            return str(rule["dkms_at_least"]), str(rule["source"])
    return None


def _lowest_dkms_at_least(ctx: RuleContext, minimum: str) -> Optional[str]:
    """The host release's driver when it builds for the kernel, else the oldest released one that does: the newest
    would break an older runtime (drivers from 2.29 refuse runtimes before it: ND-RT-001)."""
    versions = {entry.version for release in ctx.catalog.release_names
                for entry in ctx.catalog.entries(release, DKMS_PACKAGE)}
    enough = sorted((version for version in versions if release_tuple(version) >= release_tuple(minimum)),
                    key=release_tuple)
    own = release_version(ctx, host_target_release(ctx), DKMS_PACKAGE)
    if own in enough:
        return own
    return enough[0] if enough else release_version(ctx, ctx.catalog.whole_latest, DKMS_PACKAGE)


def module_not_built(ctx: RuleContext) -> list[Finding]:
    """ND-DKMS-001/002/003: the package is installed but no module exists for the running kernel."""
    snapshot = ctx.facts.host.snapshot
    package = snapshot.packages.get(DKMS_PACKAGE)
    kernel = snapshot.kernel
    if package is None or kernel is None or "neuron" in snapshot.modules or snapshot.container:
        return []
    if snapshot.dkms.installed_module or snapshot.dkms.built_for_kernel:
        return []
    version = normalize_neuron_version(package.version)
    evidence = {"kernel": kernel, "aws-neuronx-dkms": version, "package_state": package.state,
                "headers": snapshot.dkms.headers_present, "make_log": snapshot.dkms.make_log,
                "make_log_error": snapshot.dkms.make_log_error, "make_log_tail": snapshot.dkms.make_log_tail}
    # dpkg leaves the package half-configured when its postinst's DKMS build fails: say so, and why (make.log).
    state = (f" (dpkg: {package.state}, its post-install DKMS build failed)" if package.broken else "")
    cause = f" The build log says: `{snapshot.dkms.make_log_error}`." if snapshot.dkms.make_log_error else ""
    configure = ([command("sudo", "dpkg", "--configure", "-a")] if package.broken and snapshot.package_source == "dpkg"
                 else [])
    tool = snapshot.dkms.missing_build_tool
    if tool is not None and snapshot.dkms.headers_present:
        return [Finding(
            id="ND-DKMS-001", category="dkms-build", severity=SEVERITY_ERROR,
            title=f"aws-neuronx-dkms {version} is not built for the running kernel {kernel}: the build tool {tool} "
                  "is not installed" + state,
            detail=("The kernel's Makefile runs the compiler the kernel was built with, and this host lacks it; a "
                    "newer (HWE or mainline) kernel often names a gcc version other than the distribution's default."
                    + cause),
            evidence={**evidence, "missing_build_tool": tool},
            fix=Fix([*_build_tool_install(snapshot, tool),
                     command("sudo", "dkms", "install", f"aws-neuronx/{version}", "-k", kernel), *configure,
                     MODPROBE]),
        )]
    minimum = _kernel_minimum(ctx, kernel)
    if minimum and release_tuple(version) < release_tuple(minimum[0]):
        enough = _lowest_dkms_at_least(ctx, minimum[0])
        return [Finding(
            id="ND-DKMS-003", category="dkms-build", severity=SEVERITY_ERROR,
            title=f"kernel {kernel} is newer than aws-neuronx-dkms {version} can build for (needs ≥ {minimum[0]})"
                  + state,
            detail=("DKMS fails with `Error! Bad return status for module build on kernel` and the driver is "
                    f"not loaded after the kernel upgrade ({minimum[1]}). Upgrade the driver, or boot the "
                    "previous kernel." + cause),
            evidence=evidence,
            fix=Fix([install_command(snapshot, [(DKMS_PACKAGE, enough)]), MODPROBE]),
        )]
    if not snapshot.dkms.headers_present:
        return [Finding(
            id="ND-DKMS-002", category="dkms-build", severity=SEVERITY_ERROR,
            title=f"no kernel headers for the running kernel {kernel}: the driver was not built for it" + state,
            detail=("`Module build for kernel … was skipped since the kernel headers for this kernel does not seem "
                    "to be installed.` A kernel upgrade without its headers leaves the host without a driver."
                    + cause),
            evidence=evidence,
            fix=Fix([headers_command(snapshot), command("sudo", "dkms", "autoinstall", "-k", kernel), *configure,
                     MODPROBE]),
        )]
    return [Finding(
        id="ND-DKMS-001", category="dkms-build", severity=SEVERITY_ERROR,
        title=f"aws-neuronx-dkms {version} is not built for the running kernel {kernel}" + state,
        detail=("DKMS did not build (or the build failed for) this kernel; see the build log in the evidence."
                + cause),
        evidence=evidence,
        fix=Fix([command("sudo", "dkms", "install", f"aws-neuronx/{version}", "-k", kernel), *configure, MODPROBE]),
    )]


def _build_tool_install(snapshot: HostSnapshot, tool: str) -> list[Step]:
    """The package that holds a build tool: apt names gcc's versions (`gcc-14`, whose package also holds the
    `x86_64-linux-gnu-gcc-14` it runs); elsewhere an unversioned gcc is `gcc`, and a versioned one is looked up."""
    bare = tool.split("-linux-gnu-", 1)[-1]
    name, _, number = bare.partition("-")
    manager = package_manager(snapshot)
    if manager == "apt":
        package = {"cc": "build-essential", "gcc": "build-essential", "ld": "binutils"}.get(bare, bare)
        return [command("sudo", "apt-get", "install", "-y", package)]
    if number:
        return [note(f"install {bare}, the compiler this kernel was built with", "dnf", "provides", f"*/{bare}")]
    package = {"cc": "gcc", "ld": "binutils"}.get(name, name)
    return [command("sudo", manager, "install", "-y", package)]


def driver_not_loaded(ctx: RuleContext) -> list[Finding]:
    """ND-DRV-002: the module is built for this kernel but not loaded."""
    snapshot = ctx.facts.host.snapshot
    if "neuron" in snapshot.modules or snapshot.container:
        return []
    if DKMS_PACKAGE not in snapshot.packages:
        return _module_file_not_loaded(snapshot)
    if not (snapshot.dkms.installed_module or snapshot.dkms.built_for_kernel):
        return []  # module_not_built explains why
    return [Finding(
        id="ND-DRV-002",
        category="driver-not-loaded",
        severity=SEVERITY_ERROR,
        title="the Neuron driver is installed and built but the `neuron` module is not loaded",
        detail="No process can open a NeuronCore until it is loaded; it loads at boot from "
               "/etc/modules-load.d/neuron.conf.",
        evidence={"module": snapshot.dkms.installed_module, "kernel": snapshot.kernel},
        fix=Fix([MODPROBE, loaded_at_boot()] if snapshot.node_role is not None else
                [MODPROBE, pipeline(["echo", "neuron"], ["sudo", "tee", "/etc/modules-load.d/neuron.conf"])]),
    )]


def _module_file_not_loaded(snapshot: HostSnapshot) -> list[Finding]:
    """ND-DRV-002 without a driver package: the module file the image ships (Bottlerocket's kernel kit) is there and
    not loaded. Bottlerocket loads it at boot for the hardware it finds (load-neuron-latest-modules.service)."""
    module = snapshot.driver_module
    if module is None or not _image_module(snapshot) or not snapshot.has_neuron_hardware:
        return []
    bottlerocket = snapshot.os.id == "bottlerocket"
    return [Finding(
        id="ND-DRV-002", category="driver-not-loaded", severity=SEVERITY_ERROR,
        title=f"the Neuron driver {module.path} is on this node but the `neuron` module is not loaded",
        detail=("No container can open a NeuronCore until it is loaded"
                + ("; Bottlerocket loads it at boot for the Neuron hardware it finds "
                   "(load-neuron-latest-modules.service)." if bottlerocket else ".")),
        evidence={"module": module.path, "version": module.version, "version_problem": module.problem,
                  "kernel": snapshot.kernel},
        fix=Fix([reboot_then_replace("the module is still not loaded")] if bottlerocket else [MODPROBE]),
    )]


def _users_line(used_by: int) -> str:
    """What to do before the reload, by how many processes hold the module: none needs no stopping."""
    if used_by == 0:
        return "Nothing is using it: reload it, or reboot."
    return f"Stop the {used_by} process{'es' if used_by > 1 else ''} using it, then reload, or reboot."


def driver_stale(ctx: RuleContext) -> list[Finding]:
    """ND-DRV-003: the loaded module is not the installed package's version (upgrade without reload)."""
    snapshot = ctx.facts.host.snapshot
    package = snapshot.packages.get(DKMS_PACKAGE)
    loaded = snapshot.loaded_driver_version
    if package is None or loaded is None or "neuron" not in snapshot.modules or snapshot.container:
        return []  # in a container the package (if any) is the image's, the module the host's
    installed = normalize_neuron_version(package.version)
    if normalize_neuron_version(loaded) == installed:
        return []
    module = snapshot.modules["neuron"]
    return [Finding(
        id="ND-DRV-003",
        category="driver-stale",
        severity=SEVERITY_ERROR,
        title=f"loaded Neuron driver {normalize_neuron_version(loaded)} is not the installed {installed}",
        detail=("The package was upgraded but the old module is still in the kernel (`modinfo neuron` shows the "
                "new version, misleadingly). A newer runtime fails with `compatibility id … is not compatible`. "
                + _users_line(module.used_by)
                + "".join(f" PID {holder.pid} is {holder.command}." for holder in snapshot.holders)),
        evidence={"loaded": loaded, "installed": package.version, "used_by": module.used_by,
                  "holders": [holder.pid for holder in snapshot.holders]},
        fix=Fix([*drain_first(snapshot.node_role), *RELOAD_DRIVER, or_reboot()] if snapshot.node_role is not None
                else [*_stop_holders(snapshot), *RELOAD_DRIVER]),
    )]


def dkms_in_image(ctx: RuleContext) -> list[Finding]:
    """ND-DRV-004: aws-neuronx-dkms installed inside a container image, where it can neither build nor load."""
    snapshot = ctx.facts.host.snapshot
    package = snapshot.packages.get(DKMS_PACKAGE)
    if not snapshot.container or package is None:
        return []
    loaded = snapshot.loaded_driver_version
    return [Finding(
        id="ND-DRV-004",
        category="dkms-build",
        severity=SEVERITY_WARNING if _host_driver_loaded(snapshot) else SEVERITY_ERROR,
        title=f"aws-neuronx-dkms {normalize_neuron_version(package.version)} is installed inside this container "
              "image, where it cannot build or load",
        detail=("The `neuron` module is the host's: a DKMS package in the image only fails its post-install build "
                "and says nothing about the driver in use"
                + (f" (the host runs {normalize_neuron_version(loaded)})." if loaded else
                   "; no host driver is loaded either.")),
        evidence={"package": package.version, "state": package.state, "host_driver": loaded},
        fix=Fix([remove_command(snapshot, [DKMS_PACKAGE], note="in the image's build (Dockerfile)"),
                 note("install aws-neuronx-dkms on the host instead")]),
    )]


def driver_summary(ctx: RuleContext) -> str:
    """`aws-neuronx-dkms 2.29.0.0, loaded 2.29.0.0, built for 6.8.0-1015-aws`."""
    snapshot = ctx.facts.host.snapshot
    loaded = snapshot.loaded_driver_version
    unnamed = (" (a build whose version names no release: not compared with releases)"
               if loaded and not names_a_release(loaded) else "")
    if snapshot.container:
        return (f"host driver {normalize_neuron_version(loaded)} loaded{unnamed} (seen from this container; the "
                "driver lives on the host)" if loaded else "this is a container: the driver lives on the host")
    package = snapshot.packages.get(DKMS_PACKAGE)
    module = snapshot.driver_module
    parts = [f"{DKMS_PACKAGE} {normalize_neuron_version(package.version)}" if package else
             _module_words(module) if module else "no driver package"]
    parts.append(f"loaded {normalize_neuron_version(loaded)}{unnamed}" if loaded else
                 "loaded, its version not shown (no /sys/module/neuron/version)" if "neuron" in snapshot.modules
                 else "not loaded")
    if snapshot.kernel and (snapshot.dkms.installed_module or snapshot.dkms.built_for_kernel):
        parts.append(f"built for {snapshot.kernel}")
    driver, _ = node_driver_version(snapshot)
    releases = ctx.catalog.releases_with(DKMS_PACKAGE, driver) if driver and names_a_release(driver) else []
    if snapshot.node_role is not None and releases:
        parts.append(f"the driver of Neuron {release_words(releases)}")
    if module is not None and module.problem and not loaded and not package:
        parts.append(module.problem)  # one line, no finding: an unknown version is not a fault
    untested = _kernel_not_in_tables(ctx)
    if untested:
        parts.append(untested)
    return ", ".join(parts)


def _kernel_not_in_tables(ctx: RuleContext) -> Optional[str]:
    """On a node whose driver is its image's module: the driver's minimum kernel is judged (ND-OS-002) and DKMS's
    kernel limits say nothing (the image built it for this kernel), but whether AWS tests this driver on the node's
    kernel is in the driver's OS tables only, which list no such image: said as not known, never guessed."""
    snapshot = ctx.facts.host.snapshot
    if not node_driver.module_only(snapshot) or not snapshot.kernel:
        return None
    os = snapshot.os
    release = node_driver.driver_release(ctx)
    rows = ctx.catalog.os_facts.tested(release, "driver", ctx.facts.host.instance_family) if release else []
    from neurondoctor.release_data.os_support import os_matches  # loaded with os_facts

    if any(os_matches(os.id or "", os.version_id or "", row.os, row.version) for row in rows):
        return None
    return (f"kernel {snapshot.kernel}: built for it by the image; whether Neuron tests this driver on it is not "
            "known (the driver's OS tables do not list this OS)")


def _module_words(module: DriverModuleFile) -> str:
    """`module /lib/modules/6.1.161/kernel/drivers/neuron/neuron.ko.gz 2.26.5.0` (no package: the image's own)."""
    return f"module {module.path}" + (f" {normalize_neuron_version(module.version)}" if module.version else "")


RULE_SET = RuleSet(
    rules=(driver_missing, legacy_driver_package, module_not_built, driver_not_loaded, driver_stale,
           dkms_in_image),
    findings=(
        FindingSpec("ND-DRV-001", "driver-missing", SEVERITY_ERROR,
                    "Neuron hardware (or runtime packages) but no aws-neuronx-dkms"),
        FindingSpec("ND-DRV-002", "driver-not-loaded", SEVERITY_ERROR,
                    "the driver is built for this kernel but the `neuron` module is not loaded"),
        FindingSpec("ND-DRV-003", "driver-stale", SEVERITY_ERROR,
                    "the loaded module's version is not the installed package's (reload or reboot pending)"),
        FindingSpec("ND-DRV-004", "dkms-build", SEVERITY_WARNING,
                    "aws-neuronx-dkms installed inside a container image (it belongs on the host)",
                    also=(SEVERITY_ERROR,)),
        FindingSpec("ND-DKMS-001", "dkms-build", SEVERITY_ERROR, "the driver is not built for the running kernel"),
        FindingSpec("ND-DKMS-002", "dkms-build", SEVERITY_ERROR, "no kernel headers for the running kernel"),
        FindingSpec("ND-DKMS-003", "dkms-build", SEVERITY_ERROR, "the kernel is too new for this driver version"),
        FindingSpec("ND-DKMS-004", "dkms-build", SEVERITY_ERROR, "the deprecated aws-neuron-dkms is installed"),
    ),
)
CHECK = Check("driver", "Driver", (RULE_SET, node_driver.RULE_SET), driver_summary, applies=neuron_host,
              needs=("system", "hardware", "driver", "packages"))
