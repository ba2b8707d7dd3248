"""Typed facts about the host below Python (docs/contracts.md §3): OS, kernel, PCI, driver, DKMS, packages,
runtime files, device nodes, processes holding devices, compile cache, and `neuron-ls` on a live host."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from neurondoctor.facts.mounts import MountTable, PathMount

if TYPE_CHECKING:  # each made (and its module imported) only where its collector finds one
    from neurondoctor.facts.cache_index import CacheIndex
    from neurondoctor.facts.container_image import ContainerImage
    from neurondoctor.facts.device_holders import DeviceHolder
    from neurondoctor.facts.image_pin import ImageInf1Pin
    from neurondoctor.facts.kernel_errors import KernelHardwareError


@dataclass
class OsRelease:
    """The host's `/etc/os-release` (and `/usr/lib/os-release`): which OS the release tables and fixes are for."""

    id: Optional[str] = None
    version_id: Optional[str] = None
    pretty_name: Optional[str] = None
    codename: Optional[str] = None
    id_like: list[str] = field(default_factory=list)
    variant_id: Optional[str] = None  # VARIANT_ID: Bottlerocket's `aws-k8s-1.33`, `aws-ecs-3`

    @property
    def package_manager(self) -> str:
        """`apt` on Debian/Ubuntu, `dnf` on Amazon Linux 2023 / RHEL / Rocky, `yum` on Amazon Linux 2."""
        family = {self.id or "", *self.id_like}
        if family & {"debian", "ubuntu"}:
            return "apt"
        if self.id == "amzn" and (self.version_id or "").startswith("2") and self.version_id != "2023":
            return "yum"
        if family & {"rhel", "fedora", "centos", "amzn", "rocky"}:
            return "dnf"
        return "apt"


@dataclass
class PciFunction:
    """A Neuron device on the PCI bus (vendor 0x1d0f), seen even when no driver is loaded."""

    address: str
    device_id: str
    family: str
    sysfs_path: Optional[str] = None  # where the function sits in the PCI tree (/sys/devices/pci0000:00/…/ADDRESS)


@dataclass
class DeviceNode:
    """A `/dev/neuronN` node, with the owner and mode that decide who may open it."""

    path: str
    is_char_device: bool
    mode: int
    uid: int
    gid: int


# The collector name under which uncorrectable-ECC counters that could not be read are recorded: the hardware check
# needs them, so it is unknown then (a silent pass would hide a faulty chip; driver 2.31 moved the sysfs nodes).
ECC_COLLECTOR = "ecc-counters"
CORE_COUNT_COLLECTOR = "core-counts"  # sysfs core_count that is there but not a number


@dataclass
class SysfsDevice:
    """`/sys/class/neuron_device/neuronN`: what the loaded driver says about one device."""

    name: str
    core_count: Optional[int] = None
    arch_type: Optional[str] = None
    device_name: Optional[str] = None
    instance_type: Optional[str] = None
    ecc_uncorrected: dict[str, int] = field(default_factory=dict)
    malformed: dict[str, str] = field(default_factory=dict)  # node -> why its value is no number (value cut)


@dataclass
class KernelModule:
    """A loaded kernel module as `/proc/modules` lists it (its users keep it from being unloaded)."""

    name: str
    size: int
    used_by: int
    users: list[str] = field(default_factory=list)


@dataclass
class OsPackage:
    """An OS package whose files are on disk. `state` is dpkg's (`installed`, or `half-configured`, `unpacked`,
    `half-installed`, `triggers-*` when its install did not finish: for aws-neuronx-dkms the postinst's DKMS
    build failed); rpm packages are `installed`."""

    name: str
    version: str
    source: str
    state: str = "installed"
    held: bool = False  # dpkg's want flag is `hold` (apt-mark hold), or dnf's versionlock lists it

    @property
    def broken(self) -> bool:
        return self.state != "installed"


@dataclass
class DkmsState:
    """DKMS state of the Neuron module for the running kernel."""

    registered_versions: list[str] = field(default_factory=list)
    built_for_kernel: list[str] = field(default_factory=list)
    installed_module: Optional[str] = None
    headers_present: bool = False
    make_log: Optional[str] = None
    make_log_tail: list[str] = field(default_factory=list)
    make_log_error: Optional[str] = None
    missing_build_tool: Optional[str] = None  # `gcc-14` when make.log says the kernel's compiler is not installed
    legacy_registered: bool = False


@dataclass
class DriverModuleFile:
    """The `neuron` module file on disk for the running kernel, and the version its `.modinfo` section carries: what
    a node without a package database (Bottlerocket) has instead of a package version. `version` is None with the
    reason in `problem` when it cannot be read (a `.zst` module, a damaged file)."""

    path: str
    version: Optional[str] = None
    problem: Optional[str] = None


@dataclass
class NodeRole:
    """What this machine is for, from evidence: a node that carries the driver (and perhaps the OCI hook and the
    tools) while the runtime, compiler and frameworks run in containers. `platform` is `bottlerocket`, `eks`,
    `ecs` or `oci-hook`; `name` says it in words; `evidence` lists what showed it."""

    platform: str
    name: str
    evidence: list[str] = field(default_factory=list)
    inf1_pin: Optional[ImageInf1Pin] = None




@dataclass
class CompileCache:
    """The cache neuronx-cc uses here: where, its disk, and what is in it (counted within check's bound)."""

    path: str
    source: str
    remote: bool = False
    free_bytes: Optional[int] = None
    total_bytes: Optional[int] = None
    index: Optional[CacheIndex] = None
    writable: Optional[bool] = None  # by this user, or creatable where it is missing (live host only)
    read_only: Optional[bool] = None  # its filesystem (or its nearest existing parent's) is mounted read-only
    path_redacted: bool = False  # `path` had a secret cut (a URL's credentials): a fix names its variable instead
    # Why an unattended verdict leaves it unmeasured: another user controls the way to the default location
    not_judged: Optional[str] = None
    mount: Optional[PathMount] = None  # the mount it (or its nearest existing parent) is on, from the host's table
    # Why its free disk and this machine's read-only flag are not known: the root is not a live view of this machine
    disk_not_known: Optional[str] = None


@dataclass
class CommandFact:
    """A command the doctor ran on a live host, and what came of it."""

    argv: list[str]
    ok: bool
    duration_s: float
    failure: Optional[str] = None
    timed_out: bool = False  # stopped at its deadline: the report names it (a hung tool is not a silent gap)


@dataclass
class NeuronLsDevice:
    """One device as `neuron-ls` reports it: its cores and the processes using them."""

    index: int
    core_count: Optional[int] = None
    core_ids: list[int] = field(default_factory=list)
    processes: list[dict[str, object]] = field(default_factory=list)
    logical_neuroncore_config: Optional[int] = None
    assumed: bool = False  # read from the 2.34 `--output-format json` document, whose shape is announced only


@dataclass
class HostSnapshot:
    """Everything below Python; every list is empty (not missing) on a machine without Neuron."""

    os: OsRelease = field(default_factory=OsRelease)
    kernel: Optional[str] = None
    container: bool = False
    kubernetes_pod: bool = False
    pci: list[PciFunction] = field(default_factory=list)
    efa_present: bool = False
    efa_functions: int = 0
    efa_paths: list[str] = field(default_factory=list)  # each EFA function's place in the PCI tree, as sysfs_path
    device_nodes: list[DeviceNode] = field(default_factory=list)
    sysfs_devices: list[SysfsDevice] = field(default_factory=list)
    sysfs_layout: Optional[str] = None  # `classic` or `driver-2.31` (host/neuron_devices.py)
    modules: dict[str, KernelModule] = field(default_factory=dict)
    loaded_driver_version: Optional[str] = None
    driver_module: Optional[DriverModuleFile] = None
    node_role: Optional[NodeRole] = None  # a container node (driver only); None for a host that runs the stack
    image: Optional[ContainerImage] = None  # inside a container: what names the image; None elsewhere
    packages: dict[str, OsPackage] = field(default_factory=dict)
    package_source: Optional[str] = None
    dkms: DkmsState = field(default_factory=DkmsState)
    runtime_libraries: list[str] = field(default_factory=list)
    collectives_libraries: list[str] = field(default_factory=list)
    tools: list[str] = field(default_factory=list)
    neuron_repo_files: list[str] = field(default_factory=list)
    holders: list[DeviceHolder] = field(default_factory=list)
    kernel_hw_errors: list[KernelHardwareError] = field(default_factory=list)
    kernel_log_source: Optional[str] = None  # where they were read; None when no kernel log could be read
    kernel_log_problem: Optional[str] = None
    compile_cache: Optional[CompileCache] = None
    memlock_limit: Optional[int] = None  # bytes; -1 unlimited; None unknown
    memlock_source: Optional[str] = None
    machine: Optional[str] = None  # `platform_machine` (x86_64); known on the live host only
    glibc: Optional[str] = None  # "2.35"; None unknown
    glibc_source: Optional[str] = None
    uid: Optional[int] = None
    groups: list[int] = field(default_factory=list)
    user_name: Optional[str] = None
    group_names: list[str] = field(default_factory=list)
    neuron_ls: list[NeuronLsDevice] = field(default_factory=list)
    commands: list[CommandFact] = field(default_factory=list)
    mount_table: MountTable = field(default_factory=MountTable)  # the host's own (host/mount_table.py)
    mounts: list[PathMount] = field(default_factory=list)  # of /tmp and each environment's folder, where known

    @property
    def inf1_pin(self) -> Optional[ImageInf1Pin]:
        """The managed image's Inf1 driver pin on a container node that has one (host/node_role.py)."""
        return self.node_role.inf1_pin if self.node_role is not None else None

    @property
    def has_neuron_hardware(self) -> bool:
        """Neuron devices on PCI, device nodes, or driver sysfs entries: any one proves the hardware is here."""
        return bool(self.pci or self.device_nodes or self.sysfs_devices)
