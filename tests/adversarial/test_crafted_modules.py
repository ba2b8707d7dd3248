"""Crafted `neuron.ko*` files: the module reader runs as root on a tree others control. A truncated ELF, a section
table or `.modinfo` that points past the file, a `.modinfo` section that claims gigabytes, a gzip or xz bomb, a FIFO
and a version entry with terminal escapes each give one line saying the version is not known; the decompressors
stop at the byte bound (never inflate a bomb whole), and the rest of the report still comes out."""

from __future__ import annotations

import gzip
import lzma
import os
import time
from pathlib import Path

import pytest

from neurondoctor.host.driver_module import MAX_MODULE_BYTES, read_driver_module
from neurondoctor.host.rootfs import RootFS
from tests.conftest import check_json, cli_env
from tests.host_fixture import HostSpec, build_host
from tests.module_files import elf_module, recorded_modinfo

KERNEL = "6.1.161"
FOLDER = f"lib/modules/{KERNEL}/kernel/drivers/neuron"
GOOD = elf_module(recorded_modinfo("bottlerocket-inf2-2.26.10.0.txt"))
ZEROS = 64 << 20  # twice the bound: a bomb that would decompress past it


def _problem(tmp_path: Path, name: str, data: bytes) -> str:
    (tmp_path / "root" / FOLDER).mkdir(parents=True, exist_ok=True)
    (tmp_path / "root" / FOLDER / name).write_bytes(data)
    module = read_driver_module(RootFS(tmp_path / "root"), KERNEL)
    assert module is not None and module.version is None and module.problem is not None
    assert "\n" not in module.problem and module.problem.startswith(f"the version of /{FOLDER}/{name} is not known")
    return module.problem


@pytest.mark.parametrize(("data", "why"), [
    (GOOD[:40], "not an ELF file"),  # cut inside the file header
    (GOOD[:-30], "section table is damaged"),  # cut inside the section table
    (b"MZ" + GOOD[2:], "not an ELF file"),
    (GOOD[:4] + b"\x03" + GOOD[5:], "ELF class or byte order"),
    (elf_module(["version=2.26.10.0"], modinfo_size=1 << 40), "more than a module's"),
    (elf_module(["version=2.26.10.0"], modinfo_size=4096), "lies outside the file"),
    (elf_module(["version=2.26.10.0"], names_offset=1 << 30), "section names lie outside"),
    (elf_module(["license=GPL", "srcversion=8818F61F4109E2E9CE9BA2E"]), "has no version"),
    (elf_module(["version=2.26.10.0\x1b]52;c;cm0gLXJmIH4=\x07"]), "not a version"),
    (elf_module(["version=" + "9" * 5000]), "not a version"),
])
def test_a_crafted_elf_gives_one_line(tmp_path: Path, data: bytes, why: str) -> None:
    assert why in _problem(tmp_path, "neuron.ko", data)


def test_a_gzip_bomb_stops_at_the_bound(tmp_path: Path) -> None:
    started = time.perf_counter()
    bomb = gzip.compress(GOOD + bytes(ZEROS), compresslevel=9)
    assert len(bomb) < 1 << 20
    assert f"more than {MAX_MODULE_BYTES >> 20} MiB" in _problem(tmp_path, "neuron.ko.gz", bomb)
    assert time.perf_counter() - started < 30


def test_an_xz_bomb_stops_at_the_bound(tmp_path: Path) -> None:
    bomb = lzma.compress(GOOD + bytes(ZEROS), format=lzma.FORMAT_XZ)
    assert len(bomb) < 1 << 20
    assert f"more than {MAX_MODULE_BYTES >> 20} MiB" in _problem(tmp_path, "neuron.ko.xz", bomb)


def test_compressed_garbage_and_a_cut_stream(tmp_path: Path) -> None:
    assert "does not decompress" in _problem(tmp_path, "neuron.ko.gz", b"\x1f\x8b\x08\x00garbage" * 10)
    (tmp_path / "root" / FOLDER / "neuron.ko.gz").unlink()
    assert "ends early" in _problem(tmp_path, "neuron.ko.gz", gzip.compress(GOOD)[:200])


def test_a_huge_module_file_is_not_read_whole(tmp_path: Path) -> None:
    (tmp_path / "root" / FOLDER).mkdir(parents=True)
    with open(tmp_path / "root" / FOLDER / "neuron.ko", "wb") as sparse:
        sparse.write(GOOD)
        sparse.truncate(MAX_MODULE_BYTES + (1 << 20))
    module = read_driver_module(RootFS(tmp_path / "root"), KERNEL)
    assert module is not None and module.problem is not None and "larger than" in module.problem


def test_a_fifo_in_the_modules_place(tmp_path: Path) -> None:
    (tmp_path / "root" / FOLDER).mkdir(parents=True)
    os.mkfifo(tmp_path / "root" / FOLDER / "neuron.ko")
    module = read_driver_module(RootFS(tmp_path / "root"), KERNEL)
    assert module is not None and module.problem is not None and "cannot be read" in module.problem


def test_a_module_linked_out_of_the_root_is_read_inside_it(tmp_path: Path) -> None:
    """An absolute link resolves inside the root (chroot semantics), never onto the machine running the doctor."""
    outside = tmp_path / "outside.ko"
    outside.write_bytes(elf_module(["version=6.6.6.6"]))
    (tmp_path / "root" / FOLDER).mkdir(parents=True)
    (tmp_path / "root" / FOLDER / "neuron.ko").symlink_to(outside)
    module = read_driver_module(RootFS(tmp_path / "root"), KERNEL)
    assert module is not None and module.version is None


def test_the_report_still_comes_out_with_a_crafted_module(tmp_path: Path) -> None:
    """A Bottlerocket node whose module file is garbage and whose sysfs version is gone: the driver line says the
    version is not known, the other areas are judged, and the node is not called broken for it."""
    root = build_host(tmp_path / "node", HostSpec(instance_type="inf2.xlarge", release="2.28.1", kernel=KERNEL,
                                                  node="bottlerocket", module_suffix="", sysfs_version=False))
    (root / FOLDER / "neuron.ko").write_bytes(GOOD[:100])
    code, report, _ = check_json(["--root", str(root)], env=cli_env({"HOME": str(tmp_path / "operator")}))
    assert code == 0 and report["findings"] == []
    driver = next(check for check in report["checks"] if check["id"] == "driver")
    assert "is not known: its ELF section table is damaged, kernel 6." in driver["summary"]
    assert {check["id"] for check in report["checks"] if check["status"] == "ok"} >= {"hardware", "devices"}

