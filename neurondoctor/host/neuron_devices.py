"""Device nodes `/dev/neuron*` (mode, owner) and the driver's sysfs view `sys/class/neuron_device/neuronN`.

Read only: sysfs has writable `reset` and counter files (neuron-facts.md §4, sysfs user guide).
"""

from __future__ import annotations

import os
import re
import stat
from typing import Optional

from neurondoctor.facts.host import DeviceNode, SysfsDevice
from neurondoctor.host.rootfs import RootFS

SYSFS_CLASS = "/sys/class/neuron_device"
ECC_COUNTERS = ("mem_ecc_uncorrected", "mem_ecc_repairable_uncorrected", "sram_ecc_uncorrected")
_NODE = re.compile(r"^neuron\d+$")


def _index(name: str) -> int:
    digits = re.sub(r"\D", "", name)
    return int(digits) if digits else -1


def read_device_nodes(fs: RootFS) -> list[DeviceNode]:
    nodes = []
    for inner in fs.glob("/dev", "neuron*"):
        name = inner.rsplit("/", 1)[-1]
        if not _NODE.match(name):
            continue
        try:
            info = os.lstat(fs.host_path(inner))
        except OSError:
            continue
        nodes.append(DeviceNode(inner, stat.S_ISCHR(info.st_mode), stat.S_IMODE(info.st_mode), info.st_uid,
                                info.st_gid))
    return sorted(nodes, key=lambda node: _index(node.path))


def _read_int(fs: RootFS, inner: str) -> Optional[int]:
    text = fs.try_read_text(inner, limit=64)
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:
        return None


def _read_word(fs: RootFS, inner: str) -> Optional[str]:
    text = fs.try_read_text(inner, limit=256)
    return text.strip() or None if text is not None else None


def read_sysfs_devices(fs: RootFS) -> list[SysfsDevice]:
    devices = []
    for inner in fs.glob(SYSFS_CLASS, "neuron*"):
        name = inner.rsplit("/", 1)[-1]
        device = SysfsDevice(
            name=name,
            core_count=_read_int(fs, f"{inner}/core_count"),
            arch_type=_read_word(fs, f"{inner}/info/architecture/arch_type"),
            device_name=_read_word(fs, f"{inner}/info/architecture/device_name"),
            instance_type=_read_word(fs, f"{inner}/info/architecture/instance_type"),
        )
        for counter in ECC_COUNTERS:
            value = _read_int(fs, f"{inner}/stats/hardware/{counter}")
            if value is not None:
                device.ecc_uncorrected[counter] = value
        devices.append(device)
    return sorted(devices, key=lambda device: _index(device.name))
