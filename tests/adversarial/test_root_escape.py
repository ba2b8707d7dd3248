"""Attack class: escapes out of --root. Every file read for a root resolves links inside it, as a chroot would:
a link to an absolute or `../..` path outside reads the root's own copy (or nothing), never the machine's."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

from neurondoctor.host.device_holders import read_device_holders
from neurondoctor.host.rootfs import RootFS
from tests.conftest import check_json, run_cli
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import HEALTHY_STACKS, stack_wheels
from tests.wheelhouse import VenvFactory, write_pip_conf

MARKER = "OUTSIDE-THE-ROOT-7f3a"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """Files on the machine, outside the root, that a link in the root points at."""
    directory = tmp_path / "machine-secrets"
    directory.mkdir()
    (directory / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {MARKER}\nVersion: 6.6.6\n")
    for name in ("INSTALLER", "top_level.txt", "direct_url.json", "RECORD", "version.py", "pip.conf",
                 "pyvenv.cfg", "os-release", "make.log", "log-neuron-cc.txt", "status", "modules"):
        (directory / name).write_text(f"{MARKER}\n[global]\nextra-index-url = https://{MARKER}.invalid/\n"
                                      f"__version__ = '{MARKER}'\nPackage: aws-neuronx-dkms\nVersion: {MARKER}\n")
    return directory


def _link(path: Path, target: Path, relative: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists() or path.is_symlink():
        path.unlink()
    path.symlink_to(os.path.relpath(target, path.parent) if relative else target)


@pytest.mark.parametrize("relative", [False, True])
def test_links_out_of_the_root_read_nothing_of_the_machine(tmp_path: Path, outside: Path, venvs: VenvFactory,
                                                           relative: bool) -> None:
    root = build_host(tmp_path / "root", HostSpec(make_log="make: *** Error 1\n", module_built=False))
    venv = venvs.create("escape", parent=root / "opt")
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.31.1"]))
    write_pip_conf(venv)
    site = next(venv.glob("lib/python*/site-packages"))
    dist_info = next(site.glob("torch_neuronx-*.dist-info"))
    for name in ("METADATA", "INSTALLER", "top_level.txt", "direct_url.json", "RECORD"):
        _link(dist_info / name, outside / name, relative)
    _link(site / "torch/version.py", outside / "version.py", relative)
    _link(venv / "pip.conf", outside / "pip.conf", relative)
    _link(root / "etc/os-release", outside / "os-release", relative)
    _link(root / "etc/pip.conf", outside / "pip.conf", relative)
    _link(root / "var/lib/dpkg/status", outside / "status", relative)
    _link(root / "proc/modules", outside / "modules", relative)
    _link(next(root.glob("var/lib/dkms/aws-neuronx/*/build/make.log")), outside / "make.log", relative)
    _link(root / "tmp/ubuntu/neuroncc_compile_workdir/50f29840-cfac-49a2-8d40-8b0369b8618f/log-neuron-cc.txt",
          outside / "log-neuron-cc.txt", relative)
    _, report, _ = check_json(["--root", str(root), "--venv", str(venv)])
    assert MARKER not in str(report)
    archive = tmp_path / "bundle.tar.gz"
    result = run_cli(["bundle", "--root", str(root), "--venv", str(venv), "-o", str(archive), "--max-time", "40"],
                     timeout=120)
    assert result.returncode == 0, result.stderr
    with tarfile.open(archive) as bundle:
        for member in bundle.getmembers():
            extracted = bundle.extractfile(member)
            data = extracted.read() if extracted else b""
            if member.name.endswith(".gz"):
                import gzip

                data = gzip.decompress(data)
            assert MARKER.encode() not in data, member.name


def test_a_proc_linked_to_the_machine_shows_none_of_its_processes(tmp_path: Path) -> None:
    for target in ("/proc", "../../../../../../../../proc"):
        root = build_host(tmp_path / f"root-{len(target)}", HostSpec())
        proc = root / "proc"
        for child in sorted(proc.rglob("*"), key=lambda path: len(path.parts), reverse=True):
            child.rmdir() if child.is_dir() and not child.is_symlink() else child.unlink()
        proc.rmdir()
        proc.symlink_to(target)
        fs = RootFS(root)
        assert read_device_holders(fs) == []
        with pytest.raises(OSError):
            fs.listdir("/proc")  # resolves back into the root: a loop, not the machine's /proc
        _, report, _ = check_json(["--root", str(root)])
        assert report["facts"]["host"]["snapshot"]["holders"] == []


def test_a_c_library_linked_out_of_the_root_reads_the_roots_copy_or_nothing(tmp_path: Path) -> None:
    """libc.so.6 -> ../../…/machine/libc-2.17.so: resolved inside the root, where no such file is, it proves no
    GLIBC version; the machine's file of that name is never read."""
    from neurondoctor.host.glibc_version import read_glibc_from_library
    from neurondoctor.host.rootfs import RootFS

    machine = tmp_path / "machine"
    machine.mkdir()
    (machine / "libc-2.17.so").write_bytes(b"\x7fELF GNU C Library (GNU libc) stable release version 2.17.")
    root = tmp_path / "root"
    lib = root / "usr/lib64"
    lib.mkdir(parents=True)
    (lib / "libc.so.6").symlink_to("../" * 12 + str(machine / "libc-2.17.so").lstrip("/"))
    assert read_glibc_from_library(RootFS(root)) == (None, None)
    (root / machine.relative_to("/")).mkdir(parents=True)
    (root / machine.relative_to("/") / "libc-2.17.so").write_bytes(b"\x7fELF")
    assert read_glibc_from_library(RootFS(root)) == ("2.17", "/usr/lib64/libc.so.6")
