"""Both sysfs layouts and both neuron-ls JSON documents.

Driver 2.31 reorganised `/sys/devices/virtual/neuron_device` and moved several nodes (neuron-sysfs-user-guide.rst,
2.33.0) without a published map, so tests/host_fixture.py's 2.31 tree is an assumed one (nodes under other
directories, no class links): the doctor must read the same facts from it, say which layout it read, turn ECC
counters it cannot find into "could not read" (unknown), and report nothing missing there as a device problem.
The neuron-ls `--output-format json` document of Neuron 2.34 is announced (announce-intent-eos-neuron-ls-json.rst:
top-level instance and UltraServer fields), not documented: its fixture below is ASSUMED, built from the 2.33
device keys inside an object.
"""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest

from neurondoctor.host.neuron_devices import read_sysfs_devices
from neurondoctor.host.neuron_ls import json_flags, parse_neuron_ls_json
from neurondoctor.host.rootfs import RootFS
from tests.conftest import check_json, cli_env, empty_folder
from tests.host_fixture import HostSpec, build_host

SPEC = HostSpec(instance_type="trn1.32xlarge", release="2.33.1")  # driver 2.31.8.0: the 2.31 layout


def _hardware(report: dict[str, object]) -> dict[str, str]:
    return next(check for check in report["checks"] if check["id"] == "hardware")  # type: ignore


@pytest.mark.parametrize("spec", [SPEC, replace(SPEC, instance_type="trn2.48xlarge"),
                                  replace(SPEC, instance_type="inf2.48xlarge")])
def test_old_and_new_layouts_read_the_same_facts(tmp_path: Path, spec: HostSpec) -> None:
    classic = build_host(tmp_path / "classic", replace(spec, sysfs_layout="classic"))
    moved = build_host(tmp_path / "moved", replace(spec, sysfs_layout="driver-2.31"))
    assert not (moved / "sys/class/neuron_device").exists() and (classic / "sys/class/neuron_device").is_dir()
    old, old_layout = read_sysfs_devices(RootFS(classic), "2.30.2.0")
    new, new_layout = read_sysfs_devices(RootFS(moved), "2.31.7.0")
    assert (old_layout, new_layout) == ("classic", "driver-2.31")
    assert old == new and len(new) == {"trn1.32xlarge": 16, "trn2.48xlarge": 16, "inf2.48xlarge": 12}[
        str(spec.instance_type)]
    assert all(device.arch_type and device.core_count and len(device.ecc_uncorrected) == 3 for device in new)
    reports = [check_json(["--root", str(root)], env=cli_env())[1] for root in (classic, moved)]
    assert [report["findings"] for report in reports] == [[], []]
    summaries = [_hardware(report)["summary"] for report in reports]
    assert summaries[1] == summaries[0].replace("sysfs: classic layout", "sysfs: driver-2.31 layout")
    assert "device nodes; sysfs: driver-2.31 layout" in summaries[1]


def test_the_layout_follows_the_loaded_driver(tmp_path: Path) -> None:
    """A 2.30 driver writes the classic tree; 2.31 and newer the reorganised one (and a classic node still there is
    read where it is)."""
    root = build_host(tmp_path / "host", replace(SPEC, release="2.32.0"))
    assert (root / "sys/devices/virtual/neuron_device/neuron0/core_count").exists()
    assert read_sysfs_devices(RootFS(root), "2.30.2.0")[1] == "classic"
    devices, layout = read_sysfs_devices(RootFS(root), "2.31.7.0")
    assert layout == "driver-2.31" and devices == read_sysfs_devices(RootFS(root), "2.30.2.0")[0]


def test_ecc_counters_moved_out_of_reach_are_unknown_never_a_pass(tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", replace(SPEC, moved_ecc=False))
    code, report, _ = check_json(["--root", str(root)], env=cli_env())
    assert report["findings"] == [] and code == 3
    assert report["health"]["state"] == "unknown"
    assert _hardware(report)["status"] == "unknown"
    reason = " ".join(report["health"]["reasons"])
    assert "could not read the ECC counters of 16 device(s): driver 2.31 moved them" in reason
    devices = next(check for check in report["checks"] if check["id"] == "devices")
    assert devices["status"] == "ok"  # PCI functions and /dev/neuron* did not move: the devices are judged


def test_ecc_errors_at_the_moved_place_are_still_found(tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", replace(SPEC, ecc={3: {"sram_ecc_uncorrected": 2}}))
    assert (root / "sys/devices/virtual/neuron_device/neuron3/stats/hardware/ecc/sram_ecc_uncorrected").exists()
    _, report, _ = check_json(["--root", str(root)], env=cli_env())
    assert [(item["id"], item["title"]) for item in report["findings"]] == [
        ("ND-HW-001", "uncorrectable ECC errors on neuron3")]


def test_a_sysfs_walk_follows_no_links_and_stops(tmp_path: Path) -> None:
    """A device directory with a link loop and links out of the tree: the by-name search reads only regular files
    inside the device's own directory."""
    root = build_host(tmp_path / "host", replace(SPEC, instance_type="trn1.2xlarge", moved_ecc=False))
    device = root / "sys/devices/virtual/neuron_device/neuron0"
    (device / "subsystem").symlink_to("/sys/class/neuron_device")
    (device / "loop").symlink_to(device)
    outside = tmp_path / "outside" / "stats"
    outside.mkdir(parents=True)
    (outside / "sram_ecc_uncorrected").write_text("9\n")
    (device / "escape").symlink_to(outside.parent)
    deep = device
    for level in range(40):
        deep = deep / f"d{level}"
    deep.mkdir(parents=True)
    (deep / "mem_ecc_uncorrected").write_text("7\n")
    devices, _ = read_sysfs_devices(RootFS(root), "2.31.7.0")
    assert devices[0].ecc_uncorrected == {} and devices[0].core_count == 2


def test_both_neuron_ls_documents() -> None:
    classic = [{"neuron_device": 0, "bdf": "cc:00.0", "nc_count": 4, "logical_neuroncore_config": 2,
                "memory_size": 103079215104, "neuroncore_ids": [0, 1, 2, 3], "neuron_processes": []}]
    # ASSUMED 2.34 shape: the announcement names top-level instance and UltraServer fields only
    modern = {"instance_type": "trn2.48xlarge", "instance_id": "i-0123456789abcdef0",
              "ultraserver": {"mode": "none", "node_id": None}, "logical_neuroncore_config": 2,
              "neuron_devices": classic}
    old = parse_neuron_ls_json(json.dumps(classic))
    new = parse_neuron_ls_json(json.dumps(modern))
    assert [(device.index, device.core_count, device.core_ids) for device in old] == [(0, 4, [0, 1, 2, 3])]
    assert [(device.index, device.core_count, device.core_ids) for device in new] == [(0, 4, [0, 1, 2, 3])]
    assert [device.assumed for device in old + new] == [False, True]
    for garbage in ("{}", '{"devices": 3}', '{"a": [1, "x", {"neuron_device": "0"}]}', "[[[", "null"):
        assert parse_neuron_ls_json(garbage) == []
    assert json_flags("2.33.38.0") == (["-j"], ["--output-format", "json"])
    assert json_flags("2.34.5.0-abc") == (["--output-format", "json"], ["-j"])
    assert json_flags(None) == (["-j"], ["--output-format", "json"])


def test_a_2_34_neuron_ls_without_minus_j_on_a_live_host(tmp_path: Path) -> None:
    """neuron-ls that refuses `-j` (2.34): the doctor asks again with `--output-format json`, records both runs,
    and keeps the devices it read marked as assumed, so no core count is judged from them."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    document = json.dumps({"instance_type": "trn2.48xlarge", "neuron_devices": [
        {"neuron_device": 0, "nc_count": 4, "neuroncore_ids": [0, 1, 2, 3], "neuron_processes": []}]})
    fake = bin_dir / "neuron-ls"
    fake.write_text("#!/bin/sh\nif [ \"$1\" = -j ]; then echo 'neuron-ls: unrecognized option -j' >&2; exit 2; fi\n"
                    f"echo '{document}'\n")
    fake.chmod(0o755)
    env = cli_env({"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    _, report, _ = check_json(["--venv", empty_folder(tmp_path), "--select", "hardware"], env=env)
    snapshot = report["facts"]["host"]["snapshot"]
    assert [(command["argv"][1:], command["ok"]) for command in snapshot["commands"]] == [
        (["-j"], False), (["--output-format", "json"], True)]
    assert snapshot["neuron_ls"] == [{"index": 0, "core_count": 4, "core_ids": [0, 1, 2, 3], "processes": [],
                                      "logical_neuroncore_config": None, "assumed": True}]
