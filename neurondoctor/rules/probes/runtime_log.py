"""The number that matters in a Neuron runtime log, pure: after `explain` has recognised the error,
what exactly ran out and by how much.

- Device memory: the runtime's out-of-memory report (neuron-runtime/explore/device-memory.rst, 2.26 on):
  `TDRV:log_dev_mem  Failed to allocate 4.000GB (alignment: none, usage: tensors) on ND 0:NC 4`, then a usage table
  (`|  TOTAL   |   Code   |Constants | Tensors  |Scratchpad|`, one or two header rows, then `ND 0 Overall` or
  `ND 0 HBM 0`, `\\_NC 4`, `\\_NEFF 1001` rows), and at LNC=1 `Neuron Cores using this HBM: NC 4 and NC 5`; older
  runtimes say only `Failed to allocate DEVICE memory (14155776 bytes)`.
- Host memory: `Failed to allocate HOST memory (4194304 bytes)`.
- The collectives' bootstrap: `Timeout waiting for RX (waited 240 sec) - retrying, [bootstrapInit, rank: 0/8/-1]`.
- A load that found no room: the infodump's `Failure: NRT_RESOURCE in nrt_load()` and `Visible cores: 0, 1`.
- A compiler binary without a system library: `…/neuronxcc/starfish/bin/walrus_driver: error while loading shared
  libraries: libxml2.so.2: cannot open shared object file` (huggingface/optimum-neuron#698, in a TGI image).

Every pattern is linear (neurondoctor/log_text.py: no two parts of a pattern match the same characters, no class
crosses a line, every repeat is bounded), and the lines are already cut to log_text.MAX_LINE.
"""

from __future__ import annotations

import re
from typing import Optional

from neurondoctor.rules.probes.text_detail import TextDetail
from neurondoctor.strict_numbers import finite_float

# Numbers are ASCII and bounded (strict_numbers), and no part reaches past its line: a 5,000-digit "size" in a log
# is no match, never an int() error, and a line repeated without its ')' costs what it is long.
_ALLOCATION = re.compile(r"Failed to allocate ([0-9.]{1,20}[KMGT]?B) \(alignment: [^,)\n]{0,64}, "
                         r"usage: ([^)\n]{1,200})\) on ND ([0-9]{1,6}):NC ([0-9]{1,6})")
_DEVICE_BYTES = re.compile(r"Failed to allocate DEVICE memory \(([0-9]{1,18}) bytes\)")
_HOST_BYTES = re.compile(r"Failed to allocate HOST memory \(([0-9]{1,18}) bytes\)")
_SHARED_HBM = re.compile(r"Neuron Cores using this HBM: ([^\n]{0,200})")
_RX_TIMEOUT = re.compile(r"Timeout waiting for RX \(waited ([0-9]{1,9}) sec\)")
_RX_RANK = re.compile(r"\[bootstrapInit, rank: ([0-9]{1,9})/([0-9]{1,9})/")
_VISIBLE = re.compile(r"Visible cores: ([0-9, -]{1,400})")
_LIBRARY = re.compile(r"error while loading shared libraries: ([\w.+-]{1,200}): cannot open shared object file")
# The OS packages that hold a library a compiler binary is known to need (Debian/Ubuntu and Amazon Linux/RHEL names).
_LIBRARY_PACKAGES = {"libxml2.so.2": ("libxml2", "libxml2")}
_SIZE = re.compile(r"([0-9]{1,12}(?:\.[0-9]{1,6})?)[ \t]{0,8}([KMGT]?B)")
_UNITS = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}
_TABLE_ROWS = 400


def _bytes(text: str) -> Optional[int]:
    match = _SIZE.fullmatch(text.strip())
    number = finite_float(match.group(1)) if match else None
    return int(number * _UNITS[match.group(2)]) if match and number is not None else None


def _shown(size: int) -> str:
    for unit in ("TB", "GB", "MB", "KB"):
        if size >= _UNITS[unit]:
            return f"{size / _UNITS[unit]:.1f} {unit[0]}iB"
    return f"{size} B"


def usage_table(text: str, core: str) -> dict[str, str]:
    """Column → value of the row for `\\_NC <core>` (else the device's overall row) in the runtime's memory table.
    The header's rows are joined column by column (`Model` over `Code`: `Model Code`)."""
    headers: list[list[str]] = []
    rows: dict[str, list[str]] = {}
    for line in text.splitlines()[:100_000]:
        if line.count("|") < 3:
            continue
        label, _, rest = line.partition("|")
        cells = [cell.strip() for cell in rest.split("|")]
        label = label.strip()
        if not label:
            headers.append(cells)
        elif len(rows) < _TABLE_ROWS:
            rows.setdefault(label.lstrip("\\_ ").strip(), cells)
    if not headers:
        return {}
    columns = [" ".join(part for part in parts if part) for parts in zip(*headers)]
    row = rows.get(f"NC {core}") or next((cells for label, cells in rows.items() if label.startswith("ND ")), None)
    return {column: value for column, value in zip(columns, row or []) if column}


def _device_memory(text: str) -> Optional[TextDetail]:
    allocation = _ALLOCATION.search(text)
    if allocation is None:
        raw = _DEVICE_BYTES.search(text)
        return TextDetail(f"{_shown(int(raw.group(1)))} of device memory could not be allocated") if raw else None
    size, usage, device, core = allocation.groups()
    table = usage_table(text, core)
    held = table.get("TOTAL")
    parts = sorted(((column, value) for column, value in table.items()
                    if column != "TOTAL" and (_bytes(value) or 0) > 0), key=lambda item: -(_bytes(item[1]) or 0))
    what = f"{size} more for {usage} on ND {device}:NC {core}"
    if held:
        largest_parts = ", ".join(f"{column.lower()} {value}" for column, value in parts[:3])
        what += f", which already held {held}" + (f" ({largest_parts})" if parts else "")
    shared = _SHARED_HBM.search(text)
    ways: list[str] = []
    if shared:
        cores = shared.group(1).strip()
        what += f"; at LNC=1, {cores} share this HBM, so what the other core holds counts too"
        ways.append(f"{cores} share one HBM at LNC=1: load less on the other core, or run at LNC=2 (the default "
                    "on Trn2) where the two are one logical core")
    largest, amount = (parts[0][0].lower(), f" ({parts[0][1]} of {held})") if parts and held else (usage.lower(), "")
    if "scratchpad" in largest and "shared" not in largest:
        way = (f"non-shared scratchpad is the largest part{amount}: raise NEURON_SCRATCHPAD_PAGE_SIZE (a multiple of "
               "512 MB, at most 3.5 GB) so the variables fit in the shared scratchpad (neuron-runtime/explore/"
               "device-memory.rst)")
    elif "profiler" in largest:
        way = f"profiler buffers are the largest part{amount}: profile one NEFF at a time, or capture a system profile"
    elif "tensors" in largest:
        way = (f"tensors are the largest part{amount}: a smaller batch or sequence on this core, or a larger "
               "tensor-parallel degree that spreads them over more cores")
    else:
        way = None
    return TextDetail(what, tuple([way] if way else []) + tuple(ways))


def _host_memory(text: str) -> Optional[TextDetail]:
    raw = _HOST_BYTES.search(text)
    return TextDetail(f"{_shown(int(raw.group(1)))} of host memory could not be allocated") if raw else None


def _rx_timeout(text: str) -> Optional[TextDetail]:
    waits = [int(match.group(1)) for match in _RX_TIMEOUT.finditer(text)]
    if not waits:
        return None
    rank = _RX_RANK.search(text)
    who = f"rank {rank.group(1)} of {rank.group(2)}" if rank else "a rank"
    return TextDetail(f"{who} waited {max(waits)} s in the collectives' bootstrap for peers that did not connect "
                         f"({len(waits)} timeout line(s))")


def _nrt_resource(text: str) -> Optional[TextDetail]:
    visible = _VISIBLE.search(text)
    return TextDetail(f"the model's load found no room on the NeuronCores it was given (visible cores: "
                         f"{visible.group(1).strip()})") if visible else None


def _shared_library(text: str) -> Optional[TextDetail]:
    missing = _LIBRARY.search(text)
    if not missing:
        return None
    library = missing.group(1)
    before = text[max(0, text.rfind("\n", 0, missing.start()) + 1):missing.start()].rstrip(": ").split()
    binary = before[-1].rsplit("/", 1)[-1].rstrip(":") if before else "a compiler binary"
    debian, redhat = _LIBRARY_PACKAGES.get(library, (None, None))
    ways = ((f"install it: `sudo apt-get install -y {debian}` (Ubuntu, Debian; in an image's Dockerfile without "
             f"sudo) or `sudo dnf install -y {redhat}` (Amazon Linux 2023)",) if debian else
            (f"install the package that holds it: `apt-file search {library}` (Ubuntu, Debian) or `dnf provides "
             f"'*/{library}'` (Amazon Linux 2023) names it",))
    return TextDetail(f"{binary} needs {library}, which is not installed on this machine or in this image", ways)


RUNTIME_READERS = {"device-memory": _device_memory, "host-memory": _host_memory, "collectives-bootstrap": _rx_timeout,
                   "nrt-resource": _nrt_resource, "shared-library": _shared_library}
