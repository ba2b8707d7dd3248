"""Under `--root`, mount facts come from the snapshot's own table (proc/self/mounts, else proc/1/mountinfo, else
etc/fstab) and disk figures only from a root that is a live view of this machine. Each plant has its near miss: the
same paths on a local read-write, exec mount stay clean. The lines are real hosts' (tests/mount_tables.py)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from neurondoctor.facts.mounts import MountTable
from neurondoctor.host.mount_table import parse_mountinfo, parse_mounts, read_mount_table
from neurondoctor.host.rootfs import RootFS
from tests.conftest import REPO, check_json, cli_env, findings_by_id
from tests.host_fixture import HostSpec, build_host
from tests.mount_tables import (
    EFS_LINE,
    EKS_MOUNTINFO,
    FSX_FSTAB_LINE,
    FSX_LINE,
    HOME_NFS_LINE,
    UBUNTU_FSTAB,
    UBUNTU_TRN1_MOUNTS,
    as_live_view,
    write_table,
)
from tests.wheelhouse import VenvFactory, WheelSpec

CACHE = "/var/tmp/neuron-compile-cache"
COMPILER = WheelSpec("neuronx-cc", "2.15.141.0+d3cfc8ca")


def _table(text: str, fstab: bool = False) -> MountTable:
    entries, _, _ = parse_mounts(text, fstab=fstab)
    return MountTable(source="test", _entries=tuple(entries))


def test_the_longest_mount_point_holds_a_path_and_a_later_mount_covers_an_earlier() -> None:
    table = _table(UBUNTU_TRN1_MOUNTS + EFS_LINE.format(point="/mnt/efs") + HOME_NFS_LINE
                   + "tmpfs /mnt/efs tmpfs rw,nosuid,nodev 0 0\n")
    root = table.mount_of("/var/tmp/neuron-compile-cache")
    assert root is not None and (root.point, root.filesystem) == ("/", "ext4")
    home = table.mount_of("/home/ubuntu/venv")
    assert home is not None and home.filesystem == "nfs4"
    covered = table.mount_of("/mnt/efs/cache")
    assert covered is not None and covered.filesystem == "tmpfs"  # mounted over the EFS one, later in the table
    assert table.mount_of("/homework") == root  # a prefix of the name is not a folder of it


def test_octal_escapes_and_fstab_implied_options() -> None:
    table = _table("/dev/root / ext4 rw 0 0\n/dev/sdb /mnt/My\\040Data xfs ro,noexec 0 0\n")
    spaced = table.mount_of("/mnt/My Data/cache")
    assert spaced is not None and spaced.point == "/mnt/My Data" and {"ro", "noexec"} <= spaced.options
    fstab = _table(UBUNTU_FSTAB + "/dev/sdc /data ext4 users,exec 0 2\n/dev/sdd /scratch ext4 user 0 2\n"
                   "/swapfile none swap sw 0 0\n", fstab=True)
    data, scratch = fstab.mount_of("/data/venv"), fstab.mount_of("/scratch/venv")
    assert data is not None and "noexec" not in data.options  # `exec` after `users` undoes what it implies
    assert scratch is not None and "noexec" in scratch.options  # mount(8): `user` implies noexec
    root = fstab.mount_of("/opt")
    assert root is not None and (root.point, root.filesystem) == ("/", "ext4")


def test_mountinfo_reads_the_device_and_a_read_only_bind_over_a_read_write_filesystem() -> None:
    entries, skipped, cut = parse_mountinfo(EKS_MOUNTINFO + "40 22 259:1 /var/lib/models /models ro,relatime "
                                            "shared:1 - xfs /dev/nvme0n1p1 rw,attr2\n")
    table = MountTable(source="test", _entries=tuple(entries))
    models = table.mount_of("/models/cache")
    assert models is not None and models.device == "259:1" and "ro" in models.options and "rw" not in models.options
    assert (skipped, cut) == (0, False)


def _root(tmp_path: Path, table: str, text: str) -> Path:
    root = build_host(tmp_path / "root", HostSpec())
    write_table(root, table, text)
    return root


def _check(root: Path, *args: str, **variables: str) -> dict[str, Any]:
    return check_json(["--root", str(root), *args], env=cli_env(variables or None))[1]


def _cache(document: dict[str, Any]) -> dict[str, Any]:
    cache: dict[str, Any] = document["facts"]["host"]["snapshot"]["compile_cache"]
    return cache


@pytest.mark.parametrize("table, text, point", [
    ("/proc/self/mounts", UBUNTU_TRN1_MOUNTS + "/dev/nvme1n1 /var/tmp ext4 {mode},relatime 0 0\n", "/var/tmp"),
    ("/proc/1/mountinfo", EKS_MOUNTINFO + "30 22 259:3 / /var/tmp {mode},relatime shared:9 - xfs /dev/nvme1n1 rw\n",
     "/var/tmp"),
    ("/etc/fstab", "LABEL=cloudimg-rootfs / ext4 {mode},discard,errors=remount-ro 0 1\n", "/"),
])
def test_a_cache_on_a_read_only_mount_from_each_table(tmp_path: Path, table: str, text: str, point: str) -> None:
    """A snapshot whose table mounts the cache's filesystem read-only (a cache on the read-only model folder of a
    serving container): ND-CACHE-004 from that table, never from this machine. Near miss: the same line rw."""
    root = _root(tmp_path, table, text.format(mode="rw"))
    document = _check(root, "--select", "ND-CACHE")
    assert findings_by_id(document) == {}
    assert _cache(document)["mount"]["table"] == table and _cache(document)["read_only"] is False
    write_table(root, table, text.format(mode="ro"))
    found = findings_by_id(_check(root, "--select", "ND-CACHE"))["ND-CACHE-004"][0]
    assert found["title"] == (f"the compile cache {CACHE} is on a read-only filesystem ({point} is mounted "
                              f"read-only: {table})")
    assert found["evidence"]["mount"] == point and found["evidence"]["mount_table"] == table


def test_the_read_only_fix_points_the_cache_at_a_writable_folder(tmp_path: Path) -> None:
    """The export line of ND-CACHE-004, pasted into the shell before the check: the cache it names is on the
    read-write root filesystem of the snapshot, and the finding is gone."""
    root = _root(tmp_path, "/proc/self/mounts", UBUNTU_TRN1_MOUNTS + "/dev/nvme1n1 /var/tmp ext4 ro,relatime 0 0\n")
    env = cli_env({"HOME": "/home/ubuntu"})
    env.pop("NEURON_COMPILE_CACHE_URL", None)
    args = ["--root", str(root), "--select", "ND-CACHE"]
    fix = findings_by_id(check_json(args, env=env)[1])["ND-CACHE-004"][0]["fix"]
    check = " ".join(shlex.quote(word) for word in (sys.executable, "-m", "neurondoctor", "check", "--json", *args))
    done = subprocess.run(["sh", "-c", "\n".join([*fix, check])], capture_output=True, text=True, env=env,
                          cwd=str(REPO), timeout=120)
    after = json.loads(done.stdout)
    assert after["findings"] == [], (fix, after["findings"])
    assert after["facts"]["host"]["snapshot"]["compile_cache"]["path"] == "/home/ubuntu/.cache/neuron-compile-cache"


@pytest.mark.parametrize("table, text", [
    ("/proc/self/mounts", UBUNTU_TRN1_MOUNTS + EFS_LINE.format(point="/mnt/efs")),
    ("/proc/self/mounts", UBUNTU_TRN1_MOUNTS + FSX_LINE.format(point="/mnt/efs")),
    ("/etc/fstab", UBUNTU_FSTAB + FSX_FSTAB_LINE.format(point="/mnt/efs")),
])
def test_a_cache_on_efs_or_fsx_is_an_info_and_the_host_stays_healthy(tmp_path: Path, table: str, text: str) -> None:
    root = _root(tmp_path, table, text)
    document = _check(root, NEURON_COMPILE_CACHE_URL="/mnt/efs/neuron-cache")
    found = findings_by_id(document)
    assert [item["severity"] for item in found["ND-CACHE-007"]] == ["info"]
    assert document["health"]["state"] == "ok"  # a shared cache is a design, never a warning
    near = _check(root, NEURON_COMPILE_CACHE_URL="/var/tmp/neuron-cache")  # near miss: the local root disk
    assert "ND-CACHE-007" not in findings_by_id(near)


@pytest.fixture(scope="module")
def venvs_here(tmp_path_factory: pytest.TempPathFactory) -> VenvFactory:
    return VenvFactory(base=tmp_path_factory.mktemp("venvs"), wheel_dir=tmp_path_factory.mktemp("wheels"))


def test_an_environment_on_a_noexec_mount(tmp_path: Path, venvs_here: VenvFactory) -> None:
    """A venv on a pod volume mounted noexec (an EKS node's init mountinfo): its native libraries cannot be mapped.
    Near miss: the same volume without noexec."""
    line = "31 22 259:4 / /opt/venvs rw,nosuid,nodev,{flag}relatime shared:10 - xfs /dev/nvme2n1 rw\n"
    root = _root(tmp_path, "/proc/1/mountinfo", EKS_MOUNTINFO + line.format(flag=""))
    venv = venvs_here.create("neuron", parent=root / "opt/venvs")
    venvs_here.install(venv, [COMPILER])
    assert "ND-RES-005" not in findings_by_id(_check(root, "--venv", str(venv)))
    write_table(root, "/proc/1/mountinfo", EKS_MOUNTINFO + line.format(flag="noexec,"))
    document = _check(root, "--venv", str(venv))
    found = findings_by_id(document)["ND-RES-005"][0]
    assert found["severity"] == "error" and found["evidence"]["mount"] == "/opt/venvs"
    assert "failed to map segment from shared object" in found["detail"]


def test_a_read_only_tmp_where_compiles_write_their_graphs(tmp_path: Path, venvs_here: VenvFactory) -> None:
    """A container with a read-only root filesystem and no /tmp of its own, with neuronx-cc: ND-CACHE-008. Near
    misses: a tmpfs at /tmp (the pod's emptyDir), and no compiler in the environment."""
    overlay = ("overlay / overlay ro,relatime,lowerdir=/var/lib/containerd/l1,upperdir=/var/lib/containerd/u1,"
               "workdir=/var/lib/containerd/w1 0 0\nproc /proc proc rw,nosuid,nodev,noexec,relatime 0 0\n")
    root = _root(tmp_path, "/proc/self/mounts", overlay + "tmpfs /tmp tmpfs rw,nosuid,nodev 0 0\n")
    venv = venvs_here.create("compiler", parent=root / "opt")
    venvs_here.install(venv, [COMPILER])
    args = ("--venv", str(venv), "--select", "ND-CACHE-008")
    assert findings_by_id(_check(root, *args)) == {}
    write_table(root, "/proc/self/mounts", overlay)
    found = findings_by_id(_check(root, *args))["ND-CACHE-008"][0]
    assert found["severity"] == "warning" and found["evidence"]["mount"] == "/"
    plain = venvs_here.create("plain", parent=root / "opt")
    assert findings_by_id(_check(root, "--venv", str(plain), "--select", "ND-CACHE-008")) == {}


def test_a_copied_snapshot_shows_no_free_disk_of_this_machine(tmp_path: Path) -> None:
    """A copied tree (no boot id, or another machine's) is on this machine's disk: its free space is this machine's,
    not the host's. It is not known, and the Environment area says so in its line."""
    root = _root(tmp_path, "/proc/self/mounts", UBUNTU_TRN1_MOUNTS)
    document = _check(root)
    cache = _cache(document)
    assert (cache["free_bytes"], cache["total_bytes"], cache["writable"]) == (None, None, None)
    assert "random/boot_id: a copy or an image" in cache["disk_not_known"]
    line = next(check["summary"] for check in document["checks"] if check["id"] == "host-env")
    assert f"compile cache {CACHE} (free disk not known: " in line and "GiB free" not in line
    write_table(root, "/proc/sys/kernel/random/boot_id", "0b1e7c6d-3f7a-4a43-9a51-2c4f3f0e9d11\n")
    assert "its boot id is another" in _cache(_check(root))["disk_not_known"]


def test_this_boots_id_with_a_table_that_names_another_device(tmp_path: Path) -> None:
    """A copy of a live /proc made this boot, lying on another disk: the boot id matches, the device does not."""
    root = _root(tmp_path, "/proc/self/mounts", UBUNTU_TRN1_MOUNTS)
    as_live_view(root)
    mountinfo = (root / "proc/1/mountinfo").read_text()
    write_table(root, "/proc/1/mountinfo", mountinfo.replace(mountinfo.split()[2], "4095:4095", 1))
    cache = _cache(_check(root))
    assert cache["free_bytes"] is None and "not on 4095:4095" in cache["disk_not_known"]


def test_a_live_view_of_this_machine_measures_its_disk(tmp_path: Path) -> None:
    """Near miss: the root is this machine seen through a folder (the DaemonSet's /host): its disk is measured."""
    root = _root(tmp_path, "/proc/self/mounts", UBUNTU_TRN1_MOUNTS)
    as_live_view(root)
    cache = _cache(_check(root))
    usage = os.statvfs(root)
    assert cache["disk_not_known"] is None and cache["total_bytes"] == usage.f_blocks * usage.f_frsize
    assert cache["mount"]["table"] == "/proc/1/mountinfo"  # proc/self there is the doctor's own process


def test_a_tree_without_any_table_answers_nothing(tmp_path: Path) -> None:
    root = build_host(tmp_path / "root", HostSpec())
    table = read_mount_table(RootFS(root))
    assert table.source is None and table.mount_of("/") is None
    assert _cache(_check(root))["mount"] is None
