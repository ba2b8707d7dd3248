"""resource: compile-cache disk space, EFA on multi-node instances, memlock for EFA.

Sources: neuron-caching.rst (the cache holds one NEFF per graph; failed compiles are cached too),
nrt-ts (`OFI plugin initNet() failed is EFA enabled?` — EFA is needed for multi-node collectives on
trn1.32xlarge/trn1n; ignore it on a single node).
"""

from __future__ import annotations

from typing import Optional

from neurondoctor.facts.host import PciFunction
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Command, Fix, Shell, alternative, command, note, pipeline
from neurondoctor.rules.host_stack.cache_words import cache_word
from neurondoctor.rules.host_stack.compiler_installs import compiler_environments, installed_compiler_versions

GIB = 1 << 30


def compile_cache_space(ctx: RuleContext) -> list[Finding]:
    """ND-RES-001: little free disk where the compile cache lives."""
    cache = ctx.facts.host.snapshot.compile_cache
    neuron_here = bool(ctx.facts.host.snapshot.pci) or any(ctx.neuron_env(env) for env in ctx.facts.environments)
    if cache is None or cache.free_bytes is None or not neuron_here:
        return []
    warn = float(ctx.catalog.compat.get("compile_cache_free_warning_gib", 20)) * GIB
    error = float(ctx.catalog.compat.get("compile_cache_free_error_gib", 2)) * GIB
    if cache.free_bytes >= warn:
        return []
    severity = SEVERITY_ERROR if cache.free_bytes < error else SEVERITY_WARNING
    return [Finding(
        id="ND-RES-001", category="resource", severity=severity,
        title=f"{cache.free_bytes / GIB:.1f} GiB free for the compile cache at {cache.path}",
        detail=("Compiles write NEFFs there; a full disk fails the compile and the failure itself is cached "
                "(`Got a cached failed neff … --retry_failed_compilation`)."),
        evidence={"path": cache.path, "source": cache.source, "free_bytes": cache.free_bytes,
                  "total_bytes": cache.total_bytes},
        fix=Fix([pipeline(["du", "-sh", (*cache_word(cache), Shell("/*"))], ["sort", "-h"], ["tail"]),
                 *_other_compilers_removal(ctx),
                 # A way out, not a command: which disk is larger is the user's to name, and a placeholder path
                 # pasted into a shell would send the next compile nowhere useful.
                 alternative("set NEURON_COMPILE_CACHE_URL to a folder on a larger disk")]),
    )]


def _other_compilers_removal(ctx: RuleContext) -> list[Command]:
    """`rm -rf CACHE/neuronxcc-VERSION` for each compiler folder of the cache that no environment here compiles
    with, named one by one: a glob over `neuronxcc-*` would take the installed compiler's graphs too (the next
    start compiles everything again). None when the cache was not counted or no installed compiler is known."""
    cache = ctx.facts.host.snapshot.compile_cache
    index = cache.index if cache is not None else None
    installed = installed_compiler_versions(compiler_environments(ctx.facts.environments))
    if cache is None or index is None or not installed:
        return []
    return [command("rm", "-rf", cache_word(cache, compiler.name),
                    note=f"{compiler.entries:,} entries of neuronx-cc {compiler.compiler_version}, installed nowhere "
                         "here")
            for compiler in index.compilers if compiler.compiler_version not in installed]


def efa_absent(ctx: RuleContext) -> list[Finding]:
    """ND-RES-002: a multi-node instance type without EFA functions on PCI."""
    snapshot = ctx.facts.host.snapshot
    if not ctx.instance_profile().get("efa_interfaces") or snapshot.efa_present or not snapshot.pci:
        return []
    return [Finding(
        id="ND-RES-002", category="resource", severity=SEVERITY_WARNING,
        title=f"no EFA device on this {ctx.facts.host.instance_type}",
        detail=("Multi-node collectives fail with `OFI plugin initNet() failed is EFA enabled?`; single-node jobs "
                "are unaffected. Launch with EFA interfaces and install the EFA driver."),
        evidence={"instance_type": ctx.facts.host.instance_type},
        fix=Fix([command("curl", "-O", "https://efa-installer.amazonaws.com/aws-efa-installer-latest.tar.gz"),
                 pipeline(["tar", "-xf", "aws-efa-installer-latest.tar.gz"], ["cd", "aws-efa-installer"],
                          ["sudo", "./efa_installer.sh", "--yes"], operator="&&")]),
    )]


def _switch(path: str) -> Optional[str]:
    """The PCIe switch a function sits behind: its parent's parent in the PCI tree (the switch's upstream port,
    above the downstream port the function hangs from). None when the tree is too shallow to show a switch."""
    below_root = path.split("/")[4:]  # '', 'sys', 'devices', 'pci0000:00', then the bridges and the function
    return path.rsplit("/", 2)[0] if len(below_root) >= 3 else None


def unpaired_devices(pci: list[PciFunction], efa_paths: list[str]) -> Optional[list[str]]:
    """The Neuron devices (PCI addresses) with no EFA function behind their PCIe switch, or None when the tree does
    not show it. On trn2 each switch holds two devices and their two EFA interfaces (Mooncake #3888, measured on a
    trn2.48xlarge: "16 devices resolve into 8 PCIe switches x 2 EFA NICs"; libfabric's fabtests pick "a specific EFA
    device for a given Neuron core" on trn2). ASSUMED for trn1n (16 EFA, 16 devices): the same pairing."""
    switches = {function.address: _switch(function.sysfs_path) if function.sysfs_path else None for function in pci}
    if not efa_paths or not switches or None in switches.values():
        return None
    return sorted(address for address, switch in switches.items()
                  if not any(path.startswith(f"{switch}/") for path in efa_paths))


def efa_short(ctx: RuleContext) -> list[Finding]:
    """ND-RES-004: some EFA interfaces, fewer than the instance type has (none at all is ND-RES-002); where the
    instance pairs an interface with each device and the PCI tree shows the pairing, the devices left without one."""
    snapshot = ctx.facts.host.snapshot
    expected = ctx.instance_profile().get("efa_interfaces")
    if not isinstance(expected, int) or not 0 < snapshot.efa_functions < expected:
        return []
    one_each = expected >= len(snapshot.pci) > 0
    unpaired = unpaired_devices(snapshot.pci, snapshot.efa_paths) if one_each else None
    shown = f"; no EFA behind the PCIe switch of the Neuron device(s) at {', '.join(unpaired)}" if unpaired else ""
    return [Finding(
        id="ND-RES-004", category="resource", severity=SEVERITY_WARNING,
        title=f"{snapshot.efa_functions} of {expected} EFA interfaces on this {ctx.facts.host.instance_type}{shown}",
        detail=("Collectives across nodes run over EFA: with fewer interfaces than the instance has, multi-node jobs "
                "get a fraction of the network bandwidth. Launch templates usually attach all of them (one network "
                "card each); an interface that is attached but missing here is a hardware or driver problem."),
        evidence={"instance_type": ctx.facts.host.instance_type, "efa_functions": snapshot.efa_functions,
                  "expected": expected, **({"unpaired_devices": unpaired} if unpaired is not None else {})},
    )]


def memlock_limit(ctx: RuleContext) -> list[Finding]:
    """ND-RES-003: a finite locked-memory limit with EFA present (EFA registers pinned memory)."""
    snapshot = ctx.facts.host.snapshot
    limit = snapshot.memlock_limit
    if limit is None or limit < 0 or not snapshot.efa_present:
        return []
    return [Finding(
        id="ND-RES-003", category="resource", severity=SEVERITY_WARNING,
        title=f"locked-memory limit is {limit // 1024} KiB with EFA present",
        detail=("EFA pins communication buffers: with a finite limit libfabric fails with -12 (cannot allocate "
                "memory) once a job registers more than it. The EFA installer sets `memlock unlimited` in "
                f"/etc/security/limits.d/01_efa.conf for this reason (read from {snapshot.memlock_source})."),
        evidence={"memlock_limit": limit, "source": snapshot.memlock_source},
        fix=Fix([pipeline(["printf", "* soft memlock unlimited\\n* hard memlock unlimited\\n"],
                          ["sudo", "tee", "/etc/security/limits.d/01_efa.conf"]),
                 command("ulimit", "-l", "unlimited", note="this shell, until you log in again")]),
    )]


def environment_on_noexec(ctx: RuleContext) -> list[Finding]:
    """ND-RES-005: an environment whose folder is on a mount with `noexec`. The kernel refuses to map a file of a
    noexec filesystem for execution (mmap(2): EPERM with PROT_EXEC), which every native extension needs: `import
    torch` fails with `failed to map segment from shared object` (users' reports of the same error for libraries on
    noexec partitions and a tmpfs /tmp). A documented refusal, so an error."""
    mounts = {mount.path: mount for mount in ctx.facts.host.snapshot.mounts}
    found = []
    for env in ctx.facts.environments:
        mount = mounts.get(env.path)
        if mount is None or not mount.noexec:
            continue
        found.append(Finding(
            id="ND-RES-005", category="resource", severity=SEVERITY_ERROR,
            title=f"the environment {env.path} is on a noexec mount ({mount.point}): its native libraries cannot "
                  "be loaded",
            detail=("Python extensions and the libraries beside them (torch's libtorch, libneuronxla, neuronx-cc's "
                    "own) are mapped for execution when imported; on a filesystem mounted noexec the kernel refuses "
                    "and the import fails with `ImportError: …so: failed to map segment from shared object`."),
            evidence={"environment": env.path, "resolved": mount.resolved, "mount": mount.point,
                      "filesystem": mount.filesystem, "mount_options": mount.options, "mount_table": mount.table},
            fix=Fix([note("remount {} without noexec (its line in /etc/fstab, or the pod's volume), or create the "
                          "environment on a filesystem that allows execution", mount.point)]),
        ))
    return found


RULE_SET = RuleSet(
    rules=(compile_cache_space, efa_absent, efa_short, memlock_limit, environment_on_noexec),
    findings=(
        FindingSpec("ND-RES-001", "resource", SEVERITY_WARNING, "little free disk for the compile cache",
                    also=(SEVERITY_ERROR,)),
        FindingSpec("ND-RES-002", "resource", SEVERITY_WARNING, "no EFA on a trn1.32xlarge/trn1n"),
        FindingSpec("ND-RES-004", "resource", SEVERITY_WARNING, "fewer EFA interfaces than the instance type has"),
        FindingSpec("ND-RES-003", "resource", SEVERITY_WARNING, "a finite memlock limit with EFA"),
        FindingSpec("ND-RES-005", "resource", SEVERITY_ERROR, "a Python environment on a noexec mount: its native "
                    "libraries cannot be loaded"),
    ),
)
