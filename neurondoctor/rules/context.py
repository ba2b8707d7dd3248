"""What every rule receives: the facts, the release catalog, the options, and derived per-environment views.

The derived views (release detection, the torch stack) are pure functions of the facts, computed once
and shared, so rules stay small and agree with each other.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Optional

from neurondoctor.facts import Facts
from neurondoctor.facts.python_env import Distribution, PythonEnvironment
from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.rules.fix import Command, command
from neurondoctor.rules.host_stack.host_release import HostRelease, detect_host_release
from neurondoctor.rules.python_stack.release_detection import EnvironmentRelease, detect_release
from neurondoctor.strict_numbers import parse_count


@dataclass(frozen=True)
class TorchStack:
    """The framework package that pins torch (torch-neuronx or the native lite stack), if any."""

    framework: Optional[Distribution]
    framework_torch: Optional[str]
    stack: Optional[str]
    torch: Optional[Distribution]
    torch_xla: Optional[Distribution]


@dataclass
class RuleContext:
    """What every rule reads: the facts, the release data and `--release`; answers several rules share are kept."""

    facts: Facts
    catalog: ReleaseCatalog
    target_release: Optional[str] = None
    _releases: dict[int, EnvironmentRelease] = field(default_factory=dict, repr=False)
    _host_release: Optional[HostRelease] = field(default=None, repr=False)

    def host_release(self) -> HostRelease:
        if self._host_release is None:
            self._host_release = detect_host_release(self.facts.host.snapshot, self.catalog)
        return self._host_release

    def instance_profile(self) -> dict[str, object]:
        """Devices, cores, logical core configs and EFA interfaces of this instance type (manifests/instances.json),
        or {} for a type the data does not know."""
        return dict(self.catalog.instances.get(self.facts.host.instance_type or "", {}))

    def logical_nc_config(self) -> Optional[int]:
        """The logical NeuronCore config a process here runs at: NEURON_LOGICAL_NC_CONFIG when it is one this
        instance takes, else the instance's default (2 on Trn2/Trn3); None on families without logical cores."""
        profile = self.instance_profile()
        family = self.facts.host.instance_family
        if family not in self.catalog.logical_nc_families():
            return None
        allowed = profile.get("logical_nc_configs") or [1, 2]
        value = parse_count(self.facts.environ.get("NEURON_LOGICAL_NC_CONFIG", ""), maximum=8)
        if value is not None and isinstance(allowed, list) and value in allowed:
            return value
        default = profile.get("default_logical_nc_config", 2)
        return default if isinstance(default, int) else 2

    def total_cores(self) -> Optional[int]:
        """NeuronCores a process on this host can name: the driver's sysfs counts, else neuron-ls (not the 2.34
        document, whose shape is only announced), else the instance table. On Trn2/Trn3 the count is of logical
        cores at the config in effect (8 physical per chip; 4 at LNC=2, 8 at LNC=1: logical-neuroncore-config.rst),
        from the devices seen, because what sysfs `core_count` counts there is not documented."""
        snapshot = self.facts.host.snapshot
        lnc = self.logical_nc_config()
        if lnc is not None:
            profile = self.instance_profile()
            devices = len(snapshot.sysfs_devices) or len(snapshot.pci) or profile.get("devices")
            physical = profile.get("physical_cores_per_device", 8)
            return devices * physical // lnc if isinstance(devices, int) and isinstance(physical, int) else None
        counted = [device.core_count for device in snapshot.sysfs_devices if device.core_count]
        if counted:
            return sum(counted)
        listed = [device.core_count for device in snapshot.neuron_ls if device.core_count and not device.assumed]
        if listed:
            return sum(listed)
        cores = self.instance_profile().get("cores")
        return cores if isinstance(cores, int) else None

    def release_of(self, env: PythonEnvironment) -> EnvironmentRelease:
        key = id(env)
        if key not in self._releases:
            self._releases[key] = detect_release(env, self.catalog, self.target_release)
        return self._releases[key]

    def torch_stack(self, env: PythonEnvironment) -> TorchStack:
        dists = env.effective_distributions()
        framework: Optional[Distribution] = None
        stack: Optional[str] = None
        for name in self.catalog.compat.get("torch_frameworks", {}):
            candidate = dists.get(name)
            if candidate is not None and not candidate.placeholder and \
                    self.catalog.framework_torch(name, candidate.version):
                framework, stack = candidate, self.catalog.framework_stack(name, candidate.version)
                break
        return TorchStack(
            framework=framework,
            framework_torch=self.catalog.framework_torch(framework.name, framework.version) if framework else None,
            stack=stack,
            torch=dists.get("torch"),
            torch_xla=dists.get("torch-xla"),
        )

    def framework_stacks(self) -> Iterator[tuple[PythonEnvironment, TorchStack, Distribution, Distribution, str]]:
        """(env, stack, framework, torch, framework's torch version) for environments with both installed."""
        for env in self.facts.environments:
            stack = self.torch_stack(env)
            if stack.framework is not None and stack.torch is not None and stack.framework_torch is not None:
                yield env, stack, stack.framework, stack.torch, stack.framework_torch

    def neuron_env(self, env: PythonEnvironment) -> bool:
        """An environment with any Neuron pip package (placeholders included: they were meant to be Neuron)."""
        names = self.catalog.neuron_pip_packages()
        return any(name in names for name in env.effective_distributions())


def neuron_host(ctx: RuleContext) -> bool:
    """Host areas apply where there is Neuron hardware, a Neuron OS package or module, or a Trn/Inf instance."""
    snapshot = ctx.facts.host.snapshot
    family = ctx.facts.host.instance_family or ""
    return (snapshot.has_neuron_hardware or any(name.startswith("aws-neuron") for name in snapshot.packages)
            or "neuron" in snapshot.modules or family.startswith(("trn", "inf")))


def inf1_host(ctx: RuleContext) -> bool:
    """An Inf1 host, known from the instance type or from Inferentia1 functions on the PCI bus."""
    return ctx.facts.host.instance_family == "inf1" or any(function.family == "inf1"
                                                            for function in ctx.facts.host.snapshot.pci)


def made_by_uv_without_pip(env: PythonEnvironment) -> bool:
    """`uv venv` writes `uv = X.Y.Z` into pyvenv.cfg and installs no pip: `python -m pip` there fails with
    `No module named pip`, so its fixes are `uv pip … --python PATH` (docs/measured.md: a uv venv has no pip)."""
    return "uv" in env.pyvenv_cfg and "pip" not in env.effective_distributions()


def pip_command(env: PythonEnvironment, *args: str, note: str = "") -> Command:
    """`<this env's interpreter> -m pip …`, or `uv pip <verb> --python <interpreter> …` in a uv venv without pip
    (uv's uninstall does not ask, so it takes no `-y`; its `--index-url` loses to a UV_DEFAULT_INDEX the user set,
    `--default-index` does not)."""
    interpreter = env.interpreter or "python3"
    if args and made_by_uv_without_pip(env):
        rest = ["--default-index" if arg == "--index-url" else arg for arg in args[1:]
                if not (args[0] == "uninstall" and arg == "-y")]
        return command("uv", "pip", args[0], "--python", interpreter, *rest, note=note)
    return command(interpreter, "-m", "pip", *args, note=note)


def pin(name: str, version: str) -> str:
    """`torch==2.9.0`: a requirement word (rendered quoted, as the docs write specifiers for a shell)."""
    return f"{name}=={version}"
