"""Kernel module files for fixture hosts: an ELF relocatable object whose `.modinfo` section holds the lines
`modinfo neuron` printed on a real host (tests/recorded/modinfo/), written plain, gzip'd, xz'd or zstd'd as a
distribution ships modules (`neuron.ko`, `.ko.gz`, `.ko.xz`, `.ko.zst`).

The ELF layout is the System V ABI's (ELF64, little-endian, ET_REL, as `modpost` leaves a `.ko`): a file header,
the section contents, then the section header table (null, `.modinfo`, `.shstrtab`). tests/test_driver_module.py
reads each file back with binutils' `readelf` where it is installed, so the layout is checked by a tool that is not
the doctor's own parser.
"""

from __future__ import annotations

import gzip
import lzma
import struct
from pathlib import Path

RECORDED = Path(__file__).parent / "recorded" / "modinfo"
# modinfo prints these from the signature appended after the ELF, not from .modinfo; `filename` is where it found it
_NOT_MODINFO = {"filename", "sig_id", "signer", "sig_key", "sig_hashalgo", "signature"}


def recorded_modinfo(name: str, version: str | None = None) -> list[str]:
    """The `.modinfo` entries (`key=value`) of a recorded `modinfo neuron`, its version replaced when asked."""
    entries = []
    for line in (RECORDED / name).read_text().splitlines():
        key, _, value = line.partition(":")
        if key in _NOT_MODINFO:
            continue
        value = value.strip()
        entries.append(f"{key}={version if key == 'version' and version else value}")
    return entries


def elf_module(entries: list[str], modinfo_size: int | None = None, names_offset: int | None = None) -> bytes:
    """An ELF64 relocatable with a `.modinfo` section of NUL-terminated entries. `modinfo_size` and `names_offset`
    overwrite the recorded size of `.modinfo` and the offset of the section-name table (crafted files)."""
    modinfo = b"".join(entry.encode() + b"\0" for entry in entries)
    names = b"\0.modinfo\0.shstrtab\0"
    header_size, entry_size = 64, 64
    modinfo_at = header_size
    names_at = modinfo_at + len(modinfo)
    table_at = (names_at + len(names) + 7) // 8 * 8
    header = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    header += struct.pack("<HHIQQQIHHHHHH", 1, 62, 1, 0, 0, table_at, 0, header_size, 0, 0, entry_size, 3, 2)
    sections = [struct.pack("<IIQQQQIIQQ", 0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                struct.pack("<IIQQQQIIQQ", 1, 1, 2, 0, modinfo_at,
                            len(modinfo) if modinfo_size is None else modinfo_size, 0, 0, 1, 0),
                struct.pack("<IIQQQQIIQQ", 10, 3, 0, 0, names_at if names_offset is None else names_offset,
                            len(names), 0, 0, 1, 0)]
    body = header + modinfo + names
    return body + bytes(table_at - len(body)) + b"".join(sections)


def zstd_frame(data: bytes) -> bytes:
    """A zstd frame of raw (stored) blocks (RFC 8878 §3.1.1): what `zstd` writes for incompressible data, and
    what `zstd -d` reads back."""
    frame = struct.pack("<IB", 0xFD2FB528, 0xA0) + struct.pack("<I", len(data))  # single segment, 4-byte size
    blocks = [data[start:start + (128 << 10)] for start in range(0, len(data), 128 << 10)] or [b""]
    for index, block in enumerate(blocks):
        last = int(index == len(blocks) - 1)
        frame += struct.pack("<I", last | (len(block) << 3))[:3] + block
    return frame


def compressed(data: bytes, suffix: str) -> bytes:
    """The module as a distribution ships it: `` (plain), `.gz`, `.xz` or `.zst`."""
    if suffix == ".gz":
        return gzip.compress(data, mtime=0)
    if suffix == ".xz":
        return lzma.compress(data, format=lzma.FORMAT_XZ)
    if suffix == ".zst":
        return zstd_frame(data)
    return data
