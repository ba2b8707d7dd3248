"""Builds fixture hosts: directory trees at the real Linux paths, from small declarative specs.

What a trn1/inf2 host looks like to the doctor: os-release, the kernel release, DMI identity, PCI functions
(vendor 0x1d0f), `/dev/neuronN` character devices, `sys/class/neuron_device`, `proc/modules`,
`sys/module/neuron/version`, dpkg's status file, DKMS's tree, `opt/aws/neuron`, apt/yum repo files and
`proc/<pid>/fd` links of processes holding devices (docs/neuron-facts.md §4). Versions per release are written
out from docs/neuron-facts.md §1.3, not read from the manifests under test.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

import pytest

# docs/neuron-facts.md §1.3: aws-neuronx-dkms, runtime-lib, collectives, tools per release (2.24.1-2.27.1, 2.29.0 and
# 2.31.0 from AWS's n2-manifest.json, which §1.3 does not repeat).
HOST_STACKS = {
    "2.24.1": ("2.22.2.0", "2.26.42.0", "2.26.43.0", "2.24.54.0"),
    "2.25.0": ("2.23.9.0", "2.27.23.0", "2.27.34.0", "2.25.145.0"),
    "2.26.0": ("2.24.7.0", "2.28.23.0", "2.28.27.0", "2.26.14.0"),
    "2.26.1": ("2.24.7.0", "2.28.23.0", "2.28.27.0", "2.26.14.0"),
    "2.27.0": ("2.25.4.0", "2.29.40.0", "2.29.41.0", "2.27.33.0"),
    "2.27.1": ("2.25.4.0", "2.29.40.0", "2.29.41.0", "2.27.33.0"),
    "2.28.0": ("2.26.5.0", "2.30.51.0", "2.30.59.0", "2.28.23.0"),
    "2.28.1": ("2.26.10.0", "2.30.51.0", "2.30.59.0", "2.28.23.0"),
    "2.29.0": ("2.27.4.0", "2.31.24.0", "2.31.24.0", "2.29.18.0"),
    "2.29.1": ("2.27.4.0", "2.31.24.0", "2.31.24.0", "2.29.22.0"),
    "2.30.0": ("2.28.0.0", "2.32.31.0", "2.32.28.0", "2.30.10.0"),
    "2.31.0": ("2.29.0.0", "2.33.10.0", "2.33.10.0", "2.31.13.0"),
    "2.31.1": ("2.29.0.0", "2.33.10.0", "2.33.10.0", "2.31.15.0"),
    "2.32.0": ("2.30.2.0", "2.34.10.0", "2.34.10.0", "2.32.28.0"),
    "2.33.0": ("2.31.7.0", "2.35.30.0", "2.35.43.0", "2.33.38.0"),  # release-notes/releasecontent.rst 2.33.0
    # release-notes/2.33.1.rst: dkms, runtime-lib and collectives changed, "all other packages are the same"
    "2.33.1": ("2.31.8.0", "2.35.33.0", "2.35.49.0", "2.33.38.0"),
}
STACK_PACKAGES = ("aws-neuronx-dkms", "aws-neuronx-runtime-lib", "aws-neuronx-collectives", "aws-neuronx-tools")

INSTANCES = {  # instance type: (PCI device id, devices, cores per device, EFA functions)
    "trn1.2xlarge": ("0x7164", 1, 2, 0),
    "trn1.32xlarge": ("0x7164", 16, 2, 8),
    "trn1n.32xlarge": ("0x7164", 16, 2, 16),
    "inf2.xlarge": ("0x7264", 1, 2, 0),
    "inf2.48xlarge": ("0x7264", 12, 2, 0),
    "inf1.xlarge": ("0x7064", 1, 4, 0),
    "inf1.6xlarge": ("0x7064", 4, 4, 0),
    # Trn2/Trn3: 8 physical NeuronCores per chip, which sysfs `core_count` is written as (what it counts at LNC=2
    # is not documented, and the doctor does not read it there); 16 EFAv3 on the 48xlarge sizes.
    "trn2.48xlarge": ("0x7364", 16, 8, 16),
    "trn2u.48xlarge": ("0x7364", 16, 8, 16),
    "trn2.3xlarge": ("0x7364", 1, 8, 0),
    "trn3.3xlarge": ("0x7564", 1, 8, 0),
}
ARCH = {"0x7164": ("NDv2", "Trainium1", "Trn1"), "0x7264": ("NDv3", "Inferentia2", "Inf2"),
        "0x7064": ("NDv1", "Inferentia", "Inf1"), "0x7364": ("NDv3", "Trainium2", "Trn2"),
        "0x7564": ("NDv4", "Trainium3", "Trn3")}  # Trn3's strings are assumed from the v4 arch (drv:neuron_pci.c)

OS_RELEASES = {
    "ubuntu24": 'PRETTY_NAME="Ubuntu 24.04.1 LTS"\nNAME="Ubuntu"\nVERSION_ID="24.04"\nVERSION_CODENAME=noble\n'
                "ID=ubuntu\nID_LIKE=debian\n",
    "ubuntu22": 'PRETTY_NAME="Ubuntu 22.04.5 LTS"\nVERSION_ID="22.04"\nVERSION_CODENAME=jammy\nID=ubuntu\n'
                "ID_LIKE=debian\n",
    "al2023": 'NAME="Amazon Linux"\nVERSION="2023"\nID="amzn"\nID_LIKE="fedora"\nVERSION_ID="2023"\n'
              'PRETTY_NAME="Amazon Linux 2023.6.20241212"\n',
    "al2": 'NAME="Amazon Linux"\nVERSION="2"\nID="amzn"\nID_LIKE="centos rhel fedora"\nVERSION_ID="2"\n'
           'PRETTY_NAME="Amazon Linux 2"\n',
    "ubuntu26": 'PRETTY_NAME="Ubuntu 26.04 LTS"\nNAME="Ubuntu"\nVERSION_ID="26.04"\nVERSION_CODENAME=resolute\n'
                "ID=ubuntu\nID_LIKE=debian\n",
    "ubuntu20": 'PRETTY_NAME="Ubuntu 20.04.6 LTS"\nNAME="Ubuntu"\nVERSION_ID="20.04"\nVERSION_CODENAME=focal\n'
                "ID=ubuntu\nID_LIKE=debian\n",
    "debian12": 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\n'
                'VERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n',
    "rocky9": 'NAME="Rocky Linux"\nVERSION="9.4 (Blue Onyx)"\nID="rocky"\nID_LIKE="rhel centos fedora"\n'
              'VERSION_ID="9.4"\nPLATFORM_ID="platform:el9"\nPRETTY_NAME="Rocky Linux 9.4 (Blue Onyx)"\n',
    "rhel9": 'NAME="Red Hat Enterprise Linux"\nVERSION="9.4 (Plow)"\nID="rhel"\nID_LIKE="fedora"\n'
             'VERSION_ID="9.4"\nPRETTY_NAME="Red Hat Enterprise Linux 9.4 (Plow)"\n',
    "rhel10": 'NAME="Red Hat Enterprise Linux"\nVERSION="10.0 (Coughlan)"\nID="rhel"\nID_LIKE="centos fedora"\n'
              'VERSION_ID="10.0"\nPRETTY_NAME="Red Hat Enterprise Linux 10.0 (Coughlan)"\n',
}
# The C library each OS ships: Debian/Ubuntu's libc6 package version (dpkg status), or for the rpm
# distributions the libc.so.6 on disk: a link to libc-2.26.so up to glibc 2.33, the library itself (with its
# version banner) from 2.34.
OS_LIBC = {"ubuntu26": ("dpkg", "2.43-2ubuntu1"), "ubuntu24": ("dpkg", "2.39-0ubuntu8.4"),
           "ubuntu22": ("dpkg", "2.35-0ubuntu3.8"),
           "ubuntu20": ("dpkg", "2.31-0ubuntu9.16"), "debian12": ("dpkg", "2.36-9+deb12u9"),
           "al2": ("link", "2.26"), "al2023": ("banner", "2.34"), "rocky9": ("banner", "2.34"),
           "rhel9": ("banner", "2.34"), "rhel10": ("banner", "2.39")}


# Container nodes (HostSpec.node): what each image is, from what AWS and Bottlerocket publish.
# Bottlerocket: os-release as `cat /etc/os-release` printed it (bottlerocket pull request 3345, VERSION/VARIANT_ID
# fields; the variant an EKS node group runs); no package manager; the kernel kit's Neuron module stored under
# /usr/libexec/neuron/neuron_latest/ and linked for the running kernel into /lib/modules/<kernel>/kernel/drivers/
# neuron/ (bottlerocket-kernel-kit kmod-6.1-neuron.spec and kmod-6.12-neuron.spec; pull request 388's `find`).
# ASSUMED: the mode of Bottlerocket's /dev/neuron* is not published; the fixture keeps `node_mode`'s 0666.
BOTTLEROCKET_OS_RELEASE = ('NAME=Bottlerocket\nID=bottlerocket\nVERSION="{version} ({variant})"\n'
                           'PRETTY_NAME="Bottlerocket OS {version} ({variant})"\nVARIANT_ID={variant}\n'
                           'VERSION_ID={version}\nBUILD_ID=472e4fbb\n'
                           'HOME_URL="https://github.com/bottlerocket-os/bottlerocket"\n')
# The EKS optimized AMI (awslabs/amazon-eks-ami templates/al2023): install-worker.sh writes /etc/eks/release and
# /usr/bin/kubelet; install-neuron-driver.sh installs aws-neuronx-dkms and aws-neuronx-tools only, moves
# neuron-kmod-load.sh to /etc/eks/ and links /etc/modules-load.d/neuron.conf to /dev/null.
EKS_RELEASE = 'BASE_AMI_ID="ami-0abcdef1234567890"\nBUILD_TIME="Mon Jul 14 00:00:00 UTC 2026"\n' \
              'BUILD_KERNEL="{kernel}"\nARCH="x86_64"\n'
# The ECS optimized Neuron AMI (aws/amazon-ecs-ami): setup-ecs-config-dir.sh makes /etc/ecs/ecs.config; the Neuron
# AMI adds ECS_ENABLE_INF_SUPPORT=true to /var/lib/ecs/ecs.config (enable-ecs-agent-inferentia-support.sh) and
# carries aws-neuronx-dkms, aws-neuronx-tools and aws-neuronx-oci-hook (al2023/neuron/neuron-inf1-downgrade.sh).
# Both images pin Inf1 to aws-neuronx-dkms 2.21.* at boot from a package cached at build time: ECS
# (aws/amazon-ecs-ami scripts/al2023/neuron/neuron-inf1-downgrade.{sh,service}, enable-ecs-agent-inferentia-support.sh:
# the cache /opt/ecs/neuron/inf1-rpms, `dnf versionlock add` of dkms, tools and oci-hook, and the Neuron yum
# repository deleted at the end of the build), EKS (awslabs/amazon-eks-ami templates/al2023/runtime/gpu/
# neuron-package-install.{sh,service}, provisioners/install-neuron-driver.sh: the cache /var/cache/eks/packages).
IMAGE_INF1_PINS = {"ecs": ("etc/systemd/system/neuron-inf1-downgrade.service",
                           "var/lib/ecs/scripts/neuron-inf1-downgrade.sh", "opt/ecs/neuron/inf1-rpms"),
                   "eks": ("etc/systemd/system/neuron-package-install.service",
                           "etc/eks/neuron-package-install.sh", "var/cache/eks/packages")}
# AWS's n2-manifest.json; 2.33.0's release content; 2.33.1's release notes
OCI_HOOK = {"2.31.1": "2.17.30.0", "2.33.0": "2.19.65.0", "2.33.1": "2.19.74.0"}


@dataclass
class Holder:
    pid: int
    command: str
    cmdline: str
    devices: tuple[int, ...] = ()
    parent: int = 1  # a holder started by a Slurm job has a `slurmstepd: [JOB.STEP]` ancestor


@dataclass
class HostSpec:
    """A host, healthy by default; each field is one way to break it."""

    instance_type: Optional[str] = "trn1.2xlarge"
    release: Optional[str] = "2.31.1"
    os: str = "ubuntu24"
    kernel: str = "6.8.0-1015-aws"
    package_versions: dict[str, Optional[str]] = field(default_factory=dict)
    extra_packages: dict[str, str] = field(default_factory=dict)
    pci: bool = True
    efa: bool = True
    driver_loaded: bool = True
    loaded_version: Optional[str] = None
    module_built: bool = True
    headers: bool = True
    make_log: Optional[str] = None
    dpkg_states: dict[str, str] = field(default_factory=dict)  # package -> `Status:` line value
    legacy_dkms: bool = False
    device_nodes: Optional[int] = None
    node_mode: int = 0o666
    ecc: dict[int, dict[str, int]] = field(default_factory=dict)
    holders: list[Holder] = field(default_factory=list)
    kern_log: Optional[str] = None  # var/log/kern.log as rsyslog writes it
    runtime_library: bool = True
    collectives_library: bool = True
    tools: bool = True
    repo_file: bool = True
    container: bool = False  # a container image (a DLC): no DKMS package unless image_dkms, the host's driver
    image_dkms: bool = False
    sysfs_layout: Optional[str] = None  # `classic` or `driver-2.31`; by default what the loaded driver writes
    # The PCI tree as a real host shows it: /sys/bus/pci/devices/ADDRESS links into /sys/devices/pci0000:00/…, two
    # Neuron devices and their EFA interfaces behind each PCIe switch (a trn2.48xlarge: 8 switches x 2 devices x
    # 2 EFA, Mooncake #3888); `efa_missing` leaves those EFA functions out (an interface not attached at launch).
    pci_tree: bool = False
    efa_missing: tuple[int, ...] = ()
    moved_ecc: bool = True  # under the 2.31 layout: the ECC counters at their (assumed) new place, or nowhere
    # A container node: `bottlerocket`, `eks` or `ecs` (the images above); the runtime and collectives are in the
    # containers, so none is on the node. Bottlerocket's driver is its module file, written with `module_suffix`
    # (``, `.gz`, `.xz`, `.zst`) from the recorded `modinfo` `module_recording` (its version set to the loaded one).
    node: Optional[str] = None
    variant: str = "aws-k8s-1.33"
    module_suffix: str = ".gz"
    module_recording: str = "bottlerocket-inf2-2.26.10.0.txt"
    module_version: Optional[str] = None  # the module file's version when it is not the loaded one
    sysfs_version: bool = True  # sys/module/neuron/version of the loaded module (a snapshot may lack /sys/module)
    # The EKS or ECS image's Inf1 driver pin (IMAGE_INF1_PINS): its boot script and unit, and the cached
    # aws-neuronx-dkms package `inf1_cached` names (ECS: with the image's dnf versionlock of its three packages)
    inf1_pin: bool = False
    inf1_cached: str = "2.21.37.0"


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _dpkg_stanza(name: str, version: str, status: str = "install ok installed") -> str:
    return (f"Package: {name}\nStatus: {status}\nPriority: optional\nSection: kernel\n"
            f"Installed-Size: 1024\nMaintainer: Amazon AWS Neuron <neuron-maintainers@amazon.com>\n"
            f"Architecture: amd64\nVersion: {version}\nDescription: {name}\n Neuron package.\n")


def package_versions(spec: HostSpec) -> dict[str, str]:
    versions: dict[str, str] = {}
    if spec.release:
        versions.update(zip(STACK_PACKAGES, HOST_STACKS[spec.release]))
        versions["aws-neuronx-runtime-lib"] += "-ec8cd5e8b"  # deb versions carry a build suffix (§1.4)
    for name, version in spec.package_versions.items():
        if version is None:
            versions.pop(name, None)
        else:
            versions[name] = version
    versions.update(spec.extra_packages)
    return versions


def _pci_tree(root: Path, device_id: str, devices: int, efa_functions: int, efa_missing: tuple[int, ...]) -> None:
    """Switch k (an upstream port under root port k) holds devices 2k, 2k+1 and EFA functions 2k, 2k+1 (as many
    switches as needed), each function on a downstream port of its own, linked from /sys/bus/pci/devices."""
    bus = root / "sys/bus/pci/devices"
    bus.mkdir(parents=True, exist_ok=True)
    functions = [(f"0000:{0x20 + 4 * (index // 2) + 2:02x}:{index % 2:02x}.0", index // 2, device_id, True)
                 for index in range(devices)]
    functions += [(f"0000:{0x20 + 4 * (index // 2) + 3:02x}:{index % 2:02x}.0", index // 2, "0xefa1", False)
                  for index in range(efa_functions) if index not in efa_missing]
    for address, switch, device, neuron in functions:
        root_port = f"0000:00:{switch + 1:02x}.0"
        upstream = f"0000:{0x20 + 4 * switch:02x}:00.0"
        downstream = f"0000:{0x20 + 4 * switch + 1:02x}:{(0 if neuron else 8) + int(address[-3]):02x}.0"
        folder = root / "sys/devices/pci0000:00" / root_port / upstream / downstream / address
        _write(folder / "vendor", "0x1d0f\n")
        _write(folder / "device", device + "\n")
        (bus / address).symlink_to(os.path.relpath(folder, bus))


def _c_library(root: Path, os_name: str) -> str:
    """Writes the OS's C library; returns the dpkg stanza to add for the Debian family ('' otherwise)."""
    kind, version = OS_LIBC[os_name]
    if kind == "dpkg":
        _write(root / "usr/lib/x86_64-linux-gnu/libc.so.6", "\x7fELF")
        return _dpkg_stanza("libc6", version, "install ok installed") + "\n"
    lib = root / "usr/lib64"
    lib.mkdir(parents=True, exist_ok=True)
    if kind == "link":
        (lib / f"libc-{version}.so").write_bytes(b"\x7fELF\0")
        (lib / "libc.so.6").symlink_to(f"libc-{version}.so")
    else:
        (lib / "libc.so.6").write_bytes(b"\x7fELF\0" * 64 + f"GNU C Library (GNU libc) stable release version "
                                        f"{version}.\n".encode() + b"\0" * 64)
    (root / "lib64").symlink_to("usr/lib64")
    return ""


def _make_node(path: Path, minor: int, mode: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.mknod(path, 0o020000 | mode, os.makedev(240, minor))
    except PermissionError:
        pytest.skip("creating character device nodes for fixture hosts needs CAP_MKNOD")
    path.chmod(mode)


# Driver 2.31 moved several sysfs nodes (tools/neuron-sys-tools/neuron-sysfs-user-guide.rst, 2.33.0) without a
# published map. This fixture's 2.31 layout is ASSUMED: core_count and the architecture strings under `info/`,
# the ECC counters under `stats/hardware/ecc/`, and no `sys/class/neuron_device` links. The doctor must read the
# same facts from it by name, and judge nothing from what it cannot find.
LAYOUT_2_31_PATHS = {"core_count": "info/core_count", "arch_type": "info/arch_type",
                     "device_name": "info/device_name", "instance_type": "info/instance_type",
                     **{counter: f"stats/hardware/ecc/{counter}" for counter in
                        ("mem_ecc_uncorrected", "mem_ecc_repairable_uncorrected", "sram_ecc_uncorrected")}}


# NeuronCore versions by PCI device: Inf1 v1, Trn1/Inf2 v2, Trn2 v3, Trn3 v4 (the architecture pages)
CORE_ARCH = {"0x7064": "NCv1", "0x7164": "NCv2", "0x7264": "NCv2", "0x7364": "NCv3", "0x7564": "NCv4"}


def _write_core_dirs(sysfs: Path, device_id: str, cores: int) -> None:
    """The per-core directories the driver makes (neuron_sysfs_metrics.c: `neuron_core<N>/info/architecture/
    arch_type` and the `stats/status` counters, each a `total`/`present` pair), one per NeuronCore."""
    for core in range(cores):
        core_dir = sysfs / f"neuron_core{core}"
        _write(core_dir / "info/architecture/arch_type", CORE_ARCH.get(device_id, "") + "\n")
        for counter in ("success", "failure", "hw_error"):
            for value in ("total", "present"):
                _write(core_dir / f"stats/status/{counter}/{value}", "0\n")


def count_mode(loaded: str) -> int:
    """`core_count`'s mode: root's only (S_IRUSR, aws-neuron-driver 2.24.7.0 neuron_cdev.c) until driver 2.28.0 made
    it readable by all (runtime.rst 2.30)."""
    parts = [int(part) for part in loaded.split(".")[:2] if part.isdigit()]
    return 0o444 if len(parts) == 2 and tuple(parts) >= (2, 28) else 0o400


def write_device_sysfs(root: Path, index: int, device_id: str, cores: int, ecc: dict[str, int],
                       layout: str = "classic", moved_ecc: bool = True, count_mode: int = 0o400) -> None:
    """What the loaded driver shows for device `index`: its core count, architecture and ECC counters, and (the
    classic layout) the `sys/class/neuron_device` link."""
    sysfs = root / f"sys/devices/virtual/neuron_device/neuron{index}"
    arch, name, family = ARCH.get(device_id, ("", "", ""))
    counters = ("mem_ecc_uncorrected", "mem_ecc_repairable_uncorrected", "sram_ecc_uncorrected")
    if layout == "driver-2.31":
        values = {"core_count": str(cores), "arch_type": arch, "device_name": name, "instance_type": family}
        values.update({counter: str(ecc.get(counter, 0)) for counter in counters if moved_ecc})
        for node, value in values.items():
            _write(sysfs / LAYOUT_2_31_PATHS[node], value + "\n")
        _write_core_dirs(sysfs, device_id, cores)
        _write(sysfs / "reset", "0\n")
        return
    # As the driver writes it (aws-neuron-driver 2.24.7.0 neuron_cdev.c): no newline; root's only before 2.28
    (sysfs / "core_count").unlink(missing_ok=True)  # a host built again over itself, by a user who is not root
    _write(sysfs / "core_count", str(cores))
    (sysfs / "core_count").chmod(count_mode)
    _write_core_dirs(sysfs, device_id, cores)
    _write(sysfs / "info/architecture/arch_type", arch + "\n")
    _write(sysfs / "info/architecture/device_name", name + "\n")
    _write(sysfs / "info/architecture/instance_type", family + "\n")
    for counter in counters:
        _write(sysfs / f"stats/hardware/{counter}", f"{ecc.get(counter, 0)}\n")
    link = root / f"sys/class/neuron_device/neuron{index}"
    if not link.is_symlink():
        link.parent.mkdir(parents=True, exist_ok=True)
        link.symlink_to(f"/sys/devices/virtual/neuron_device/neuron{index}")


def default_layout(loaded: str) -> str:
    """The layout a loaded driver writes: 2.31 and newer reorganised the tree."""
    parts = [int(part) for part in loaded.split(".")[:2] if part.isdigit()]
    return "driver-2.31" if len(parts) == 2 and tuple(parts) >= (2, 31) else "classic"


def _container_node(root: Path, spec: HostSpec, versions: dict[str, str]) -> None:
    """The files that say what a container node is (the comments on BOTTLEROCKET_OS_RELEASE and after)."""
    if spec.node == "bottlerocket":
        from tests.module_files import compressed, elf_module, recorded_modinfo

        loaded = spec.loaded_version or versions.get("aws-neuronx-dkms", "")
        module = compressed(elf_module(recorded_modinfo(spec.module_recording, spec.module_version or loaded)),
                            spec.module_suffix)
        for folder in (f"lib/modules/{spec.kernel}/kernel/drivers/neuron", "usr/libexec/neuron/neuron_latest"):
            (root / folder).mkdir(parents=True, exist_ok=True)
            (root / folder / f"neuron.ko{spec.module_suffix}").write_bytes(module)
    elif spec.node == "eks":
        _write(root / "etc/eks/release", EKS_RELEASE.format(kernel=spec.kernel))
        _write(root / "etc/eks/neuron-kmod-load.sh", "#!/usr/bin/env bash\nkmod-util load aws-neuronx\n")
        _write(root / "usr/bin/kubelet", "ELF")
        (root / "etc/modules-load.d/neuron.conf").unlink(missing_ok=True)
        (root / "etc/modules-load.d/neuron.conf").symlink_to("/dev/null")
    elif spec.node == "ecs":
        _write(root / "etc/ecs/ecs.config", "")
        _write(root / "var/lib/ecs/ecs.config", "ECS_ENABLE_INF_SUPPORT=true\n")
    if spec.node == "eks" and spec.repo_file:  # the Neuron yum repository the EKS build writes (ECS deletes its own)
        _write(root / "etc/yum.repos.d/neuron.repo",
               "[neuron]\nname=Neuron YUM Repository\nbaseurl=https://yum.repos.neuron.amazonaws.com\nenabled=1\n")
    if spec.node in IMAGE_INF1_PINS and spec.inf1_pin:
        unit, script, cache = IMAGE_INF1_PINS[spec.node]
        _write(root / unit, f"[Unit]\nDescription=Neuron driver for inf1\n\n[Service]\nType=oneshot\n"
                            f"ExecStart=/{script}\nRemainAfterExit=yes\n")
        _write(root / script, "#!/bin/bash\nset -e\n# installs the cached aws-neuronx-dkms-2.21.* on inf1\n")
        (root / script).chmod(0o755)
        _write(root / cache / f"aws-neuronx-dkms-{spec.inf1_cached}-dkms.noarch.rpm", "rpm")
        if spec.node == "ecs":
            _write(root / "etc/dnf/plugins/versionlock.list", "".join(
                f"{name}-0:{versions[name]}-*\n" for name in ("aws-neuronx-dkms", "aws-neuronx-tools",
                                                              "aws-neuronx-oci-hook") if name in versions))


def _node_versions(spec: HostSpec, versions: dict[str, str]) -> dict[str, str]:
    """A container node's packages: none on Bottlerocket; the driver and tools (and the ECS AMI's OCI hook)."""
    if spec.node == "bottlerocket":
        return {}
    if spec.node in ("eks", "ecs"):
        kept = {name: version for name, version in versions.items()
                if name not in ("aws-neuronx-runtime-lib", "aws-neuronx-collectives")}
        if spec.node == "ecs" and spec.release in OCI_HOOK:
            kept.setdefault("aws-neuronx-oci-hook", OCI_HOOK[spec.release])
        return kept
    return versions


def build_host(root: Path, spec: HostSpec) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    if spec.node == "bottlerocket":
        _write(root / "etc/os-release", BOTTLEROCKET_OS_RELEASE.format(version="1.50.0", variant=spec.variant))
    else:
        _write(root / "etc/os-release", OS_RELEASES[spec.os])
    _write(root / "proc/sys/kernel/osrelease", spec.kernel + "\n")
    _write(root / "proc/uptime", "86400.00 100000.00\n")
    dmi = root / "sys/devices/virtual/dmi/id"
    if spec.instance_type:
        _write(dmi / "sys_vendor", "Amazon EC2\n")
        _write(dmi / "product_name", spec.instance_type + "\n")
    device_id, devices, cores, efa_functions = INSTANCES.get(spec.instance_type or "", ("", 0, 0, 0))
    if spec.pci and spec.pci_tree:
        _pci_tree(root, device_id, devices, efa_functions if spec.efa else 0, spec.efa_missing)
    elif spec.pci:
        for index in range(devices):
            pci = root / f"sys/bus/pci/devices/0000:{0x10 + index:02x}:1e.0"
            _write(pci / "vendor", "0x1d0f\n")
            _write(pci / "device", device_id + "\n")
        if spec.efa:
            for index in range(efa_functions):
                if index not in spec.efa_missing:
                    pci = root / f"sys/bus/pci/devices/0000:{0x80 + index:02x}:00.0"
                    _write(pci / "vendor", "0x1d0f\n")
                    _write(pci / "device", "0xefa1\n")
    if spec.pci and spec.efa and efa_functions:  # the EFA installer's limits file (aws-efa-installer: 01_efa.conf)
        _write(root / "etc/security/limits.d/01_efa.conf",
               "# EFA settings\n* soft memlock unlimited\n* hard memlock unlimited\n")
    all_versions = package_versions(spec)
    versions = _node_versions(spec, all_versions)
    host_driver = versions.get("aws-neuronx-dkms") or (all_versions.get("aws-neuronx-dkms")
                                                       if spec.node == "bottlerocket" else None)
    if spec.container and not spec.image_dkms:  # DLC Dockerfiles install runtime, collectives and tools only
        versions.pop("aws-neuronx-dkms", None)
    status = "".join(_dpkg_stanza(name, version, spec.dpkg_states.get(name, "install ok installed")) + "\n"
                     for name, version in versions.items())
    status += _dpkg_stanza("bash", "5.2.21-2ubuntu4") + "\n" + _dpkg_stanza("python3", "3.12.3-0ubuntu2") + "\n"
    if spec.node != "bottlerocket":  # no package database; its C library is not needed by the checks
        status += _c_library(root, spec.os)
        _write(root / "var/lib/dpkg/status", status)
    dkms_version = versions.get("aws-neuronx-dkms")
    if dkms_version:
        base = root / f"var/lib/dkms/aws-neuronx/{dkms_version}"
        base.mkdir(parents=True, exist_ok=True)
        if spec.module_built:
            _write(base / f"{spec.kernel}/x86_64/module/neuron.ko.zst", "ELF")
            _write(root / f"lib/modules/{spec.kernel}/updates/dkms/neuron.ko.zst", "ELF")
        if spec.make_log is not None:
            _write(base / "build/make.log", spec.make_log)
    if dkms_version:  # what the package's postinst leaves (docs/neuron-facts.md §3: drv:postinstall)
        _write(root / "etc/modules-load.d/neuron.conf", "neuron\n")
        _write(root / "lib/udev/rules.d/neuron-udev.rules", 'KERNEL=="neuron*", MODE="0666"\n')
    if spec.legacy_dkms:
        (root / "var/lib/dkms/aws-neuron/1.19.3.0").mkdir(parents=True, exist_ok=True)
    if spec.headers and not spec.container and spec.node != "bottlerocket":
        (root / f"lib/modules/{spec.kernel}/build").mkdir(parents=True, exist_ok=True)
    modules = "ena 180224 0 - Live 0x0000000000000000\n"
    loaded = spec.loaded_version or (host_driver if spec.container or spec.node == "bottlerocket" else dkms_version)
    if spec.driver_loaded and loaded:  # in a container, proc/modules and sys/module show the host's driver
        used = len(spec.holders)
        modules = f"neuron 532480 {used} - Live 0x0000000000000000\n" + modules
        if spec.sysfs_version:
            _write(root / "sys/module/neuron/version", loaded + "\n")
        node_count = devices if spec.device_nodes is None else spec.device_nodes
        for index in range(node_count):
            _make_node(root / f"dev/neuron{index}", index, spec.node_mode)
        layout = spec.sysfs_layout or default_layout(loaded)
        for index in range(devices):
            write_device_sysfs(root, index, device_id, cores, spec.ecc.get(index, {}), layout, spec.moved_ecc,
                               count_mode=count_mode(loaded))
    _write(root / "proc/modules", modules)
    if spec.runtime_library and spec.node is None:
        _write(root / "opt/aws/neuron/lib/libnrt.so.1", "ELF")
    if spec.collectives_library and spec.node is None:
        _write(root / "opt/aws/neuron/lib/libnccom.so.2", "ELF")
    if spec.tools and spec.node != "bottlerocket":
        for tool in ("neuron-ls", "neuron-top", "neuron-monitor"):
            _write(root / f"opt/aws/neuron/bin/{tool}", "#!/bin/sh\n")
    if spec.repo_file and spec.node is None:
        _write(root / "etc/apt/sources.list.d/neuron.list", "deb https://apt.repos.neuron.amazonaws.com noble main\n")
    _container_node(root, spec, versions)
    if spec.container:
        _write(root / ".dockerenv", "")
    if spec.kern_log is not None:
        _write(root / "var/log/kern.log", spec.kern_log)
    for holder in spec.holders:
        proc = root / f"proc/{holder.pid}"
        _write(proc / "comm", holder.command + "\n")
        _write(proc / "cmdline", holder.cmdline.replace(" ", "\0") + "\0")
        _write(proc / "stat", f"{holder.pid} ({holder.command}) S {holder.parent} " + " ".join(["0"] * 17)
               + " 5000 0 0\n")
        (proc / "fd").mkdir(parents=True, exist_ok=True)
        (proc / "fd" / "0").symlink_to("/dev/null")
        for number, device in enumerate(holder.devices, start=10):
            (proc / "fd" / str(number)).symlink_to(f"/dev/neuron{device}")
    return root


def pinned_inf1_host(root: Path, release: str = "2.26.1", tools: str = "2.26.14.0") -> Path:
    """An inf1.6xlarge as AWS sets Inf1 up from Neuron 2.26 on (announce-correction-neuron-driver-support-inf1): the
    driver pinned to 2.24.* and loaded, the release's tools, no runtime-lib or collectives (Inf1's frameworks
    bundle their runtime)."""
    return build_host(root, HostSpec(
        instance_type="inf1.6xlarge", release=release, runtime_library=False, collectives_library=False,
        package_versions={"aws-neuronx-dkms": "2.24.7.0", "aws-neuronx-tools": tools,
                          "aws-neuronx-runtime-lib": None, "aws-neuronx-collectives": None},
        loaded_version="2.24.7.0"))
