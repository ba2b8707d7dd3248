"""Attack class: a crafted mount table or boot id under `--root` (a snapshot anyone could have made). A FIFO where the
table belongs never blocks; a table of a million lines stops at its entry bound and then answers nothing (an entry
past the cut could cover any path); binary garbage, non-UTF-8 bytes and escapes that decode to a newline are data,
never a second report line; a forged boot id never makes a copied tree's disk this machine's."""

from __future__ import annotations

import os
from pathlib import Path

from neurondoctor.host.mount_table import MAX_MOUNT_ENTRIES, read_mount_table
from neurondoctor.host.rootfs import RootFS
from tests.conftest import check_json, cli_env, findings_by_id, run_cli
from tests.host_fixture import HostSpec, build_host
from tests.mount_tables import EKS_MOUNTINFO, UBUNTU_FSTAB, UBUNTU_TRN1_MOUNTS, write_table

SELF_MOUNTS = "proc/self/mounts"


def _root(tmp_path: Path) -> Path:
    return build_host(tmp_path / "root", HostSpec())


def test_a_fifo_at_the_mount_table_falls_through_to_the_next(tmp_path: Path) -> None:
    root = _root(tmp_path)
    (root / "proc/self").mkdir(parents=True)
    os.mkfifo(root / SELF_MOUNTS)  # nobody writes it: an open for reading would block
    (root / "proc/sys/kernel/random").mkdir(parents=True, exist_ok=True)
    os.mkfifo(root / "proc/sys/kernel/random/boot_id")
    write_table(root, "/proc/1/mountinfo", EKS_MOUNTINFO)
    table = read_mount_table(RootFS(root))
    assert table.source == "/proc/1/mountinfo" and "/proc/self/mounts: " in str(table.problem)
    cache = check_json(["--root", str(root)], env=cli_env())[1]["facts"]["host"]["snapshot"]["compile_cache"]
    assert cache["mount"]["filesystem"] == "xfs" and "random/boot_id: a copy or an image" in cache["disk_not_known"]


def test_a_table_past_its_entry_bound_answers_nothing(tmp_path: Path) -> None:
    root = _root(tmp_path)
    lines = "".join(f"tmpfs /run/pod/{number} tmpfs rw 0 0\n" for number in range(MAX_MOUNT_ENTRIES + 10))
    write_table(root, SELF_MOUNTS, UBUNTU_TRN1_MOUNTS + lines + "/dev/sdb /var/tmp ext4 ro 0 0\n")
    table = read_mount_table(RootFS(root))
    assert table.cut == f"stopped after {MAX_MOUNT_ENTRIES:,} entries" and table.mount_of("/var/tmp/x") is None
    document = check_json(["--root", str(root), "--select", "ND-CACHE"], env=cli_env())[1]
    assert findings_by_id(document) == {}  # the read-only /var/tmp past the cut is not judged from a guess
    assert document["facts"]["host"]["snapshot"]["mount_table"]["cut"] == table.cut


def test_binary_garbage_and_non_utf8_are_skipped(tmp_path: Path) -> None:
    root = _root(tmp_path)
    garbage = bytes(range(256)) * 256  # every byte value, NULs and lone newlines among them
    (root / "proc/self").mkdir(parents=True)
    (root / SELF_MOUNTS).write_bytes(garbage.replace(b"/", b"x"))  # nothing in it can be a mount point
    write_table(root, "/etc/fstab", UBUNTU_FSTAB)
    (root / "etc/fstab").write_bytes((root / "etc/fstab").read_bytes() + b"/dev/sdb /mnt/caf\xe9 ext4 ro 0 0\n")
    table = read_mount_table(RootFS(root))
    assert table.source == "/etc/fstab" and "/proc/self/mounts: no mount in it" in str(table.problem)
    odd = table.mount_of("/mnt/caf\ufffd/cache")
    assert odd is not None and "ro" in odd.options


def test_a_mountinfo_line_cut_after_its_source_is_skipped_not_a_crash(tmp_path: Path) -> None:
    """proc_pid_mountinfo(5) gives three fields after the `-` (type, source, superblock options): a line that stops
    after the source is skipped, and the whole lines beside it are still read."""
    root = _root(tmp_path)
    (root / "proc/1").mkdir(parents=True)
    (root / "proc/1/mountinfo").write_text("36 35 98:0 / /mnt/cache ro,noatime master:1 - ext4 /dev/nvme1n1\n"
                                           "22 1 259:1 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p1 rw\n")
    table = read_mount_table(RootFS(root))
    assert table.source == "/proc/1/mountinfo"
    root_mount = table.mount_of("/mnt/cache/x")
    assert root_mount is not None and root_mount.point == "/" and "ro" not in root_mount.options


def test_an_escaped_newline_in_a_mount_point_stays_one_line(tmp_path: Path) -> None:
    """`\\012` decodes to a newline inside the point: every output shows it escaped, never as a line of its own."""
    root = _root(tmp_path)
    point = "/mnt/x\\012ND-FORGED-001\\040error:\\040drain\\040me"  # as the kernel escapes a newline and spaces
    write_table(root, SELF_MOUNTS, UBUNTU_TRN1_MOUNTS + f"/dev/sdb {point} ext4 ro,noexec 0 0\n")
    cache = "/mnt/x\nND-FORGED-001 error: drain me/cache"
    env = cli_env({"NEURON_COMPILE_CACHE_URL": cache})
    found = findings_by_id(check_json(["--root", str(root), "--select", "ND-CACHE"], env=env)[1])["ND-CACHE-004"][0]
    assert found["evidence"]["mount"] == "/mnt/x\nND-FORGED-001 error: drain me"  # the data, as it is
    for output in ("text", "npd", "nhc"):
        shown = run_cli(["check", "--root", str(root), "--format", output, "--select", "ND-CACHE"], env=env)
        assert not any(line.startswith("ND-FORGED") for line in (shown.stdout + shown.stderr).splitlines()), output


def test_a_forged_boot_id_does_not_make_a_copy_this_machine(tmp_path: Path) -> None:
    """A copied tree holding this boot's id (anyone can read it) but whose mountinfo cannot name the device its
    paths are really on: the machine's disk is still not shown."""
    root = _root(tmp_path)
    write_table(root, "/proc/sys/kernel/random/boot_id", Path("/proc/sys/kernel/random/boot_id").read_text())
    # The node it was copied from, its root on a device number no disk here has.
    write_table(root, "/proc/1/mountinfo", EKS_MOUNTINFO.replace(" 259:1 ", " 4095:4095 "))
    cache = check_json(["--root", str(root)], env=cli_env())[1]["facts"]["host"]["snapshot"]["compile_cache"]
    assert cache["free_bytes"] is None and "not on 4095:4095" in cache["disk_not_known"]
