"""A device-acceptance archive is someone else's data (attached to an issue): reading it must not write outside the
reader's own temporary folder, follow a link, take a member outside `device-acceptance/`, or run out of memory.
scripts/read_device_acceptance.py never extracts; these archives try each way out."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import time
from pathlib import Path

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "read_device_acceptance.py"
SCRIPT_ENV = {**os.environ, "PYTHONPATH": str(REPO)}  # the doctor of this tree, as the script is


def _add(opened: tarfile.TarFile, name: str, data: bytes = b"", kind: bytes = tarfile.REGTYPE,
         link: str = "") -> None:
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.size = kind, link, len(data)
    opened.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


def test_hostile_paths_links_and_members_stay_data(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    escape = "/sys/devices/virtual/neuron_device/neuron0/" + "../" * 12 + str(victim / "written").lstrip("/")
    attributes = "\n".join([
        f"{escape}\tpwned",  # a path climbing out of the tree
        f"/etc/cron.d/neurondoctor\t* * * * * root {victim}/x",  # a path outside the driver's trees
        "/sys/devices/virtual/neuron_device/neuron0/core_count\t$(touch " + str(victim / "ran") + ")",
        "/sys/devices/virtual/neuron_device/neuron0/info/architecture/device_name\tTrainium2",
    ]) + "\n"
    archive = tmp_path / "hostile.tar.gz"
    with tarfile.open(archive, "w:gz") as opened:
        _add(opened, "device-acceptance/MANIFEST.tsv", b"member\texit\tseconds\tcommand\n")
        _add(opened, "device-acceptance/sysfs/attributes.tsv", attributes.encode())
        _add(opened, "device-acceptance/formats/module-version.txt", b"2.31.7.0\n")
        _add(opened, "device-acceptance/formats/lsmod.txt", kind=tarfile.SYMTYPE, link="/etc/shadow")
        _add(opened, "device-acceptance/../../outside.txt", b"x")
        _add(opened, "device-acceptance/formats/neuron-ls-j.json", b"[" * 100000)  # deep nesting
        _add(opened, "device-acceptance/formats/neuron-monitor-first-record.json", b"x" * (17 << 20))  # too big
    done = subprocess.run([sys.executable, str(SCRIPT), str(archive), "--json"], capture_output=True, text=True,
                          timeout=120, cwd=str(tmp_path), env=SCRIPT_ENV)
    assert done.returncode in (0, 1), done.stderr
    reading = json.loads(done.stdout)
    assert list(victim.iterdir()) == []  # nothing written, nothing run
    assert not (tmp_path / "outside.txt").exists()
    install = next(item for item in reading["verdicts"] if item["format"] == "driver install: loaded now and at boot")
    assert install["evidence"] == ["not listed in any modules-load.d file", "not loaded (lsmod)"]  # the link is skipped
    cores = next(item for item in reading["verdicts"] if item["format"] == "sysfs core_count on Trn2/Trn3")
    assert cores["verdict"] == "NOT SHOWN"  # `$(touch …)` is no count: unknown, not a number and not a command


def test_an_archive_too_large_to_hold_is_refused_in_one_line(tmp_path: Path) -> None:
    archive = tmp_path / "big.tar.gz"  # 272 MiB of zeros, a few hundred KiB compressed
    with tarfile.open(archive, "w:gz") as opened:
        _add(opened, "device-acceptance/MANIFEST.tsv", b"member\texit\tseconds\tcommand\n")
        for index in range(17):
            _add(opened, f"device-acceptance/filler-{index}", b"\0" * (16 << 20))
    done = subprocess.run([sys.executable, str(SCRIPT), str(archive)], capture_output=True, text=True, timeout=120,
                          env=SCRIPT_ENV)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [f"error: {archive}: more than 256 MiB of members"]


def _reading(archive: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), str(archive)], capture_output=True, text=True, timeout=120,
                          env=SCRIPT_ENV)


def test_an_archive_of_very_many_members_is_refused_in_one_line_at_once(tmp_path: Path) -> None:
    """200,000 empty members (a 1 MiB archive) took 9 s to walk, and a MANIFEST exit code `²` crashed the reader."""
    archive = tmp_path / "many.tar.gz"
    with tarfile.open(archive, "w:gz") as opened:
        _add(opened, "device-acceptance/MANIFEST.tsv", "member\texit\tseconds\tcommand\nx\t²\t1\tls\n".encode())
        for index in range(200_000):
            _add(opened, f"device-acceptance/empty-{index}")
    started = time.monotonic()
    done = _reading(archive)
    assert done.returncode == 2 and done.stdout == "" and time.monotonic() - started < 5
    assert done.stderr.splitlines() == [f"error: {archive}: more than 10000 members"]


def test_a_member_path_too_long_to_be_one_is_refused_in_one_line(tmp_path: Path) -> None:
    archive = tmp_path / "long.tar.gz"
    with tarfile.open(archive, "w:gz", format=tarfile.PAX_FORMAT) as opened:
        _add(opened, "device-acceptance/MANIFEST.tsv", b"member\texit\tseconds\tcommand\n")
        _add(opened, "device-acceptance/" + "a/" * 300_000 + "x", b"1")
    done = _reading(archive)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [f"error: {archive}: a member's path is longer than 1024 characters"]


def test_attribute_paths_too_long_for_the_filesystem_are_skipped(tmp_path: Path) -> None:
    """A sysfs path with a 300-character name or 3,000 levels could not be rebuilt (ENAMETOOLONG, a traceback)."""
    device = "/sys/devices/virtual/neuron_device/neuron0/"
    attributes = "".join(f"{device}{name}\t1\n" for name in ("b" * 300, "c/" * 3000 + "d", "core_count"))
    archive = tmp_path / "paths.tar.gz"
    with tarfile.open(archive, "w:gz") as opened:
        _add(opened, "device-acceptance/MANIFEST.tsv", b"member\texit\tseconds\tcommand\n")
        _add(opened, "device-acceptance/sysfs/attributes.tsv", attributes.encode())
    done = _reading(archive)
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr
    assert "sysfs tree" in done.stdout
