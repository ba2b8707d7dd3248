"""The driver version from a `neuron.ko*` file: its `.modinfo` section's `version=` entry, as `modinfo` prints it.

The module files are built from recorded `modinfo neuron` output (tests/module_files.py) and read back by binutils'
`readelf` and the `zstd` tool where they are installed, so the fixture is a module those tools accept, not one only
the doctor's parser reads.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from neurondoctor.host.driver_module import find_module_file, read_driver_module
from neurondoctor.host.rootfs import RootFS
from tests.module_files import compressed, elf_module, recorded_modinfo

KERNEL = "6.12.73"
# file -> the version its module carries (every recording: release builds and Bottlerocket's 2.x builds)
RECORDINGS = {"bottlerocket-inf1-2.21.37.0.txt": "2.21.37.0", "bottlerocket-trn1-2.23.9.0.txt": "2.23.9.0",
              "bottlerocket-2.26.5.0.txt": "2.26.5.0", "bottlerocket-inf2-2.26.10.0.txt": "2.26.10.0",
              "bottlerocket-inf1-2.24.13.0.txt": "2.24.13.0", "bottlerocket-2.x.7693.0.txt": "2.x.7693.0",
              "bottlerocket-2.x.8072.0.txt": "2.x.8072.0"}


def _root_with(tmp_path: Path, folder: str, name: str, data: bytes) -> RootFS:
    (tmp_path / "root" / folder).mkdir(parents=True, exist_ok=True)
    (tmp_path / "root" / folder / name).write_bytes(data)
    return RootFS(tmp_path / "root")


@pytest.mark.parametrize("recording", sorted(RECORDINGS))
@pytest.mark.parametrize("suffix", ["", ".gz", ".xz"])
def test_the_version_of_every_recorded_module(tmp_path: Path, recording: str, suffix: str) -> None:
    plain = elf_module(recorded_modinfo(recording))
    fs = _root_with(tmp_path, f"lib/modules/{KERNEL}/kernel/drivers/neuron", f"neuron.ko{suffix}",
                    compressed(plain, suffix))
    module = read_driver_module(fs, KERNEL)
    assert module is not None and module.problem is None
    assert module.version == RECORDINGS[recording]
    assert module.path == f"/lib/modules/{KERNEL}/kernel/drivers/neuron/neuron.ko{suffix}"


@pytest.mark.skipif(shutil.which("readelf") is None, reason="binutils' readelf is not installed")
def test_readelf_reads_the_fixture_modules_modinfo(tmp_path: Path) -> None:
    path = tmp_path / "neuron.ko"
    path.write_bytes(elf_module(recorded_modinfo("bottlerocket-2.x.8072.0.txt")))
    shown = subprocess.run(["readelf", "-p", ".modinfo", str(path)], capture_output=True, text=True, check=True)
    assert "version=2.x.8072.0" in shown.stdout and "srcversion=614E351145FEC5E249AE9B2" in shown.stdout


@pytest.mark.skipif(shutil.which("zstd") is None, reason="the zstd tool is not installed")
def test_the_zstd_tool_reads_the_fixture_zst_module(tmp_path: Path) -> None:
    plain = elf_module(recorded_modinfo("bottlerocket-2.26.5.0.txt"))
    path = tmp_path / "neuron.ko.zst"
    path.write_bytes(compressed(plain, ".zst"))
    assert subprocess.run(["zstd", "-d", "-c", str(path)], capture_output=True, check=True).stdout == plain


def test_a_zst_module_is_not_known(tmp_path: Path) -> None:
    """No zstd decoder in Python 3.11's standard library: the version is not guessed."""
    plain = elf_module(recorded_modinfo("bottlerocket-2.26.5.0.txt"))
    fs = _root_with(tmp_path, f"lib/modules/{KERNEL}/updates/dkms", "neuron.ko.zst", compressed(plain, ".zst"))
    module = read_driver_module(fs, KERNEL)
    assert module is not None and module.version is None
    assert module.problem == (f"the version of /lib/modules/{KERNEL}/updates/dkms/neuron.ko.zst is not known: it is "
                              "zstd-compressed, which Python's standard library cannot read")


def test_the_kernels_linked_module_comes_before_bottlerockets_store(tmp_path: Path) -> None:
    """The boot links the build the hardware needs into the kernel's tree (bottlerocket-kernel-kit pull request
    388); the store's `neuron_latest` is read only when nothing is linked (an image not booted)."""
    fs = _root_with(tmp_path, "usr/libexec/neuron/neuron_latest", "neuron.ko",
                    elf_module(recorded_modinfo("bottlerocket-2.x.8072.0.txt")))
    assert find_module_file(fs, KERNEL) == "/usr/libexec/neuron/neuron_latest/neuron.ko"
    _root_with(tmp_path, f"lib/modules/{KERNEL}/kernel/drivers/neuron", "neuron.ko",
               elf_module(recorded_modinfo("bottlerocket-inf1-2.24.13.0.txt")))
    module = read_driver_module(fs, KERNEL)
    assert module is not None and module.version == "2.24.13.0"


def test_no_module_anywhere(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    assert read_driver_module(RootFS(tmp_path / "root"), KERNEL) is None
    assert read_driver_module(RootFS(tmp_path / "root"), None) is None
