"""The `neuron` module file on disk and the driver version in its `.modinfo` section.

A node without a package database has no aws-neuronx-dkms version to read. Bottlerocket builds the driver from
AWS's aws-neuronx-dkms sources into its own kernel kit and keeps the modules under `/usr/libexec/neuron/<build>/`
(`neuron_latest`, `neuron_2_24` for Inf1, `neuron_2x_<build>`), from where the boot links the one the hardware needs
to `/lib/modules/<kernel>/kernel/drivers/neuron/neuron.ko` (bottlerocket-kernel-kit `packages/kmod-6.1-neuron/
kmod-6.1-neuron.spec` installs `neuron.ko.gz`, `kmod-6.12-neuron.spec` a plain `neuron.ko`; the `filename:` lines of
tests/recorded/modinfo/). DKMS installs to `updates/dkms/` (Debian, Ubuntu) or `extra/` (rpm distributions).

The version is what `modinfo neuron` prints: the `version=` string of the module's `.modinfo` ELF section
(MODULE_VERSION). `.gz` and `.xz` modules are decompressed with the standard library, never past a byte bound; a
`.zst` module cannot be read (no zstd decoder in Python 3.11's standard library): its version is not known unless
the loaded module's `sys/module/neuron/version` says it.
"""

from __future__ import annotations

import lzma
import struct
import zlib
from typing import Optional

from neurondoctor.facts.host import DriverModuleFile
from neurondoctor.host.rootfs import RootFS

# Where a kernel's `neuron` module is installed, most specific first; Bottlerocket's store is read only when no
# module was linked for the kernel (an image that has not booted).
MODULE_FOLDERS = ("kernel/drivers/neuron", "updates/dkms", "extra", "neuron_latest")
BOTTLEROCKET_STORE = "/usr/libexec/neuron/neuron_latest"
SUFFIXES = ("", ".gz", ".xz", ".zst")
# A built neuron.ko is under 1 MiB stripped (868777 bytes in bottlerocket-kernel-kit pull request 388); 32 MiB
# leaves room for an unstripped one and stops a crafted file or a decompression bomb.
MAX_MODULE_BYTES = 32 << 20
MAX_MODINFO_BYTES = 1 << 20
XZ_MEMORY_LIMIT = 256 << 20
MAX_VERSION_CHARS = 64

_ELF_LAYOUT = {  # EI_CLASS -> (header: e_shoff, e_shentsize, e_shnum, e_shstrndx), section header size, field codes
    1: ((0x20, 0x2E, 0x30, 0x32), 40, "I", "IIIIII"),
    2: ((0x28, 0x3A, 0x3C, 0x3E), 64, "Q", "IIQQQQ"),
}


class UnreadableModule(ValueError):
    """Why a module file gives no version, in words for the report."""


def find_module_file(fs: RootFS, kernel: Optional[str]) -> Optional[str]:
    """The `neuron.ko*` of this kernel, else Bottlerocket's stored build; None when neither is there."""
    folders = [f"/lib/modules/{kernel}/{folder}" for folder in MODULE_FOLDERS] if kernel else []
    for folder in (*folders, BOTTLEROCKET_STORE):
        found = fs.glob(folder, "neuron.ko*")
        for suffix in SUFFIXES:
            if f"{folder}/neuron.ko{suffix}" in found:
                return f"{folder}/neuron.ko{suffix}"
    return None


def _bounded(output: bytes, unused: bool) -> bytes:
    if len(output) > MAX_MODULE_BYTES:
        raise UnreadableModule(f"it decompresses to more than {MAX_MODULE_BYTES >> 20} MiB")
    if not unused:
        raise UnreadableModule("its compressed data ends early")
    return output


def decompress(path: str, data: bytes) -> bytes:
    """The module's ELF bytes: `.gz` by zlib and `.xz` by lzma, each stopped one byte past the bound."""
    try:
        if path.endswith(".gz"):
            inflater = zlib.decompressobj(wbits=31)
            output = inflater.decompress(data, MAX_MODULE_BYTES + 1)
            return _bounded(output, inflater.eof)
        if path.endswith(".xz"):
            unpacker = lzma.LZMADecompressor(format=lzma.FORMAT_XZ, memlimit=XZ_MEMORY_LIMIT)
            output = unpacker.decompress(data, MAX_MODULE_BYTES + 1)
            return _bounded(output, unpacker.eof)
    except (zlib.error, lzma.LZMAError) as error:
        raise UnreadableModule(f"it does not decompress ({error})") from None
    if path.endswith(".zst"):
        raise UnreadableModule("it is zstd-compressed, which Python's standard library cannot read")
    return data


def _sections(data: bytes) -> tuple[list[tuple[int, int, int]], int, str]:
    """(name offset, file offset, size) of every section, the index of the section-name table, and the byte order."""
    if data[:4] != b"\x7fELF" or len(data) < 0x40:
        raise UnreadableModule("it is not an ELF file")
    layout = _ELF_LAYOUT.get(data[4])
    order = {1: "<", 2: ">"}.get(data[5])
    if layout is None or order is None:
        raise UnreadableModule("its ELF class or byte order is not one Linux uses")
    (shoff_at, entsize_at, count_at, names_at), entry_size, offset_code, entry_codes = layout
    shoff = struct.unpack_from(order + offset_code, data, shoff_at)[0]
    entsize, count, names = (struct.unpack_from(order + "H", data, at)[0] for at in (entsize_at, count_at, names_at))
    if entsize != entry_size or count == 0 or names >= count or shoff + count * entsize > len(data):
        raise UnreadableModule("its ELF section table is damaged")
    sections = []
    for index in range(count):
        name, _, _, _, offset, size = struct.unpack_from(order + entry_codes, data, shoff + index * entsize)
        sections.append((name, offset, size))
    return sections, names, order


def modinfo_version(data: bytes) -> str:
    """The `version=` entry of the `.modinfo` section (`srcversion=` is another entry)."""
    sections, names, _ = _sections(data)
    _, names_offset, names_size = sections[names]
    if names_offset + names_size > len(data):
        raise UnreadableModule("its ELF section names lie outside the file")
    table = data[names_offset:names_offset + names_size]
    for name, offset, size in sections:
        if table[name:name + 9] != b".modinfo\0":
            continue
        if size > MAX_MODINFO_BYTES:
            raise UnreadableModule(f"its .modinfo section is {size} bytes, more than a module's")
        if offset + size > len(data):
            raise UnreadableModule("its .modinfo section lies outside the file")
        for entry in data[offset:offset + size].split(b"\0"):
            if entry.startswith(b"version="):
                return _version_text(entry[len(b"version="):])
        raise UnreadableModule("its .modinfo section has no version")
    raise UnreadableModule("it has no .modinfo section")


def _version_text(raw: bytes) -> str:
    text = raw.decode("ascii", "replace")
    if not text or len(text) > MAX_VERSION_CHARS or not text.isprintable() or " " in text:
        raise UnreadableModule("its version entry is not a version")
    return text


def read_driver_module(fs: RootFS, kernel: Optional[str]) -> Optional[DriverModuleFile]:
    """The module file for this kernel and its version, or the reason in one line why the version is not known."""
    path = find_module_file(fs, kernel)
    if path is None:
        return None
    module = DriverModuleFile(path)
    try:
        data = fs.read_bytes(path, limit=MAX_MODULE_BYTES + 1)
        if len(data) > MAX_MODULE_BYTES:
            raise UnreadableModule(f"it is larger than {MAX_MODULE_BYTES >> 20} MiB")
        module.version = modinfo_version(decompress(path, data))
    except UnreadableModule as why:
        module.problem = f"the version of {path} is not known: {why}"
    except OSError as error:
        module.problem = f"the version of {path} is not known: it cannot be read ({error.strerror or error})"
    except struct.error:
        module.problem = f"the version of {path} is not known: its ELF headers are cut short"
    return module
