"""What `upgrade` would do to move this host and its environments to another Neuron release, and how each step is
undone (pure: host facts, environments and release data in, a plan out; the same function gives the undo at plan
time, from the host the plan projects, and at rollback time, from the host as it is then).

Preflight first: the target must be in the release data (whole, or in part with what is not known said), list
this instance family, not end this OS, and build for this kernel; an environment whose Python the target does not
support is rebuilt beside on one it does, or blocked. Inf1 keeps its driver on the last line that supports it
(announce-correction-neuron-driver-support-inf1.rst). Held Neuron packages are named; a dnf versionlock is lifted
only by a step of its own and set again at the new version, never silently.

Then the steps, in order: drain the Slurm node; stop the processes holding NeuronCores (named); kernel headers for
every installed kernel the driver must build for; the driver (and its reload); the runtime, collectives, tools and
container hook; each environment, in place with the target's pins when its framework line continues on its
Python, else a new guarded environment beside the old one (`venv create`); `check`; the canary where a device
exists; resume the node. Where the data says a driver and a runtime work only together (compat.json
`driver_runtime_breaks`, from the runtime release notes), they move in one step with the devices idle.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from neurondoctor import exit_codes
from neurondoctor.actions.bootstrap.plan import SUPPORTED_OS, reload_step
from neurondoctor.actions.venv.plan import PlanError, plan_venv
from neurondoctor.facts import Facts, HostFacts
from neurondoctor.facts.host import HostSnapshot, OsPackage
from neurondoctor.facts.python_env import PythonEnvironment
from neurondoctor.neuron_version import normalize_neuron_version, release_tuple
from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.rules.context import RuleContext, inf1_host, pip_command
from neurondoctor.rules.fix import Command, command
from neurondoctor.rules.host_stack.instance import family_version, last_inf1_driver
from neurondoctor.rules.host_stack.node_driver import MANAGED_IMAGES, move_on_words
from neurondoctor.rules.host_stack.os_commands import headers_command, install_command, package_manager

DKMS = "aws-neuronx-dkms"
OCI_HOOK = "aws-neuronx-oci-hook"
RUNTIME_PACKAGES = ("aws-neuronx-runtime-lib", "aws-neuronx-collectives", "aws-neuronx-tools", OCI_HOOK)
HOST_PACKAGES = (DKMS, *RUNTIME_PACKAGES)
# The pip packages an environment step pins, and restores on rollback.
ENV_PACKAGES = ("torch-neuronx", "neuronx-cc", "libneuronxla", "torch", "torch-xla", "torchvision", "nki")
INF1_SOURCE = "about-neuron/announcements/neuron2.x/announce-correction-neuron-driver-support-inf1.rst"
BREAK_SOURCE = "manifests/compat.json driver_runtime_breaks"
DRAIN_REASON = "neurondoctor upgrade"
_VERSION = re.compile(r"\d+(\.\d+){1,3}[A-Za-z0-9.+~_-]{0,40}\Z")
_NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")


@dataclass(frozen=True)
class Blocked:
    reason: str
    source: str


@dataclass
class UpgradeStep:
    """One step: `commands` run in order; `undo` puts back what they changed (run by --rollback in reverse step
    order); `undo_note` says what the undo cannot give back. `judged_at_apply`: its commands are decided again on
    the host the earlier steps left (the driver reload: the package's own scripts may have reloaded it)."""

    id: str
    kind: str
    why: str
    commands: list[Command] = field(default_factory=list)
    needs: list[str] = field(default_factory=list)
    undo: list[Command] = field(default_factory=list)
    undo_note: str = ""
    judged_at_apply: bool = False
    deferred: str = ""  # why --apply leaves it to be run by hand (a new environment under --root)


@dataclass
class EnvironmentState:
    """An environment as the upgrade found it: its Python, release, framework stack and the versions it had."""

    path: str
    python: Optional[str]
    release: Optional[str]
    stack: Optional[str]
    pins: dict[str, str]
    guarded: bool


@dataclass
class FromState:
    """What the host had before: each Neuron OS package's version and hold, the package manager, the Slurm node,
    and each environment. Kept in the status file: the rollback rebuilds its commands from it."""

    release: Optional[str]
    manager: str
    packages: dict[str, str]
    held: list[str]
    driver_loaded: Optional[str]
    slurm_node: Optional[str]
    environments: list[EnvironmentState] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"release": self.release, "manager": self.manager, "packages": dict(self.packages),
                "held": list(self.held), "driver_loaded": self.driver_loaded, "slurm_node": self.slurm_node,
                "environments": [dataclasses.asdict(env) for env in self.environments]}


@dataclass
class UpgradeFacts:
    """What the plan reads: the host, the environments named, every installed kernel with whether its headers are
    there, the Slurm node name when this host is a Slurm node, the interpreters (`3.12`) the host has, and whether
    this is the live host (the canary and `venv create` need it)."""

    host: HostFacts
    environments: list[PythonEnvironment] = field(default_factory=list)
    kernels: list[tuple[str, bool]] = field(default_factory=list)
    slurm_node: Optional[str] = None
    interpreters: list[str] = field(default_factory=list)
    live: bool = False
    neurondoctor: tuple[str, ...] = ("neurondoctor",)  # how the check, canary and venv steps call this program


@dataclass
class UpgradePlan:
    target: str
    start: FromState
    to: dict[str, Any]
    blocked: list[Blocked] = field(default_factory=list)
    steps: list[UpgradeStep] = field(default_factory=list)
    not_known: list[str] = field(default_factory=list)
    cannot_undo: list[str] = field(default_factory=list)

    @property
    def changes(self) -> bool:
        return any(step.kind not in ("verify",) for step in self.steps)


def family_of(host: HostFacts) -> Optional[str]:
    if host.instance_family:
        return host.instance_family
    families = {function.family for function in host.snapshot.pci if function.family}
    return families.pop() if len(families) == 1 else None


def _installed(snapshot: HostSnapshot) -> dict[str, str]:
    return {name: normalize_neuron_version(snapshot.packages[name].version) for name in HOST_PACKAGES
            if name in snapshot.packages}


def _wanted(catalog: ReleaseCatalog, target: str, family: Optional[str], installed: Mapping[str, str],
            inf1: bool, last_inf1: str, blocked: list[Blocked]) -> dict[str, str]:
    """Each installed Neuron OS package's version in the target for this family. Inf1, where the target's driver
    no longer lists it, keeps a driver of its last line (`2.24.`, a prefix: the install pins `2.24.*`); a package
    the target ships only for other families is left as it is (ND-INST-003 judges it)."""
    wanted: dict[str, str] = {}
    for name in HOST_PACKAGES:
        if name not in installed:
            continue
        if name == DKMS and inf1 and last_inf1 and family_version(catalog, target, name, "inf1") is None:
            if release_tuple(installed[name])[:2] != release_tuple(last_inf1):
                wanted[name] = f"{last_inf1}."
            continue
        entries = catalog.entries(target, name)
        version = family_version(catalog, target, name, family) if family else (
            entries[0].version if entries else None)
        if version is not None:
            wanted[name] = normalize_neuron_version(version)
        elif not entries and name == DKMS:  # a driver for other families only: the preflight said so
            blocked.append(Blocked(f"the release data does not list Neuron {target}'s {name}: its version is not "
                                   "known", _partial_source(catalog, target)))
    return wanted


def _partial_source(catalog: ReleaseCatalog, target: str) -> str:
    partial = catalog.partial.get(target)
    return partial.source if partial else f"manifests/releases ({target})"


def _breaks(compat: Mapping[str, Any], driver: str, runtime: str) -> Optional[dict[str, Any]]:
    """The entry of compat.json `driver_runtime_breaks` a driver and a runtime meet, if any."""
    for entry in compat.get("driver_runtime_breaks", []):
        if not isinstance(entry, dict):
            continue
        if "driver_at_least" in entry and release_tuple(driver) >= release_tuple(entry["driver_at_least"]) \
                and release_tuple(runtime) < release_tuple(entry.get("runtime_below", "0")):
            return entry
        if "runtime_at_least" in entry and release_tuple(runtime) >= release_tuple(entry["runtime_at_least"]) \
                and release_tuple(driver) < release_tuple(entry.get("driver_below", "0")):
            return entry
    return None


def _preflight(facts: UpgradeFacts, catalog: ReleaseCatalog, target: str, blocked: list[Blocked],
               not_known: list[str]) -> None:
    snapshot = facts.host.snapshot
    if target not in catalog.releases:
        raise exit_codes.UserError(f"--to {target}: not a Neuron release the data knows (newest known: "
                                   f"{catalog.latest}; `neurondoctor manifests update` fetches newer ones)")
    partial = catalog.partial.get(target)
    if partial:
        not_known += [f"Neuron {target} is known in part: {fact} not known" for fact in partial.facts]
    if snapshot.container:
        blocked.append(Blocked("this is a container: its driver is the host's, and its runtime comes with its image; "
                               "upgrade the host, and build the image again from the target's Dockerfile",
                               "the Neuron Deep Learning Containers' Dockerfiles install the runtime and tools only"))
    role = snapshot.node_role
    if role is not None and role.platform in MANAGED_IMAGES:
        blocked.append(Blocked(f"this is an {role.name}: its Neuron packages are its image's, and a node launched "
                               f"again from the image does not keep a change made on it; {move_on_words(role)}",
                               MANAGED_IMAGES[role.platform]))
    os_key = (snapshot.os.id or "", snapshot.os.version_id or "")
    if os_key not in SUPPORTED_OS:
        blocked.append(Blocked(f"upgrade knows the install steps of Ubuntu 22.04/24.04/26.04 and Amazon Linux 2023; "
                               f"this is {snapshot.os.pretty_name or ' '.join(os_key) or 'an unknown OS'}",
                               "setup/pytorch/manual.rst (the Neuron setup pages)"))
    end = catalog.os_facts.end_for(*os_key, target)
    if end is not None:
        blocked.append(Blocked(f"Neuron {target} does not support {snapshot.os.pretty_name or ' '.join(os_key)}: "
                               f"its last {end.part} line is {end.last_line}", end.source))
    family = family_of(facts.host)
    if family is None:
        not_known.append("this host's instance family (no instance type or Neuron PCI device read): whether Neuron "
                         f"{target} supports it is not judged")
    elif not partial and catalog.entries(target, DKMS) and family != "inf1" and not any(
            family in entry.instances for entry in catalog.entries(target, DKMS)):
        blocked.append(Blocked(f"Neuron {target} does not support {family} (its driver lists "
                               f"{', '.join(catalog.entries(target, DKMS)[0].instances)})",
                               "n2-manifest.json supported_instances"))
    kernel = snapshot.kernel or ""
    for minimum in catalog.compat.get("kernel_driver_minimums", []):
        wanted = catalog.entries(target, DKMS)
        if kernel and wanted and release_tuple(kernel)[:2] >= release_tuple(minimum["kernel_at_least"]) \
                and release_tuple(wanted[0].version) < release_tuple(minimum["dkms_at_least"]) and family != "inf1":
            blocked.append(Blocked(f"kernel {kernel} needs aws-neuronx-dkms {minimum['dkms_at_least']} or newer; "
                                   f"Neuron {target} ships {wanted[0].version}, which does not build for it",
                                   minimum["source"]))


def _environment_state(env: PythonEnvironment, ctx: RuleContext) -> EnvironmentState:
    present = env.effective_distributions()
    pins = {name: present[name].version for name in ENV_PACKAGES if name in present}
    neuronx = present.get("torch-neuronx")
    stack = ctx.catalog.framework_stack("torch-neuronx", neuronx.version) if neuronx else None
    return EnvironmentState(path=env.path, python=env.python_major_minor, release=ctx.release_of(env).release,
                            stack=stack, pins=pins, guarded=env.neurondoctor_venv is not None)


def start_state(facts: UpgradeFacts, catalog: ReleaseCatalog) -> FromState:
    snapshot = facts.host.snapshot
    ctx = RuleContext(Facts(host=facts.host, environments=list(facts.environments)), catalog)
    installed = _installed(snapshot)
    return FromState(release=ctx.host_release().release, manager=package_manager(snapshot), packages=installed,
                     held=[name for name in installed if snapshot.packages[name].held],
                     driver_loaded=snapshot.loaded_driver_version, slurm_node=facts.slurm_node,
                     environments=[_environment_state(env, ctx) for env in facts.environments])


def projected(snapshot: HostSnapshot, versions: Mapping[str, str]) -> HostSnapshot:
    """The host as a plan leaves it: the packages at `versions` (a prefix `2.24.` stays as installed)."""
    packages = dict(snapshot.packages)
    for name, version in versions.items():
        old = packages.get(name)
        if not version.endswith("."):
            packages[name] = OsPackage(name, version, old.source if old else "dpkg", held=bool(old and old.held))
    return dataclasses.replace(snapshot, packages=packages)


# ---- each step's undo: the same function at plan time (on the projected host) and at rollback (on the real one) ---

def undo_commands(step_id: str, start: FromState, snapshot: HostSnapshot,
                  environments: Sequence[PythonEnvironment] = (), added: Sequence[str] = ()) -> list[Command]:
    """The commands that put back what step `step_id` changed, on `snapshot` (the host after the step): the
    previous package versions pinned back (apt moves them down only when told, install_command says so), the
    dnf versionlocks as they were, the node's Slurm state, an environment's previous pins. Steps that change
    nothing the rollback can restore (headers, stopped processes, the check) have none. `added`: the pip packages an
    environment step installed that the environment did not have (given at plan time; at rollback time read from the
    environment as it is)."""
    names = {"driver": (DKMS,), "runtime": RUNTIME_PACKAGES, "driver-runtime": HOST_PACKAGES}.get(step_id)
    if names is not None:
        back = [(name, start.packages[name]) for name in names if name in start.packages
                and name in snapshot.packages
                and normalize_neuron_version(snapshot.packages[name].version) != start.packages[name]]
        return [install_command(snapshot, back)] if back else []
    if step_id == "release-holds":
        held = [name for name in start.held if name in start.packages]
        return [command("sudo", "dnf", "versionlock", "add", *(f"{name}-{start.packages[name]}*" for name in held))] \
            if held else []
    if step_id == "hold":
        held = [name for name in start.held if name in start.packages]
        return [command("sudo", "dnf", "versionlock", "delete", *held)] if held else []
    if step_id == "drain" and start.slurm_node:
        return [_scontrol(start.slurm_node, "RESUME")]
    if step_id == "resume" and start.slurm_node:
        return [_scontrol(start.slurm_node, "DRAIN")]
    if step_id.startswith("environment:"):
        path = step_id.split(":", 1)[1]
        state = next((env for env in start.environments if env.path == path), None)
        env = next((env for env in environments if env.path == path), None)
        if state is None or env is None or not state.pins:
            return []
        present = env.effective_distributions()
        extra = [name for name in (added or [name for name in ENV_PACKAGES if name in present])
                 if name not in state.pins]
        return [pip_command(env, "install", "--no-deps", *(f"{name}=={version}" for name, version in
                                                          sorted(state.pins.items()))),
                *([pip_command(env, "uninstall", "-y", *extra)] if extra else [])]
    return []


def _scontrol(node: str, state: str) -> Command:
    words = ["sudo", "scontrol", "update", f"NodeName={node}", f"State={state}"]
    if state == "DRAIN":
        words.append(f"Reason={DRAIN_REASON}")
    return command(*words)


# ---- the steps ----------------------------------------------------------------------------------------------------

def _holder_step(snapshot: HostSnapshot, needs: list[str]) -> Optional[UpgradeStep]:
    if not snapshot.holders:
        return None
    named = "; ".join(f"{holder.pid} ({holder.command})" + (f" of Slurm job {holder.slurm_job}"
                                                             if holder.slurm_job else "")
                      for holder in snapshot.holders)
    return UpgradeStep(
        "stop-holders", "processes", f"the driver cannot be unloaded and the runtime not replaced while processes "
        f"hold NeuronCores: {named} (nrt-troubleshoot: stop them, then rmmod/modprobe)",
        [command("sudo", "kill", *(str(holder.pid) for holder in snapshot.holders))], list(needs),
        undo_note="stopped processes are not started again: start them after the upgrade (or the rollback)")


def _headers_step(facts: UpgradeFacts) -> Optional[UpgradeStep]:
    missing = [kernel for kernel, headers in facts.kernels if not headers]
    if not missing:
        return None
    return UpgradeStep(
        "headers", "kernel-headers", f"DKMS builds the driver for every installed kernel; the headers of "
        f"{', '.join(missing)} are missing (setup/pytorch/manual.rst installs linux-headers-$(uname -r))",
        [headers_command(facts.host.snapshot, missing)],
        undo_note="kernel headers stay installed (they change nothing that runs)")


def _package_why(names: Sequence[str], start: FromState, wanted: Mapping[str, str], target: str) -> str:
    moves = ", ".join(f"{name} {start.packages[name]} → {wanted[name].rstrip('.')}"
                      + ("*" if wanted[name].endswith(".") else "") for name in names)
    held = [name for name in names if name in start.held]
    hold = ""
    if held and start.manager == "apt":
        hold = (f"; {', '.join(held)} held (apt-mark hold): moved with --allow-change-held-packages, the hold "
                "stays on the new version")
    elif held:
        hold = f"; {', '.join(held)} held by dnf versionlock: lifted by the release-holds step, set again after"
    return f"Neuron {target}: {moves} (manifests/releases/{target}){hold}"


def _environment_step(env: PythonEnvironment, state: EnvironmentState, facts: UpgradeFacts,
                      catalog: ReleaseCatalog, target: str, needs: list[str],
                      blocked: list[Blocked], not_known: list[str]) -> Optional[UpgradeStep]:
    """In place when the environment's framework line continues in the target on its Python (and it is not a
    guarded environment, whose pins refuse a move); else a new guarded environment beside it, the old one kept: on
    an interpreter of the host the target supports, and on TorchNeuron where the PyTorch/XLA line ends and this
    family runs TorchNeuron (Trn2/Trn3, its torch-neuronx entries say)."""
    step_id = f"environment:{env.path}"
    if "torch-neuronx" not in state.pins:
        not_known.append(f"what {env.path} should become: it has no torch-neuronx (upgrade moves Neuron PyTorch "
                         "environments); it is left as it is")
        return None
    framework = "pytorch-native" if state.stack == "native" else "pytorch"
    python = state.python or ""
    try:
        venv_plan = plan_venv(catalog, target, python, framework)
        reason = ""
    except PlanError as error:
        venv_plan, reason = None, str(error)
    if venv_plan is not None and not state.guarded:
        pins = [package.requirement for package in venv_plan.packages]
        if all(state.pins.get(package.name) == package.version for package in venv_plan.packages):
            return None
        index = ["--extra-index-url", catalog.pip_repository] if catalog.pip_repository else []
        return UpgradeStep(step_id, "environment", f"{env.path}: Neuron {target}'s {framework} pins on Python "
                           f"{python}, in place (actions/venv/plan.py: the release's package set)",
                           [pip_command(env, "install", *index, *pins)], list(needs),
                           undo=undo_commands(step_id, _environment_start(state), facts.host.snapshot, [env],
                                              [package.name for package in venv_plan.packages]))
    beside = f"{env.path.rstrip('/')}-{target}"
    options: list[str] = []
    chosen_framework = framework
    if venv_plan is None:
        family = family_of(facts.host)
        native = {instance for entry in catalog.entries(target, "torch-neuronx") for instance in entry.instances
                  if catalog.framework_stack("torch-neuronx", entry.version) == "native"}
        frameworks = [framework] + (["pytorch-native"] if framework == "pytorch" and family in native else [])
        for other in frameworks:
            candidates = [python, *sorted(facts.interpreters, key=release_tuple, reverse=True)]
            found = next((candidate for candidate in candidates if candidate and _plans(catalog, target, candidate,
                                                                                        other)), None)
            if found:
                chosen_framework = other
                if found != python:
                    options += ["--python", f"python{found}"]
                break
        else:
            blocked.append(Blocked(f"{env.path}: {reason}; no interpreter on this host can have Neuron {target}",
                                   "n2-manifest.json supported_python_versions"))
            return None
    if chosen_framework != "pytorch":
        options += ["--framework", chosen_framework]
    why = (f"{env.path}: " + (reason if venv_plan is None else "a guarded environment keeps its release's pins")
           + f"; a new guarded Neuron {target} environment is built beside it at {beside}, the old one kept "
           "(venv create)")
    return UpgradeStep(step_id, "environment", why,
                       [command(*facts.neurondoctor, "venv", "create", beside, "--release", target, *options)],
                       list(needs), undo_note=f"{env.path} is not touched; the new {beside} stays (remove it "
                       "when it is not wanted)",
                       deferred="" if facts.live else "an environment records its interpreter's path, which under "
                       "--root would be this machine's: run it on the instance itself")


def _plans(catalog: ReleaseCatalog, target: str, python: str, framework: str) -> bool:
    try:
        plan_venv(catalog, target, python, framework)
    except PlanError:
        return False
    return True


def _environment_start(state: EnvironmentState) -> FromState:
    return FromState(release=state.release, manager="", packages={}, held=[], driver_loaded=None, slurm_node=None,
                     environments=[state])


def plan_upgrade(facts: UpgradeFacts, catalog: ReleaseCatalog, target: str) -> UpgradePlan:
    """The plan; raises UserError for a target the data does not know (exit 2)."""
    blocked: list[Blocked] = []
    not_known: list[str] = []
    _preflight(facts, catalog, target, blocked, not_known)
    snapshot = facts.host.snapshot
    start = start_state(facts, catalog)
    ctx = RuleContext(Facts(host=facts.host, environments=list(facts.environments)), catalog, target_release=target)
    inf1 = inf1_host(ctx)
    wanted_all = _wanted(catalog, target, family_of(facts.host), start.packages, inf1, last_inf1_driver(ctx),
                         blocked)
    wanted = {name: version for name, version in wanted_all.items() if version != start.packages[name]}
    after = projected(snapshot, wanted)
    plan = UpgradePlan(target, start, {"release": target, "packages": wanted_all}, blocked, [], not_known)
    steps = plan.steps
    if inf1 and DKMS in start.packages:
        plan.to["inf1_driver_line"] = f"{last_inf1_driver(ctx)}.*"

    driver = DKMS in wanted
    loaded = snapshot.loaded_driver_version
    # A driver package already at the target under an older loaded module (a half-done upgrade: the package's
    # scripts could not unload the module a process held) needs the reload alone.
    stale = not driver and loaded is not None and DKMS in start.packages and not wanted_all.get(
        DKMS, "").endswith(".") and normalize_neuron_version(loaded) != start.packages[DKMS]
    host_changes = bool(wanted) or stale
    runtime = [name for name in RUNTIME_PACKAGES if name in wanted]
    env_steps = [step for env, state in zip(facts.environments, start.environments)
                 for step in [_environment_step(env, state, facts, catalog, target, [], blocked, not_known)]
                 if step is not None]
    needs_so_far: list[str] = []
    if facts.slurm_node and (host_changes or any(not step.deferred for step in env_steps)):
        steps.append(UpgradeStep("drain", "scheduler", f"Slurm node {facts.slurm_node}: no new job starts on it "
                                 "while its Neuron stack changes (scontrol update State=DRAIN)",
                                 [_scontrol(facts.slurm_node, "DRAIN")], undo=undo_commands("drain", start, after)))
        needs_so_far = ["drain"]
    if host_changes:
        holder = _holder_step(snapshot, needs_so_far)
        if holder:
            steps.append(holder)
            needs_so_far = [holder.id]
        if driver:
            headers = _headers_step(facts)
            if headers:
                headers.needs = list(needs_so_far)
                steps.append(headers)
        held = [name for name in start.held if name in wanted]
        if held and start.manager != "apt":
            steps.append(UpgradeStep("release-holds", "os-packages", f"{', '.join(held)} held by dnf versionlock "
                                     "at the old version: dnf cannot move them until the lock is lifted (it is set "
                                     "again at the new version by the hold step)",
                                     [command("sudo", "dnf", "versionlock", "delete", *held)], list(needs_so_far),
                                     undo=undo_commands("release-holds", start, after)))
            needs_so_far = ["release-holds"]
        if stale:
            steps.append(_reload_plan(snapshot, start.packages[DKMS], list(needs_so_far)))
            needs_so_far = ["driver-reload"]
        together = None
        if driver and runtime and "aws-neuronx-runtime-lib" in start.packages:
            new_runtime = wanted.get("aws-neuronx-runtime-lib", start.packages["aws-neuronx-runtime-lib"])
            old_runtime = start.packages["aws-neuronx-runtime-lib"]
            together = _breaks(catalog.compat, wanted[DKMS].rstrip("."), old_runtime) or _breaks(
                catalog.compat, start.packages[DKMS], new_runtime)
        if together is not None:
            names = [DKMS, *runtime]
            steps.append(UpgradeStep(
                "driver-runtime", "os-packages", _package_why(names, start, wanted, target) + f"; in one step with "
                f"the devices idle and no check between: {together['symptom']} ({together['source']}; "
                f"{BREAK_SOURCE})", [install_command(snapshot, [(name, wanted[name]) for name in names])],
                list(needs_so_far), undo=undo_commands("driver-runtime", start, after)))
            needs_so_far = ["driver-runtime"]
            steps.append(_reload_plan(snapshot, wanted[DKMS], needs_so_far))
            needs_so_far = ["driver-reload"]
        else:
            if driver:
                steps.append(UpgradeStep("driver", "os-packages", _package_why([DKMS], start, wanted, target)
                                         + (f"; Inf1 stays on the {wanted[DKMS]}* driver line ({INF1_SOURCE})"
                                            if inf1 else ""),
                                         [install_command(snapshot, [(DKMS, wanted[DKMS])])],
                                         list(needs_so_far) + (["headers"] if any(step.id == "headers"
                                                                                  for step in steps) else []),
                                         undo=undo_commands("driver", start, after)))
                steps.append(_reload_plan(snapshot, wanted[DKMS], ["driver"]))
                needs_so_far = ["driver-reload"]
            if runtime:
                steps.append(UpgradeStep("runtime", "os-packages", _package_why(runtime, start, wanted, target),
                                         [install_command(snapshot, [(name, wanted[name]) for name in runtime])],
                                         list(needs_so_far), undo=undo_commands("runtime", start, after)))
                needs_so_far = ["runtime"]
        if held and start.manager != "apt":
            steps.append(UpgradeStep("hold", "os-packages", f"hold {', '.join(held)} again, at Neuron {target}'s "
                                     "versions (as they were held before)",
                                     [command("sudo", "dnf", "versionlock", "add",
                                              *(f"{name}-{wanted[name]}*" for name in held))],
                                     list(needs_so_far), undo=undo_commands("hold", start, after)))
            needs_so_far = ["hold"]
    for step in env_steps:  # after the host's steps: an environment's new pins need the new runtime
        step.needs = list(needs_so_far)
    steps += env_steps
    if not plan.changes:
        return plan
    done = [step.id for step in steps]
    venvs = [words for env in facts.environments for words in ("--venv", env.path)]
    root = [] if facts.live else ["--root", facts.host.root]
    steps.append(UpgradeStep("check", "verify", f"judge the result against Neuron {target}",
                             [command(*facts.neurondoctor, "check", *root, "--release", target, *venvs)], done))
    if facts.live and snapshot.device_nodes and facts.environments:
        steps.append(UpgradeStep("canary", "verify", "run one small model on a NeuronCore",
                                 [command(*facts.neurondoctor, "probe", "canary", "--python",
                                          facts.environments[0].interpreter)], ["check"]))
    if facts.slurm_node:
        steps.append(UpgradeStep("resume", "scheduler", f"Slurm node {facts.slurm_node} takes jobs again",
                                 [_scontrol(facts.slurm_node, "RESUME")], [steps[-1].id],
                                 undo=undo_commands("resume", start, after)))
    if (driver or stale) and loaded:
        plan.cannot_undo.append("the driver reload: every process using the devices stops with it; the rollback "
                                "reloads the previous driver the same way")
    plan.cannot_undo += [step.undo_note for step in steps if step.undo_note]
    return plan


def _reload_plan(snapshot: HostSnapshot, driver: str, needs: list[str]) -> UpgradeStep:
    """The reload as the plan shows it; `--apply` decides it again on the host the install left (the package's
    own scripts unload the old module and load the new one when nothing holds it: then nothing is left to do)."""
    decided = reload_step(snapshot, driver.rstrip("."), True)
    return UpgradeStep("driver-reload", "kernel-module", decided.why + " (judged again after the install: the "
                       "package's scripts may have reloaded it)", list(decided.commands), list(needs),
                       undo_note="", judged_at_apply=True)


def valid_start(document: Any) -> FromState:
    """The `from` a status file recorded, checked word by word before a rollback builds commands from it: package
    names the upgrade moves, versions that are versions, a Slurm node name, environments as recorded."""
    if not isinstance(document, dict):
        raise ValueError("no `from` object")
    packages = document.get("packages")
    if not isinstance(packages, dict) or not all(name in HOST_PACKAGES and isinstance(version, str)
                                                 and _VERSION.match(version) for name, version in packages.items()):
        raise ValueError("`from.packages` is not Neuron package versions")
    held = document.get("held")
    if not isinstance(held, list) or not all(name in packages for name in held):
        raise ValueError("`from.held` names packages `from.packages` does not have")
    node = document.get("slurm_node")
    if node is not None and not (isinstance(node, str) and _NODE_NAME.match(node)):
        raise ValueError("`from.slurm_node` is not a node name")
    manager = document.get("manager")
    if manager not in ("apt", "dnf", "yum"):
        raise ValueError("`from.manager` is not apt or dnf")
    environments = []
    for entry in document.get("environments") or []:
        if not isinstance(entry, dict) or not isinstance(entry.get("path"), str) or "\0" in entry["path"]:
            raise ValueError("`from.environments` holds something that is not an environment")
        pins = entry.get("pins") or {}
        if not isinstance(pins, dict) or not all(name in ENV_PACKAGES and isinstance(version, str)
                                                 and _VERSION.match(version) for name, version in pins.items()):
            raise ValueError(f"`from.environments` {entry['path']!r}: its pins are not package versions")
        environments.append(EnvironmentState(entry["path"], entry.get("python"), entry.get("release"),
                                             entry.get("stack"), dict(pins), bool(entry.get("guarded"))))
    release = document.get("release")
    loaded = document.get("driver_loaded")
    return FromState(release if isinstance(release, str) else None, manager, dict(packages), list(held),
                     loaded if isinstance(loaded, str) else None, node, environments)
