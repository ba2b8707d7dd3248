"""Neuron and EFA functions on the PCI bus: hardware is visible here even when no driver is loaded.

Vendor `0x1d0f` (Amazon); devices `0x7164` Trainium1, `0x7264` Inferentia2, `0x7364` Trainium2, `0x7564` and
`0x7565` Trainium3, `0x7064`–`0x7067` Inferentia1 (docs/neuron-facts.md §4: drv:neuron_device.h, neuron_pci.c). EFA is
the same vendor with `0xefa0`–`0xefa3`.
"""

from __future__ import annotations

from typing import Optional

from neurondoctor.facts.host import PciFunction
from neurondoctor.host.rootfs import RootFS

AMAZON_VENDOR = "0x1d0f"
NEURON_DEVICE_FAMILIES = {
    "0x7164": "trn1", "0x7264": "inf2", "0x7364": "trn2", "0x7564": "trn3", "0x7565": "trn3",
    "0x7064": "inf1", "0x7065": "inf1", "0x7066": "inf1", "0x7067": "inf1",
}
EFA_DEVICE_IDS = frozenset({"0xefa0", "0xefa1", "0xefa2", "0xefa3"})
PCI_DIR = "/sys/bus/pci/devices"


def _tree_path(fs: RootFS, device_dir: str) -> Optional[str]:
    """Where `/sys/bus/pci/devices/ADDRESS` (a link) points in the PCI tree, inside the root: its bridges are the
    path's folders. None when it is not under /sys/devices (a flat copy of the tree)."""
    resolved = fs.resolve(device_dir)
    inner = fs.inner_path(resolved) if resolved is not None else None
    return inner if inner and inner.startswith("/sys/devices/pci") else None


def read_pci_functions(fs: RootFS) -> tuple[list[PciFunction], list[Optional[str]]]:
    """(Neuron functions, the EFA functions' places in the PCI tree: one entry per function, None where unknown)."""
    functions: list[PciFunction] = []
    efa: list[Optional[str]] = []
    for device_dir in fs.glob(PCI_DIR, "*"):
        vendor = (fs.try_read_text(f"{device_dir}/vendor", limit=32) or "").strip().lower()
        if vendor != AMAZON_VENDOR:
            continue
        device = (fs.try_read_text(f"{device_dir}/device", limit=32) or "").strip().lower()
        if device in NEURON_DEVICE_FAMILIES:
            functions.append(PciFunction(device_dir.rsplit("/", 1)[-1], device, NEURON_DEVICE_FAMILIES[device],
                                         _tree_path(fs, device_dir)))
        elif device in EFA_DEVICE_IDS:
            efa.append(_tree_path(fs, device_dir))
    return functions, efa
