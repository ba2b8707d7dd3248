"""Loaded kernel modules (`proc/modules`) and the loaded Neuron driver's version (`sys/module/neuron/version`).

`proc/modules` lines: `name size refcount users state address` (lsmod's source; nrt-ts shows
`neuron 237568 0`, the third column being the used-by count).
"""

from __future__ import annotations

from typing import Optional

from neurondoctor.facts.host import KernelModule
from neurondoctor.host.rootfs import RootFS
from neurondoctor.strict_numbers import parse_count


def parse_proc_modules(text: str) -> dict[str, KernelModule]:
    modules: dict[str, KernelModule] = {}
    for line in text.splitlines():
        fields = line.split()
        size = parse_count(fields[1]) if len(fields) > 2 else None
        used_by = parse_count(fields[2], minimum=-(1 << 31)) if len(fields) > 2 else None
        if size is None or used_by is None:
            continue
        listed = fields[3] if len(fields) > 3 else "-"
        users = [user for user in listed.strip(",").split(",") if user not in ("-", "")]
        modules[fields[0]] = KernelModule(fields[0], size, used_by, users)
    return modules


def read_modules(fs: RootFS) -> dict[str, KernelModule]:
    """The loaded modules; none when the tree has no `proc/modules` (a bare root). A `proc/modules` that is there
    but cannot be read (a FIFO, no permission) raises OSError: "not loaded" would be a guess, and a health check
    must not drain a node on a guess."""
    try:
        text = fs.read_text("/proc/modules", limit=1 << 20)
    except FileNotFoundError:
        return {}
    return parse_proc_modules(text)


def read_loaded_driver_version(fs: RootFS) -> Optional[str]:
    text = fs.try_read_text("/sys/module/neuron/version", limit=256)
    return text.strip() or None if text is not None else None
