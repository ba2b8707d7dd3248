"""Runtime against driver, compiler against runtime, the runtime/tools files, and the host's release.

Sources: nrt-ts and neuron-runtime/faq.rst (the driver is backward compatible with older runtimes; a newer
runtime can need a newer driver), runtime.rst (the documented breaks in compat.json), compiler faq
(NEFF compatibility holds within a major; a NEFF from a newer compiler may not load on an older runtime).
"""

from __future__ import annotations

from typing import Optional

from neurondoctor.facts.python_env import PythonEnvironment
from neurondoctor.neuron_version import names_a_release, normalize_neuron_version, release_tuple, release_words
from neurondoctor.rules.check import Check, FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext, inf1_host, neuron_host
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Command, Fix, Step, alternative, command, note
from neurondoctor.rules.host_stack import legacy_stack
from neurondoctor.rules.host_stack.instance import DKMS, last_inf1_driver
from neurondoctor.rules.host_stack.os_commands import (
    RELOAD_DRIVER,
    host_target_release,
    install_command,
    reinstall_command,
    release_version,
)
from neurondoctor.rules.python_stack.framework_pins import describe_releases
from neurondoctor.rules.python_stack.partial_release import MANIFESTS_UPDATE
from neurondoctor.rules.python_stack.release_detection import narrow_releases

RUNTIME = "aws-neuronx-runtime-lib"
DRIVER = "aws-neuronx-dkms"
COLLECTIVES = "aws-neuronx-collectives"
TOOLS = "aws-neuronx-tools"


def _newest(releases: tuple[str, ...]) -> Optional[str]:
    return max(releases, key=release_tuple) if releases else None


def _documented_break(ctx: RuleContext, driver: str, runtime: str) -> Optional[dict[str, str]]:
    for rule in ctx.catalog.compat.get("driver_runtime_breaks", []):
        if "driver_at_least" in rule and release_tuple(driver) >= release_tuple(rule["driver_at_least"]) \
                and release_tuple(runtime) < release_tuple(rule["runtime_below"]):
            return dict(rule)
        if "runtime_at_least" in rule and release_tuple(runtime) >= release_tuple(rule["runtime_at_least"]) \
                and release_tuple(driver) < release_tuple(rule["driver_below"]):
            return dict(rule)
    return None


def driver_runtime_mismatch(ctx: RuleContext) -> list[Finding]:
    """ND-RT-001: a runtime from a newer release than the driver, or a documented incompatible pair."""
    snapshot = ctx.facts.host.snapshot
    host = ctx.host_release()
    driver, runtime = host.versions.get(DRIVER), host.versions.get(RUNTIME)
    driver_releases = host.releases.get(DRIVER, ())
    if snapshot.container and snapshot.loaded_driver_version:
        # An image's runtime runs on the host's driver: judge it against the loaded module, not the image's files;
        # a module whose version names no release (Bottlerocket's `2.x.7693.0`) is of unknown age: not judged.
        loaded = snapshot.loaded_driver_version
        driver = normalize_neuron_version(loaded) if names_a_release(loaded) else None
        driver_releases = tuple(ctx.catalog.releases_with(DRIVER, driver)) if driver else ()
    if driver is None or runtime is None:
        return []
    documented = _documented_break(ctx, driver, runtime)
    runtime_releases = host.releases.get(RUNTIME, ())
    driver_release, runtime_release = _newest(driver_releases), _newest(runtime_releases)
    # Newer only when no release ships both: runtime 2.30.51.0 is in 2.28.0 and 2.28.1, driver 2.26.5.0 in 2.28.0.
    newer_runtime = bool(driver_release and runtime_release and not set(driver_releases) & set(runtime_releases)
                         and min(release_tuple(name) for name in runtime_releases) > release_tuple(driver_release))
    if not documented and not newer_runtime:
        return []
    target = runtime_release if newer_runtime else driver_release
    packages = [(DRIVER, release_version(ctx, target, DRIVER))] if newer_runtime else [
        (RUNTIME, release_version(ctx, target, RUNTIME)), (COLLECTIVES, release_version(ctx, target, COLLECTIVES))]
    symptom = documented["symptom"] if documented else (
        "a runtime newer than the driver can fail in nrt_init with `This Neuron Runtime (compatibility id: N) is "
        "not compatible with the installed aws-neuron-dkms package`")
    return [Finding(
        id="ND-RT-001",
        category="driver-runtime-mismatch",
        severity=SEVERITY_ERROR if documented else SEVERITY_WARNING,
        title=(f"runtime-lib {runtime} (Neuron {runtime_release}) with driver {driver} (Neuron {driver_release})"),
        detail=f"{symptom} ({documented['source'] if documented else 'nrt-ts; gh#655'}).",
        evidence={DRIVER: driver, RUNTIME: runtime, "driver_release": driver_release,
                  "runtime_release": runtime_release},
        fix=Fix([*([note("on the host, not in this container:")] if snapshot.container and newer_runtime else []),
                 install_command(snapshot, packages), *(RELOAD_DRIVER if newer_runtime else ())]),
    )]


def compiler_newer_than_runtime(ctx: RuleContext) -> list[Finding]:
    """ND-RT-002: a venv's neuronx-cc from a newer release than the host runtime: its NEFFs may not load."""
    host = ctx.host_release()
    runtime_release = _newest(host.releases.get(RUNTIME, ()))
    if runtime_release is None:
        return []
    findings = []
    for env in ctx.facts.environments:
        compiler = next((package for package in ctx.release_of(env).packages if package.dist.name == "neuronx-cc"),
                        None)
        if compiler is None or not compiler.releases:
            continue
        compiler_release = _newest(compiler.releases)
        if compiler_release is None or release_tuple(compiler_release) <= release_tuple(runtime_release):
            continue
        if runtime_release in compiler.releases:
            continue
        findings.append(Finding(
            id="ND-RT-002",
            category="runtime-compiler-mismatch",
            severity=SEVERITY_ERROR,
            title=(f"neuronx-cc {compiler.dist.version} (Neuron {compiler_release}) is newer than the host runtime "
                   f"{host.versions.get(RUNTIME)} (Neuron {runtime_release})"),
            detail=("NEFFs from a newer compiler can fail to load on an older runtime (`NEFF version … not "
                    "supported`, err 10; gh#820, gh#823). Upgrade the host's runtime, or build an environment of "
                    "the host's release (the compiler alone pinned back would mix releases)."),
            evidence={"venv": env.path, "neuronx-cc": compiler.dist.version, RUNTIME: host.versions.get(RUNTIME)},
            fix=Fix([*host_upgrade_commands(ctx, compiler_release),
                     alternative("without touching the host: an environment of its release "
                                 f"(Neuron {runtime_release})"),
                     rebuild_for_release(env, runtime_release)]),
        ))
    return findings


def runtime_files_missing(ctx: RuleContext) -> list[Finding]:
    """ND-RT-003: the driver is here but libnrt, collectives or the tools are not (or not on PATH)."""
    snapshot = ctx.facts.host.snapshot
    if "neuron" not in snapshot.modules and "aws-neuronx-dkms" not in snapshot.packages:
        return []
    if snapshot.node_role is not None:
        return []  # a container node: the runtime and collectives come in the images, the tools are optional
    release = host_target_release(ctx)
    missing: list[tuple[str, str]] = []
    # Inf1's frameworks (torch-neuron, tensorflow-neuron) bundle their runtime: no aws-neuronx-runtime-lib there
    # unless the host installed one (setup/legacy-inf1).
    bundled_runtime = inf1_host(ctx) and RUNTIME not in snapshot.packages
    if not snapshot.runtime_libraries and not bundled_runtime:
        missing.append((RUNTIME, "libnrt.so: no process can use a NeuronCore (`libnrt.so.1: cannot open shared "
                                 "object file`)"))
    multi_device = len(snapshot.pci) > 1 or len(snapshot.device_nodes) > 1
    wants_collectives = multi_device or COLLECTIVES in snapshot.packages
    if not snapshot.collectives_libraries and not bundled_runtime and wants_collectives:
        missing.append((COLLECTIVES, "libnccom.so: collectives fail with `NCCL init error: Error opening "
                                     "libnccom.so`"))
    if "neuron-ls" not in snapshot.tools:
        missing.append((TOOLS, "neuron-ls, neuron-top, neuron-monitor"))
    if not missing:
        return []
    errors = [name for name, _ in missing if name != TOOLS]
    # A package the package manager lists while its files are gone (a cleanup took /opt/aws/neuron) is not
    # missing: installing it again does nothing; it is reinstalled at the version it is.
    gone = [name for name, _ in missing if name in snapshot.packages]
    absent = [name for name, _ in missing if name not in snapshot.packages]
    commands = ([install_command(snapshot, [(name, release_version(ctx, release, name)) for name in absent])]
                if absent else [])
    if gone:
        commands.append(reinstall_command(snapshot, [(name, snapshot.packages[name].version) for name in gone]))
    title = "; ".join(part for part in (
        "missing on this host: " + ", ".join(absent) if absent else "",
        "installed, but the files are gone: " + ", ".join(gone) if gone else "") if part)
    return [Finding(
        id="ND-RT-003",
        category="tools-missing",
        severity=SEVERITY_ERROR if errors else SEVERITY_WARNING,
        title=title,
        detail="; ".join(f"{name}: {why}" for name, why in missing) + " (nrt-ts).",
        evidence={"runtime_libraries": snapshot.runtime_libraries,
                  "collectives_libraries": snapshot.collectives_libraries, "tools": snapshot.tools,
                  "installed_without_files": gone},
        fix=Fix(commands),
    )]


def _inf1_pin_aside(ctx: RuleContext, odd: list[str]) -> list[str]:
    """On Inf1 the driver is pinned to the last line that supports it while the tools follow the releases (the
    Inf1 install guide; instance.py `_SOURCE`): that driver is not a mixed release. Judged without it, the other
    packages must still agree."""
    host = ctx.host_release()
    if not inf1_host(ctx) or DKMS not in host.versions:
        return odd
    last = last_inf1_driver(ctx)
    if not last or release_tuple(host.versions[DKMS])[:2] > release_tuple(last):
        return odd
    others = [name for name in host.releases if name != DKMS and host.releases[name]]
    _, outliers = narrow_releases([host.releases[name] for name in others])
    return [others[index] for index in outliers] + [name for name in host.unknown if name != DKMS]


def host_release_mixed(ctx: RuleContext) -> list[Finding]:
    """ND-REL-003: host packages from different releases, or host and environments on releases apart."""
    host = ctx.host_release()
    findings = []
    snapshot = ctx.facts.host.snapshot
    newer = [name for name in host.unknown if ctx.catalog.newer_than_known(name, host.versions[name])]
    odd = [name for name in _inf1_pin_aside(ctx, host.outliers + host.unknown) if name not in newer]  # ND-REL-005
    if odd:
        target = host.release or ctx.catalog.whole_latest
        findings.append(Finding(
            id="ND-REL-003", category="mixed-sdk-release", severity=SEVERITY_WARNING,
            title="host Neuron packages are from different releases: " + ", ".join(
                f"{name} {host.versions[name]} ({describe_releases(host.releases[name]) or 'unknown'})"
                for name in odd),
            detail="Driver, runtime, collectives and tools are released and tested together "
                   "(docs/neuron-facts.md §3.1).",
            evidence={"versions": host.versions, "agreed": host.agreed},
            fix=Fix([install_command(snapshot, [(name, release_version(ctx, target, name)) for name in odd])]),
        ))
    if host.release is None:
        return findings
    for env in ctx.facts.environments:
        env_release = ctx.release_of(env).release
        if env_release is None or set(ctx.release_of(env).agreed) & set(host.agreed) or env_release == host.release:
            continue  # a release both could be (a venv of 2.28.0/2.28.1 on a 2.28.0 host) is not apart
        dropped = _not_in_release(ctx, env, host.release) \
            if release_tuple(env_release) < release_tuple(host.release) else []
        findings.append(Finding(
            id="ND-REL-004", category="mixed-sdk-release", severity=SEVERITY_WARNING,
            title=f"host is on Neuron {release_words(host.agreed)}, {env.path} on Neuron "
                  f"{release_words(ctx.release_of(env).agreed) or env_release}",
            detail="The OS packages and the Python packages come from different releases; only the pairs "
                   "the release notes test are known to work." + (
                       f" Neuron {host.release} does not list {', '.join(dropped)}: an environment of it has no "
                       "such package (its end of support, if AWS announced one, is an ND-EOS finding)."
                       if dropped else ""),
            evidence={"host": host.release, "venv": env.path, "environment": env_release,
                      "not_in_host_release": dropped},
            fix=Fix(_realign_commands(ctx, env, host.release, env_release)),
        ))
    return findings


def _not_in_release(ctx: RuleContext, env: PythonEnvironment, release: str) -> list[str]:
    """The Neuron pip packages of this environment that `release` does not list at all (NxD Training after 2.28,
    Transformers NeuronX after 2.26): what an environment rebuilt for that release will not have."""
    neuron = ctx.catalog.neuron_pip_packages()
    return sorted(dist.display_name for name, dist in env.effective_distributions().items()
                  if name in neuron and not dist.placeholder and not ctx.catalog.entries(release, name))


def _realign_commands(ctx: RuleContext, env: PythonEnvironment, host_release: str, env_release: str) -> list[Step]:
    """An environment older than the host is rebuilt for the host's release beside it (the host is shared: its
    runtime is not moved back for one environment). A newer one gets the host's runtime, collectives and tools of
    its release, and the driver only when the installed one is older (drivers are backward compatible,
    docs/neuron-facts.md §3.2), then reloaded. A release known only in part has no host versions to pin: the data
    that has them is fetched first."""
    if release_tuple(env_release) < release_tuple(host_release):
        return [rebuild_for_release(env, host_release)]
    if env_release in ctx.catalog.partial:  # its host packages are not in the data: fetch them, never guess them
        return [*MANIFESTS_UPDATE.steps, note(f"then `neurondoctor check` names the host packages of Neuron "
                                                 f"{env_release} (the data knows that release only in part)")]
    return [*host_upgrade_commands(ctx, env_release)]


def rebuild_for_release(env: PythonEnvironment, release: str) -> Command:
    """A guarded environment of `release` beside this one: pinning one package back would mix releases
    (ND-PIN-001), and the host is shared."""
    return command("neurondoctor", "venv", "create", env.path.rstrip("/") + "-" + release, "--release", release)


def host_upgrade_commands(ctx: RuleContext, release: str) -> list[Command]:
    """The host's runtime, collectives and tools of `release`, and its driver only when the installed one is older
    (drivers are backward compatible, docs/neuron-facts.md §3.2; a runtime newer than its driver fails, ND-RT-001), then
    the new driver loaded."""
    snapshot = ctx.facts.host.snapshot
    packages = [(name, release_version(ctx, release, name)) for name in (RUNTIME, COLLECTIVES, TOOLS)
                if name in snapshot.packages or name != TOOLS]
    driver = release_version(ctx, release, DRIVER)
    installed = snapshot.packages.get(DRIVER)
    reload = False
    if driver and installed and release_tuple(normalize_neuron_version(installed.version)) < release_tuple(driver):
        packages.insert(0, (DRIVER, driver))
        reload = "neuron" in snapshot.modules
    return [install_command(snapshot, packages), *(RELOAD_DRIVER if reload else ())]


def runtime_summary(ctx: RuleContext) -> str:
    """`runtime-lib 2.33.10.0, collectives 2.33.10.0, tools 2.31.15.0`."""
    versions = ctx.host_release().versions
    shown = [f"{name.replace('aws-neuronx-', '')} {versions[name]}" for name in (RUNTIME, COLLECTIVES, TOOLS)
             if name in versions]
    role = ctx.facts.host.snapshot.node_role
    if role is not None:
        return "; ".join(["not on this node: the runtime and collectives run in its containers", *shown])
    return ", ".join(shown) or "runtime files present"


RULE_SET = RuleSet(
    rules=(driver_runtime_mismatch, compiler_newer_than_runtime, runtime_files_missing),
    findings=(
        FindingSpec("ND-RT-001", "driver-runtime-mismatch", SEVERITY_ERROR,
                    "the runtime is from a newer release than the driver, or a documented incompatible pair",
                    also=(SEVERITY_WARNING,)),
        FindingSpec("ND-RT-002", "runtime-compiler-mismatch", SEVERITY_ERROR,
                    "an environment's neuronx-cc is from a newer release than the host runtime"),
        FindingSpec("ND-RT-003", "tools-missing", SEVERITY_ERROR, "libnrt, libnccom or the Neuron tools missing",
                    also=(SEVERITY_WARNING,)),
    ),
)
HOST_RELEASE_RULE_SET = RuleSet(
    rules=(host_release_mixed,),
    findings=(
        FindingSpec("ND-REL-003", "mixed-sdk-release", SEVERITY_WARNING, "host packages from different releases"),
        FindingSpec("ND-REL-004", "mixed-sdk-release", SEVERITY_WARNING,
                    "the host and an environment on different releases"),
    ),
)
CHECK = Check("runtime", "Runtime & tools", (RULE_SET, legacy_stack.RULE_SET), runtime_summary,
              applies=neuron_host, needs=("packages", "runtime"))
