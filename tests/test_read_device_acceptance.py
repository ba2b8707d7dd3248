"""scripts/read_device_acceptance.py : an archive of a device-acceptance run turns into what it
confirms and what it corrects. The archives here are built as the run writes them, from fixture hosts (which follow
the driver's source) and the tool outputs recorded in tests/recorded/, then varied the ways a real device could
differ from what the doctor assumes."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any, Optional

from tests.conftest import REPO
from tests.host_fixture import HostSpec, build_host

SCRIPT = REPO / "scripts" / "read_device_acceptance.py"
SCRIPT_ENV = {**os.environ, "PYTHONPATH": str(REPO)}  # the doctor of this tree, as the script is
RECORDED = REPO / "tests" / "recorded"


def sysfs_attributes(root: Path) -> str:
    """sysfs/attributes.tsv as the run writes it: every file and link under the driver's trees, its first 512 bytes
    with newlines as spaces; a link to a directory reads as head's error."""
    lines = []
    for base in ("sys/devices/virtual/neuron_device", "sys/class/neuron_device"):
        for directory, folders, files in os.walk(root / base):
            for name in sorted(files + [folder for folder in folders if (Path(directory) / folder).is_symlink()]):
                path = Path(directory) / name
                try:
                    value = path.read_bytes()[:512].decode("utf-8", "replace").replace("\n", " ")
                except OSError as error:  # a link to a directory (its absolute target is outside this tree here)
                    value = f"head: error reading '/{path.relative_to(root)}': {error.strerror}"
                lines.append(f"/{path.relative_to(root)}\t{value}")
    return "\n".join(lines) + "\n"


def archive(path: Path, members: dict[str, str], exits: Optional[dict[str, int]] = None) -> Path:
    manifest = "member\texit\tseconds\tcommand\n" + "".join(
        f"{name}\t{(exits or {}).get(name, 0)}\t1\tcommand\n" for name in members)
    with tarfile.open(path, "w:gz") as opened:
        for name, text in {**members, "MANIFEST.tsv": manifest}.items():
            data = text.encode()
            info = tarfile.TarInfo(f"device-acceptance/{name}")
            info.size = len(data)
            opened.addfile(info, io.BytesIO(data))
    return path


def read(path: Path) -> tuple[int, dict[str, Any]]:
    done = subprocess.run([sys.executable, str(SCRIPT), str(path), "--json"], capture_output=True, text=True,
                          timeout=120, env=SCRIPT_ENV)
    assert done.returncode in (0, 1), done.stderr
    return done.returncode, json.loads(done.stdout)


def verdicts(reading: dict[str, Any]) -> dict[str, tuple[str, list[str]]]:
    return {item["format"]: (item["verdict"], item["evidence"]) for item in reading["verdicts"]}


def _host_members(root: Path, driver: str, *, tools: str, listed: str, output_format: str = "",
                  monitor: str = "") -> dict[str, str]:
    return {
        "sysfs/attributes.tsv": sysfs_attributes(root),
        "formats/module-version.txt": driver + "\n",
        "formats/neuron-ls-version.txt": f"neuron-ls {tools}\n",
        "formats/neuron-ls-j.json": listed,
        "formats/neuron-ls-output-format-json.json": output_format,
        "formats/neuron-monitor-first-record.json": monitor,
        "formats/modules-load.txt": "/etc/modules-load.d/neuron.conf:neuron\n",
        "formats/lsmod.txt": "Module                  Size  Used by\nneuron                532480  0\n",
    }


def _trn2_json(cores: int = 4) -> str:
    return json.dumps([{"neuron_device": index, "nc_count": cores, "logical_neuroncore_config": 2,
                        "neuroncore_ids": list(range(index * cores, (index + 1) * cores)), "neuron_processes": []}
                       for index in range(16)])


def test_a_trn1_on_a_classic_driver_confirms_what_the_doctor_reads(tmp_path: Path) -> None:
    """Driver 2.28.0.0 (Neuron 2.30.0) writes the classic tree; the recorded trn1.2xlarge outputs stand for the
    tools (tools 2.28.23.0, which know no --output-format json: exit 1, its message on stdout)."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge", release="2.30.0"))
    listed = (RECORDED / "neuron-ls/trn1.2xlarge-json-output-tools-2.28.23.json").read_text()
    monitor = (RECORDED / "neuron-monitor/trn1.2xlarge-first-record-no-runtime.json").read_text()
    members = _host_members(root, "2.28.0.0", tools="2.28.23.0", listed=listed,
                            output_format="unknown flag `output-format'\n", monitor=monitor)
    code, reading = read(archive(tmp_path / "a.tar.gz", members,
                                 {"formats/neuron-ls-output-format-json.json": 1}))
    found = verdicts(reading)
    assert found["sysfs tree, drivers before 2.31"][0] == "CONFIRMED", found
    assert "7 of 7 nodes at their classic paths" in found["sysfs tree, drivers before 2.31"][1][0]
    assert found["sysfs tree, driver 2.31 and newer"][0] == "NOT APPLICABLE"
    assert found["sysfs core_count on Trn2/Trn3"] == ("NOT APPLICABLE", ["this is a trn1"])
    assert found["neuron-ls --output-format json (tools 2.34)"][0] == "NOT APPLICABLE"
    assert found["driver install: loaded now and at boot"][0] == "CONFIRMED"
    assert code == 0 and reading["driver"] == "2.28.0.0"


def test_a_trn2_whose_core_count_is_physical_confirms_it_and_maps_the_moved_tree(tmp_path: Path) -> None:
    """Driver 2.31.7.0 (Neuron 2.33.0) on a trn2.48xlarge: the fixture's moved tree (ASSUMED) is found by name and
    the map printed; core_count 8 at LNC=2 gives the 64 cores neuron-ls lists; tools 2.34's object is read."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release="2.33.0"))
    document = json.dumps({"instance_type": "trn2.48xlarge", "neuron_devices": json.loads(_trn2_json())})
    members = _host_members(root, "2.31.7.0", tools="2.34.2.0", listed=_trn2_json(), output_format=document)
    code, reading = read(archive(tmp_path / "a.tar.gz", members))
    found = verdicts(reading)
    tree = found["sysfs tree, driver 2.31 and newer"]
    assert tree[0] == "CONFIRMED", tree
    assert "core_count -> info/core_count" in tree[1][1] and "sram_ecc_uncorrected -> stats/hardware/ecc/" in tree[1][1]
    cores = found["sysfs core_count on Trn2/Trn3"]
    assert cores[0] == "CONFIRMED" and "the doctor counts 64 NeuronCores; neuron-ls/neuron-monitor count 64" in \
        cores[1][0] and cores[1][1] == "core_count is physical (8 per device)", cores
    modern = found["neuron-ls --output-format json (tools 2.34)"]
    assert modern[0] == "CONFIRMED" and "keys ['instance_type', 'neuron_devices']" in modern[1][0], modern
    assert modern[1][1] == "the same devices and core counts as -j's"
    assert code == 0


def test_a_core_count_that_is_logical_is_a_correction(tmp_path: Path) -> None:
    """If the driver wrote the logical count (4 at LNC=2), the doctor would halve it again: 32, not neuron-ls's 64."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release="2.33.0"))
    for path in root.glob("sys/devices/virtual/neuron_device/neuron*/info/core_count"):
        path.write_text("4")
    monitor = json.dumps({"neuron_runtime_data": [], "neuron_hardware_info": json.loads(
        (RECORDED / "neuron-monitor/trn2n.48xlarge-hardware-info-docs.json").read_text())["neuron_hardware_info"]})
    members = _host_members(root, "2.31.7.0", tools="2.33.38.0", listed=_trn2_json(), monitor=monitor)
    code, reading = read(archive(tmp_path / "a.tar.gz", members))
    cores = verdicts(reading)["sysfs core_count on Trn2/Trn3"]
    assert cores[0] == "CORRECTED" and "at LNC=2: the doctor counts 32 NeuronCores; neuron-ls/neuron-monitor count 64" \
        in cores[1][0], cores
    assert code == 1


def test_counters_found_nowhere_and_a_2_34_tools_that_refuses_the_flag_are_corrections(tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release="2.33.0", moved_ecc=False))
    members = _host_members(root, "2.31.7.0", tools="2.34.2.0", listed=_trn2_json(),
                            output_format="neuron-ls: unrecognized option '--output-format'\n")
    members["formats/neuron-ls-output-format-json.json.stderr"] = "neuron-ls: unrecognized option '--output-format'\n"
    code, reading = read(archive(tmp_path / "a.tar.gz", members, {"formats/neuron-ls-output-format-json.json": 2}))
    found = verdicts(reading)
    tree = found["sysfs tree, driver 2.31 and newer"]
    assert tree[0] == "CORRECTED" and tree[1][-1] == ("found nowhere (the doctor reads them as unknown): "
                                                     "mem_ecc_uncorrected, mem_ecc_repairable_uncorrected, "
                                                     "sram_ecc_uncorrected"), tree
    assert found["neuron-ls --output-format json (tools 2.34)"] == ("CORRECTED", [
        "tools 2.34.2.0: `neuron-ls --output-format json` exited 2",
        "neuron-ls: unrecognized option '--output-format'"])
    assert code == 1


def test_a_driver_left_unloaded_and_an_archive_that_shows_nothing(tmp_path: Path) -> None:
    members = {"formats/modules-load.txt": "", "formats/lsmod.txt": "Module  Size  Used by\n"}
    code, reading = read(archive(tmp_path / "a.tar.gz", members))
    found = verdicts(reading)
    assert found["driver install: loaded now and at boot"] == (
        "CORRECTED", ["not listed in any modules-load.d file", "not loaded (lsmod)"])
    assert {found[name][0] for name in ("sysfs tree, drivers before 2.31", "sysfs core_count on Trn2/Trn3",
                                        "neuron-ls --output-format json (tools 2.34)")} == {"NOT SHOWN",
                                                                                             "NOT APPLICABLE"}
    assert code == 1 and reading["driver"] is None


def test_what_is_not_an_archive_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.tar.gz"
    bogus.write_text("not a tar")
    done = subprocess.run([sys.executable, str(SCRIPT), str(bogus)], capture_output=True, text=True, timeout=60,
                          env=SCRIPT_ENV)
    assert done.returncode == 2 and done.stdout == "" and len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(f"error: {bogus}: not a readable device-acceptance archive")
    other = archive(tmp_path / "other.tar.gz", {})
    with tarfile.open(other, "w:gz"):
        pass
    done = subprocess.run([sys.executable, str(SCRIPT), str(other)], capture_output=True, text=True, timeout=60,
                          env=SCRIPT_ENV)
    assert done.returncode == 2 and "no device-acceptance/MANIFEST.tsv" in done.stderr


def _reader_module() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("read_device_acceptance", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# tests/recorded/neuron-monitor/: what the reader takes from each record; the keys it does not read are listed.
MONITOR_EXPECTED = {
    "trn1.2xlarge-first-record-no-runtime.json": {"neuron_device_type": "trainium", "neuroncore_per_device_count": 2,
                                                  "logical_neuroncore_config": 1, "neuron_device_count": 1},
    "trn2n.48xlarge-hardware-info-docs.json": {"neuron_device_type": "trainium2", "neuroncore_per_device_count": 4,
                                               "logical_neuroncore_config": 2, "neuron_device_count": 16},
}
MONITOR_KEYS = {"neuron_device_type", "neuron_device_version", "neuroncore_version", "neuron_device_count",
                "neuron_device_memory_size", "neuroncore_per_device_count", "logical_neuroncore_config", "error"}


def test_the_neuron_monitor_records() -> None:
    reader = _reader_module()
    folder = RECORDED / "neuron-monitor"
    assert sorted(path.name for path in folder.glob("*.json")) == sorted(MONITOR_EXPECTED)
    for name, expected in MONITOR_EXPECTED.items():
        text = (folder / name).read_text()
        if not text.startswith("{\"neuron_runtime_data\""):  # the guide's member, pretty-printed: as one record
            text = json.dumps(json.loads(text))
        hardware = reader.neuron_monitor_hardware(text)
        assert {key: hardware[key] for key in expected} == expected
        assert set(hardware) <= MONITOR_KEYS, set(hardware) - MONITOR_KEYS
    assert reader.neuron_monitor_hardware("not json\n") is None and reader.neuron_monitor_hardware(None) is None
