"""A device-acceptance archive is someone else's data (attached to an issue): reading it must not write outside the
reader's own temporary folder, follow a link, take a member outside `device-acceptance/`, or run out of memory.
scripts/read_device_acceptance.py never extracts; these archives try each way out."""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

from tests.conftest import REPO

SCRIPT = REPO / "scripts" / "read_device_acceptance.py"


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
                          timeout=120, cwd=str(tmp_path))
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
    done = subprocess.run([sys.executable, str(SCRIPT), str(archive)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [f"error: {archive}: more than 256 MiB of members"]
