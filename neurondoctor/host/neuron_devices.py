"""Device nodes `/dev/neuron*` (mode, owner) and the driver's sysfs view `sys/class/neuron_device/neuronN`.

Read only: sysfs has writable `reset` and counter files (docs/neuron-facts.md §4, sysfs user guide).

Two layouts: driver 2.31 reorganised the tree under `/sys/devices/virtual/neuron_device` and moved several nodes to
new paths, not backwards compatible (tools/neuron-sys-tools/neuron-sysfs-user-guide.rst, 2.33.0). Which one is read
follows the loaded driver's version (`sys/module/neuron/version`, which did not move). The moved paths are not
published node by node, so under the 2.31 layout a node is read at its old path when it is still there, else found
by its file name inside the device's own directory (a bounded walk that follows no links); what is found nowhere is
"could not read", never zero and never a device problem.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Optional

from neurondoctor.facts.host import DeviceNode, SysfsDevice
from neurondoctor.host.rootfs import RootFS

SYSFS_CLASS = "/sys/class/neuron_device"
SYSFS_DEVICES = "/sys/devices/virtual/neuron_device"
LAYOUT_CLASSIC = "classic"
LAYOUT_2_31 = "driver-2.31"
_LAYOUT_2_31_DRIVER = (2, 31)
_WALK_DEPTH = 5
_WALK_ENTRIES = 4096
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


def sysfs_layout(loaded_driver: Optional[str]) -> str:
    """`driver-2.31` for a loaded driver 2.31 or newer, else `classic` (also when no version can be read: every
    driver before 2.31 wrote the classic tree, and the 2.31 one is read by name anyway)."""
    match = re.match(r"\s*(\d+)\.(\d+)\.", loaded_driver or "")
    if match and (int(match.group(1)), int(match.group(2))) >= _LAYOUT_2_31_DRIVER:
        return LAYOUT_2_31
    return LAYOUT_CLASSIC


def _files_by_name(fs: RootFS, inner_dir: str) -> dict[str, str]:
    """{file name: first in-root path} of the regular files under a device directory, breadth first, without
    following links (sysfs links `subsystem` and `device` lead out of the device), bounded in depth and count."""
    found: dict[str, str] = {}
    queue = [(inner_dir, 0)]
    seen = 0
    while queue and seen < _WALK_ENTRIES:
        directory, depth = queue.pop(0)
        for name in sorted(fs.listdir(directory)):
            seen += 1
            inner = f"{directory}/{name}"
            if fs.is_link(inner):
                continue
            if fs.is_dir(inner):
                if depth + 1 < _WALK_DEPTH:
                    queue.append((inner, depth + 1))
            else:
                found.setdefault(name, inner)
    return found


def _device_dirs(fs: RootFS) -> list[str]:
    """The per-device directories: the class links, else the virtual devices they point at."""
    dirs = [inner for inner in fs.glob(SYSFS_CLASS, "neuron*") if _NODE.match(inner.rsplit("/", 1)[-1])]
    if not dirs:
        dirs = [inner for inner in fs.glob(SYSFS_DEVICES, "neuron*") if _NODE.match(inner.rsplit("/", 1)[-1])]
    return dirs


_CLASSIC_PATHS = {"core_count": "core_count", "arch_type": "info/architecture/arch_type",
                  "device_name": "info/architecture/device_name",
                  "instance_type": "info/architecture/instance_type",
                  **{counter: f"stats/hardware/{counter}" for counter in ECC_COUNTERS}}


def _node_paths(fs: RootFS, device_dir: str, layout: str) -> dict[str, str]:
    """Where each node is read: its classic path; under the 2.31 layout, for a node not there, the file of that
    name in the device's directory (walked only when something is missing)."""
    paths = {node: f"{device_dir}/{relative}" for node, relative in _CLASSIC_PATHS.items()}
    if layout != LAYOUT_2_31:  # the classic tree: read where it always was (no existence checks on the hot path)
        return paths
    missing = [node for node, path in paths.items() if not fs.lexists(path)]
    if missing:
        named = _files_by_name(fs, device_dir)
        paths.update({node: named[node] for node in missing if node in named})
    return paths


def read_sysfs_devices(fs: RootFS, loaded_driver: Optional[str] = None) -> tuple[list[SysfsDevice], str]:
    """(the devices, the layout read)."""
    layout = sysfs_layout(loaded_driver)
    devices = []
    for inner in _device_dirs(fs):
        paths = _node_paths(fs, inner, layout)
        device = SysfsDevice(
            name=inner.rsplit("/", 1)[-1],
            core_count=_read_int(fs, paths["core_count"]),
            arch_type=_read_word(fs, paths["arch_type"]),
            device_name=_read_word(fs, paths["device_name"]),
            instance_type=_read_word(fs, paths["instance_type"]),
        )
        for counter in ECC_COUNTERS:
            value = _read_int(fs, paths[counter])
            if value is not None:
                device.ecc_uncorrected[counter] = value
        devices.append(device)
    return sorted(devices, key=lambda device: _index(device.name)), layout
