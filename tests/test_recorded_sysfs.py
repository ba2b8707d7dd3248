"""The driver's sysfs tree as its source and real hosts show it (tests/recorded/sysfs/).

Three things: the fixture hosts follow the driver's published source (core_count root-only and without a newline,
one `neuron_core<M>` directory per core); every path the doctor reads on the classic layout is one the source
creates; and the values recorded from real hosts (`*.tsv`, the device-acceptance format) read as they should, with
the attributes the doctor does not read listed so a new one is noticed.
"""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from neurondoctor.host import neuron_devices
from neurondoctor.host.kernel_modules import read_loaded_driver_version
from neurondoctor.host.neuron_devices import read_sysfs_devices
from neurondoctor.host.rootfs import RootFS
from tests.conftest import check_json, empty_folder, without_read_privileges
from tests.host_fixture import HostSpec, build_host

RECORDED = Path(__file__).parent / "recorded" / "sysfs"
DEVICE_DIR = "/sys/devices/virtual/neuron_device/"

# What aws-neuron-driver 2.24.7.0 creates under each `neuron<N>` (tests/recorded/sysfs/SOURCES.md), the device's own
# attributes and the metric tree's, without the per-core directories.
DRIVER_2_24_DEVICE_NODES = {
    "core_count", "reset", "connected_devices", "info/notify_delay", "info/serial_number",
    "info/architecture/arch_type", "info/architecture/instance_type", "info/architecture/device_name",
    "stats/hardware/sram_ecc_uncorrected", "stats/hardware/mem_ecc_uncorrected",
    "stats/hardware/mem_ecc_repairable_uncorrected", "stats/power/utilization",
}
# Recorded attributes the doctor does not read (a device's serial number and its power samples).
UNREAD = {"info/serial_number", "stats/power/utilization"}

# file -> (loaded driver, [(device, arch_type, device_name, instance_type, core_count)])
EXPECTED = {
    "trn1.2xlarge-driver-2.26.5.0.tsv": ("2.26.5.0", [("neuron0", "NDv2", "Trainium1", "Trn1", None)]),
}


def _tree(tsv: Path, root: Path) -> list[str]:
    """The recorded attributes as files under `root`; their paths relative to the device directory."""
    relative = []
    for line in tsv.read_text().splitlines():
        path, _, value = line.partition("\t")
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(value + "\n")
        if path.startswith(DEVICE_DIR):
            relative.append(path[len(DEVICE_DIR):].split("/", 1)[1])
    return relative


def test_every_recording_has_expectations() -> None:
    assert sorted(path.name for path in RECORDED.glob("*.tsv")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_recorded_values(tmp_path: Path, name: str) -> None:
    nodes = _tree(RECORDED / name, tmp_path)
    fs = RootFS(str(tmp_path))
    driver, expected = EXPECTED[name]
    assert read_loaded_driver_version(fs) == driver
    devices, layout = read_sysfs_devices(fs, driver)
    assert layout == "classic"
    assert [(device.name, device.arch_type, device.device_name, device.instance_type, device.core_count)
            for device in devices] == expected  # no core_count recorded: unknown, not 0
    read = set(neuron_devices.CLASSIC_PATHS.values())
    assert set(nodes) <= read | UNREAD, set(nodes) - read - UNREAD


def test_the_doctor_reads_only_nodes_the_driver_creates() -> None:
    assert set(neuron_devices.CLASSIC_PATHS.values()) <= DRIVER_2_24_DEVICE_NODES


@pytest.mark.parametrize(("release", "mode"), [("2.29.0", 0o400), ("2.30.0", 0o444)])
def test_the_fixture_follows_the_driver_source(tmp_path: Path, release: str, mode: int) -> None:
    """Driver 2.27.4.0 (Neuron 2.29.0) keeps core_count root's; 2.28.0.0 (Neuron 2.30.0) lets everyone read it."""
    root = build_host(tmp_path, HostSpec(instance_type="trn1.32xlarge", release=release))
    device = root / "sys/devices/virtual/neuron_device/neuron3"
    assert (device / "core_count").read_text() == "2"  # "%d", no newline
    assert stat.S_IMODE((device / "core_count").stat().st_mode) == mode
    assert sorted(path.name for path in device.glob("neuron_core*")) == ["neuron_core0", "neuron_core1"]
    assert (device / "neuron_core1/info/architecture/arch_type").read_text() == "NCv2\n"
    assert (device / "neuron_core0/stats/status/hw_error/total").read_text() == "0\n"


def test_a_user_who_is_not_root_counts_the_cores_by_their_directories(tmp_path: Path) -> None:
    """core_count is root's only before driver 2.28: without the privilege to read it the doctor counts
    `neuron_core<M>` and says the same as root does; a core count it cannot find at all stays unknown, and nothing
    is called missing."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge", release="2.29.0"))
    as_root = check_json(["--root", str(root), "--venv", empty_folder(tmp_path), "--select", "hardware"])[1]
    for path in root.glob("sys/devices/virtual/neuron_device/neuron*/core_count"):
        path.chmod(0o000)  # what a user who is not root meets (without_read_privileges drops root's override)
    _, report, _ = check_json(["--root", str(root), "--venv", empty_folder(tmp_path), "--select", "hardware"],
                              prefix=without_read_privileges())
    devices = report["facts"]["host"]["snapshot"]["sysfs_devices"]
    assert [device["core_count"] for device in devices] == [2] * 16
    summary = next(check["summary"] for check in report["checks"] if check["id"] == "hardware")
    assert "16 × Trainium1 (32 NeuronCores)" in summary
    assert summary == next(check["summary"] for check in as_root["checks"] if check["id"] == "hardware")
    assert not [finding for finding in report["findings"] if finding["id"] == "ND-DEV-005"]
    for core_dir in root.glob("sys/devices/virtual/neuron_device/neuron*/neuron_core*"):
        for path in sorted(core_dir.rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        core_dir.rmdir()
    _, unknown, _ = check_json(["--root", str(root), "--venv", empty_folder(tmp_path), "--select", "hardware"],
                               prefix=without_read_privileges())
    assert [device["core_count"] for device in unknown["facts"]["host"]["snapshot"]["sysfs_devices"]] == [None] * 16
    assert not [finding for finding in unknown["findings"] if finding["id"] == "ND-DEV-005"]
