"""Device nodes `/dev/neuron*` (mode, owner) and the driver's sysfs view `sys/class/neuron_device/neuronN`.

Read only: sysfs has writable `reset` and counter files (docs/neuron-facts.md §4, sysfs user guide).

Two layouts: driver 2.31 reorganised the tree under `/sys/devices/virtual/neuron_device` and moved several nodes to
new paths, not backwards compatible (tools/neuron-sys-tools/neuron-sysfs-user-guide.rst, 2.33.0). Which one is read
follows the loaded driver's version (`sys/module/neuron/version`, which did not move). The moved paths are not
published node by node, so under the 2.31 layout a node is read at its old path when it is still there, else found
by its file name inside the device's own directory (a bounded walk that follows no links); what is found nowhere is
"could not read", never zero and never a device problem.

The driver's source (aws-neuron/aws-neuron-driver 2.24.7.0, neuron_cdev.c and neuron_sysfs_metrics.c) makes
`core_count` readable by root only (S_IRUSR; everyone from driver 2.28.0, runtime.rst 2.30) and writes it without a
newline; it makes one `neuron_core<N>` directory per NeuronCore, readable by everyone. So a user who is not root
counts the cores by those directories.
"""

from __future__ import annotations

import os
import re
import stat
from typing import Optional

from neurondoctor.facts.host import DeviceNode, SysfsDevice
from neurondoctor.host.rootfs import RootFS
from neurondoctor.neuron_version import names_a_release, release_tuple
from neurondoctor.strict_numbers import count_problem, parse_count

SYSFS_CLASS = "/sys/class/neuron_device"
SYSFS_DEVICES = "/sys/devices/virtual/neuron_device"
LAYOUT_CLASSIC = "classic"
LAYOUT_2_31 = "driver-2.31"
LAYOUT_UNKNOWN = "unknown"  # a loaded driver whose version names no release (`2.x.7693.0`): read like 2.31's
_LAYOUT_2_31_DRIVER = (2, 31)
_WALK_DEPTH = 5
_WALK_ENTRIES = 4096
ECC_COUNTERS = ("mem_ecc_uncorrected", "mem_ecc_repairable_uncorrected", "sram_ecc_uncorrected")
# Compiled by `re` when a device is first looked at (none on a host without Neuron hardware).
_NODE = r"^neuron[0-9]{1,6}$"
_CORE_DIR = r"^neuron_core[0-9]{1,6}$"
# The largest value a sysfs counter or count is read as (a u64): more digits are no number the driver writes.
_MAX_SYSFS_DIGITS = 20
MAX_CORES_PER_DEVICE = 1024  # a device has 2 to 8 NeuronCores: a larger core_count is no count


def _index(path: str) -> int:
    """N of `neuronN` or `/dev/neuronN` (names _NODE matched), for ordering; -1 for anything else."""
    name = path.rsplit("/", 1)[-1]
    number = parse_count(name[len("neuron"):]) if name.startswith("neuron") else None
    return number if number is not None else -1


def read_device_nodes(fs: RootFS) -> list[DeviceNode]:
    nodes = []
    for inner in fs.glob("/dev", "neuron*"):
        name = inner.rsplit("/", 1)[-1]
        if not re.match(_NODE, name):
            continue
        try:
            info = os.lstat(fs.host_path(inner))
        except OSError:
            continue
        nodes.append(DeviceNode(inner, stat.S_ISCHR(info.st_mode), stat.S_IMODE(info.st_mode), info.st_uid,
                                info.st_gid))
    return sorted(nodes, key=lambda node: _index(node.path))


class _Malformed(str):
    """Why a sysfs value that is there is no number: `'²': not a number (…)`, `'99999': above 1024`."""


def _read_int(fs: RootFS, inner: str, maximum: Optional[int] = None) -> Optional[int | _Malformed]:
    """The number the driver wrote (`8`, `0\\n`), None when the file is not there or cannot be read, and why not
    when it is not a count within `maximum` (`²`, `+1`, ` 1`): never a guess from a digit of another script."""
    text = fs.try_read_text(inner, limit=64)
    if text is None:
        return None
    value = text[:-1] if text.endswith("\n") else text
    problem = count_problem(value, maximum, max_digits=_MAX_SYSFS_DIGITS)
    return int(value) if problem is None else _Malformed(f"{value[:24]!r}: {problem}")


def _read_word(fs: RootFS, inner: str) -> Optional[str]:
    text = fs.try_read_text(inner, limit=256)
    return text.strip() or None if text is not None else None


def sysfs_layout(loaded_driver: Optional[str]) -> str:
    """`driver-2.31` for a loaded driver 2.31 or newer, `classic` for an older one or none read, `unknown` for a
    version that names no release (`2.x.7693.0`): its tree is read at the classic paths, else by name."""
    if loaded_driver is None:
        return LAYOUT_CLASSIC
    if not names_a_release(loaded_driver):
        return LAYOUT_UNKNOWN
    return LAYOUT_2_31 if release_tuple(loaded_driver)[:2] >= _LAYOUT_2_31_DRIVER else LAYOUT_CLASSIC


def files_by_name(fs: RootFS, inner_dir: str) -> dict[str, str]:
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


def device_dirs(fs: RootFS) -> list[str]:
    """The per-device directories: the class links, else the virtual devices they point at."""
    dirs = [inner for inner in fs.glob(SYSFS_CLASS, "neuron*") if re.match(_NODE, inner.rsplit("/", 1)[-1])]
    if not dirs:
        dirs = [inner for inner in fs.glob(SYSFS_DEVICES, "neuron*") if re.match(_NODE, inner.rsplit("/", 1)[-1])]
    return dirs


CLASSIC_PATHS = {"core_count": "core_count", "arch_type": "info/architecture/arch_type",
                  "device_name": "info/architecture/device_name",
                  "instance_type": "info/architecture/instance_type",
                  **{counter: f"stats/hardware/{counter}" for counter in ECC_COUNTERS}}


def _node_paths(fs: RootFS, device_dir: str, layout: str) -> dict[str, str]:
    """Where each node is read: its classic path; under the 2.31 (or an unknown) layout, for a node not there, the
    file of that name in the device's directory (walked only when something is missing)."""
    paths = {node: f"{device_dir}/{relative}" for node, relative in CLASSIC_PATHS.items()}
    if layout == LAYOUT_CLASSIC:  # read where it always was (no existence checks on the hot path)
        return paths
    missing = [node for node, path in paths.items() if not fs.lexists(path)]
    if missing:
        named = files_by_name(fs, device_dir)
        paths.update({node: named[node] for node in missing if node in named})
    return paths


def _counted_core_dirs(fs: RootFS, device_dir: str) -> Optional[int]:
    """The `neuron_core<N>` directories of a device (one per NeuronCore), when `core_count` cannot be read (it is
    root's only); None when there are none to count (another layout, or no listing)."""
    try:
        names = fs.listdir(device_dir)
    except OSError:
        return None
    count = sum(1 for name in names if re.match(_CORE_DIR, name) and fs.is_dir(f"{device_dir}/{name}")
                and not fs.is_link(f"{device_dir}/{name}"))
    return count or None


def read_sysfs_devices(fs: RootFS, loaded_driver: Optional[str] = None) -> tuple[list[SysfsDevice], str]:
    """(the devices, the layout read)."""
    layout = sysfs_layout(loaded_driver)
    devices = []
    for inner in device_dirs(fs):
        paths = _node_paths(fs, inner, layout)
        core_count = _read_int(fs, paths["core_count"], MAX_CORES_PER_DEVICE)
        device = SysfsDevice(
            name=inner.rsplit("/", 1)[-1],
            core_count=core_count if isinstance(core_count, int) else None,
            arch_type=_read_word(fs, paths["arch_type"]),
            device_name=_read_word(fs, paths["device_name"]),
            instance_type=_read_word(fs, paths["instance_type"]),
        )
        if isinstance(core_count, _Malformed):
            device.malformed["core_count"] = core_count
        elif core_count is None:
            device.core_count = _counted_core_dirs(fs, inner)
        for counter in ECC_COUNTERS:
            value = _read_int(fs, paths[counter])
            if isinstance(value, _Malformed):
                device.malformed[counter] = value
            elif value is not None:
                device.ecc_uncorrected[counter] = value
        devices.append(device)
    return sorted(devices, key=lambda device: _index(device.name)), layout
