"""scripts/device-acceptance.sh , run with fakes: a fixture trn1.32xlarge tree stands for /dev and /sys
(ND_ACCEPT_ROOT), the Neuron tools are recording fakes on PATH, the doctor is the real one. It refuses without a
device, writes one archive and nothing else (never over a file), sends every compile to a temporary cache it
removes, and leaves the tree it read as it was."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path

from tests.host_fixture import HostSpec, build_host

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "device-acceptance.sh"
READER = SCRIPT.parent / "read_device_acceptance.py"
DOCTOR = Path(sys.executable).parent / "neurondoctor"
NEURON_LS_J = ('[{"neuron_device": 0, "bdf": "0000:10:1e.0", "nc_count": 2, "memory_size": 34359738368, '
               '"neuroncore_ids": [0, 1], "neuron_processes": []}]')


def _fakes(folder: Path) -> Path:
    """neuron-ls and friends that print a fixed answer and note their arguments; nccom-test --version also prints
    the compile cache the run exported."""
    folder.mkdir()
    calls = folder / "calls.log"
    scripts = {
        "neuron-ls": (f"if [ \"${{1:-}}\" = -j ]; then echo '{NEURON_LS_J}'; "
                      "else echo 'instance-type: trn1.32xlarge'; fi"),
        "neuron-monitor": "echo '{\"neuron_runtime_data\": []}'",
        "nccom-test": "echo \"cache: $NEURON_CC_FLAGS | $NEURON_COMPILE_CACHE_URL\"",
        "modinfo": "echo 'version:        2.29.0.0'",
        "lsmod": "echo 'neuron                532480  0'",
        "dkms": "echo 'aws-neuronx/2.29.0.0, 6.8.0-1015-aws, x86_64: installed'",
    }
    for name, body in scripts.items():
        path = folder / name
        path.write_text(f"#!/bin/sh\necho \"{name} $*\" >> {calls}\n{body}\n")
        path.chmod(0o755)
    return folder


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _member_text(archive: tarfile.TarFile, name: str) -> str:
    member = archive.extractfile(name)
    return member.read().decode() if member is not None else ""


def _run(tmp_path: Path, root: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    fakes = tmp_path / "bin"
    if not fakes.exists():
        _fakes(fakes)
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    env = {**os.environ, "ND_ACCEPT_ROOT": str(root), "NEURONDOCTOR": str(DOCTOR), "TMPDIR": str(scratch),
           "PATH": f"{fakes}:{os.environ['PATH']}"}
    env.pop("NEURON_CC_FLAGS", None)
    return subprocess.run(["bash", str(SCRIPT), *arguments], capture_output=True, text=True, timeout=900,
                          env=env, cwd=str(tmp_path))


def test_it_refuses_without_a_device_and_writes_nothing(tmp_path: Path) -> None:
    root = build_host(tmp_path / "root", HostSpec(instance_type=None, pci=False))
    done = _run(tmp_path, root)
    assert done.returncode == 4 and "no Neuron device" in done.stderr
    assert not list(tmp_path.glob("neurondoctor-device-acceptance-*")) and not list((tmp_path / "tmp").iterdir())


def test_one_archive_with_every_path_and_the_tools_formats(tmp_path: Path) -> None:
    root = build_host(tmp_path / "root", HostSpec(instance_type="trn1.32xlarge"))
    before = _tree_digest(root)
    done = _run(tmp_path, root)
    assert done.returncode == 0, done.stderr
    [archive] = list(tmp_path.glob("neurondoctor-device-acceptance-*.tar.gz"))
    with tarfile.open(archive) as opened:
        names = set(opened.getnames())
        read = {name: _member_text(opened, name) for name in names
                if opened.getmember(name).isfile() and not name.endswith(".tar.gz")}
    base = "device-acceptance/"
    for member in ("check.json", "health.json", "canary.json", "canary-perf.json", "probe-ops-xla.json",
                   "bundle.tar.gz", "formats/neuron-ls-j.json", "formats/neuron-ls.txt", "formats/modinfo-neuron.txt",
                   "sysfs/attributes.tsv", "MANIFEST.tsv"):
        assert base + member in names, member
    assert read[base + "formats/neuron-ls-j.json"].strip() == NEURON_LS_J
    assert f'"root": "{root}"' in read[base + "check.json"]
    manifest = read[base + "MANIFEST.tsv"].splitlines()
    assert manifest[0] == "member\texit\tseconds\tcommand" and len(manifest) > 20
    canary = next(line.split("\t") for line in manifest if line.startswith("canary.json\t"))
    assert canary[1] == "4"  # no device on this machine: the real probe says so, and the run goes on
    assert "/sys/devices/virtual/neuron_device/neuron0/core_count\t2" in read[base + "sysfs/attributes.tsv"]
    cache_line = read[base + "formats/nccom-test-version.txt"]
    assert "--cache_dir=" + str(tmp_path / "tmp") in cache_line and "/var/tmp" not in cache_line
    assert _tree_digest(root) == before  # the tree it read is as it was
    assert not list((tmp_path / "tmp").iterdir())  # its temporary folder (and the cache) are gone
    calls = (tmp_path / "bin" / "calls.log").read_text().splitlines()
    assert sorted(set(line.split()[0] for line in calls)) == ["dkms", "lsmod", "modinfo", "nccom-test", "neuron-ls",
                                                              "neuron-monitor"]
    assert "dkms status" in calls and not any(word in line for line in calls for word in ("install", "remove",
                                                                                          "build", "rmmod"))

    # The archive reads back (scripts/read_device_acceptance.py): the fixture's classic tree is what the doctor reads;
    # the fakes' tools print no version and no JSON for --output-format json (not applicable before tools 2.34).
    reader = subprocess.run([sys.executable, str(READER), str(archive), "--json"], capture_output=True, text=True,
                            timeout=120)
    found = {item["format"]: item for item in json.loads(reader.stdout)["verdicts"]}
    assert found["sysfs tree, drivers before 2.31"]["verdict"] == "CONFIRMED", found
    assert found["neuron-ls --output-format json (tools 2.34)"]["verdict"] == "NOT APPLICABLE"
    assert found["sysfs core_count on Trn2/Trn3"]["verdict"] == "NOT APPLICABLE"
    assert found["driver install: loaded now and at boot"]["verdict"] == "CONFIRMED", found
    assert reader.returncode == 0, reader.stdout


def test_an_existing_archive_is_never_written_over(tmp_path: Path) -> None:
    root = build_host(tmp_path / "root", HostSpec(instance_type="trn1.2xlarge"))
    taken = tmp_path / "mine.tar.gz"
    taken.write_text("someone's archive")
    done = _run(tmp_path, root, "-o", str(taken))
    assert done.returncode == 2 and "exists" in done.stderr
    assert taken.read_text() == "someone's archive"
