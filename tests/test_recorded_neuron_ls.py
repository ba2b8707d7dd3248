"""Every neuron-ls output recorded in tests/recorded/neuron-ls/, through the doctor's parsers.

Each recording has the values the doctor must read from it written out below (from the file, by eye, not by the
parser); the columns, header lines and JSON keys the doctor does not read are listed, so a recording with a new one
fails here until someone decides whether it matters. A file added to the directory without expectations fails too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from neurondoctor.facts.host import DeviceNode, HostSnapshot
from neurondoctor.host import neuron_ls
from neurondoctor.host.collect_host import run_neuron_ls
from neurondoctor.host.neuron_ls import parse_neuron_ls_json, parse_neuron_ls_table
from tests.conftest import check_json, cli_env, empty_folder

RECORDED = Path(__file__).parent / "recorded" / "neuron-ls"

READ_COLUMNS = {neuron_ls.DEVICE, neuron_ls.CORES, neuron_ls.LOGICAL_CORES, neuron_ls.CORE_IDS, neuron_ls.PID,
                neuron_ls.COMMAND, neuron_ls.RUNTIME_VERSION}
UNREAD_COLUMNS = {"NEURON MEMORY", "CONNECTED DEVICES", "PCI BDF", "CPU AFFINITY", "NUMA NODE"}
READ_HEADER = {"logical-neuroncore-config"}
UNREAD_HEADER = {"instance-type", "instance-id"}  # the doctor has the instance type from the host itself
READ_KEYS = {"neuron_device", "nc_count", "neuroncore_ids", "neuron_processes", "logical_neuroncore_config"}
UNREAD_KEYS = {"bdf", "cpu_affinity", "numa_node", "connected_to", "memory_size", "instance_type", "instance_id"}
PROCESS_KEYS = {"pid", "command", "neuron_runtime_version"}  # kept as the tool writes them


def _devices(count: int, cores: int, *, ids: bool = False, pids: tuple[int, ...] = (),
             lnc: int | None = None) -> list[tuple[Any, ...]]:
    return [(index, cores, list(range(index * cores, (index + 1) * cores)) if ids else [], list(pids), lnc)
            for index in range(count)]


# file -> (the devices: (index, core_count, core_ids, process ids, logical_neuroncore_config), the header lines)
EXPECTED: dict[str, tuple[list[tuple[Any, ...]], dict[str, str]]] = {
    "inf1.2xlarge-tools-1.16-warning.txt": (_devices(1, 4), {}),
    "inf1.2xlarge-2022.txt": (_devices(1, 4), {}),
    "inf1.6xlarge-processes-docs.txt": ([(0, 4, [], [23518, 23531], None), (1, 4, [], [23595], None),
                                         (2, 4, [], [23608], None), (3, 4, [], [], None)], {}),
    "trn1.32xlarge-topology-docs.txt": (_devices(16, 2), {}),
    # NEURON CORES 8 (physical), LOGICAL NC 4: the count read is the logical one, as `nc_count` is
    "trn2n.48xlarge-logical-nc-column-docs.txt": (_devices(16, 4), {}),
    "trn2n.48xlarge-core-ids-docs.txt": (_devices(16, 4, ids=True, lnc=2), {
        "instance-type": "trn2n.48xlarge", "instance-id": "i-aabbccdd123456789", "logical-neuroncore-config": "2"}),
    "trn2n.48xlarge-show-all-procs-docs.txt": (_devices(16, 4, pids=(268911, 269192), lnc=2), {
        "instance-type": "trn2n.48xlarge", "instance-id": "i-aabbccdd123456789", "logical-neuroncore-config": "2"}),
    "trn2n.48xlarge-j-docs-elided.txt": ([], {}),
    "inf1.xlarge-bottlerocket-driver-2.21.37.txt": (_devices(1, 4, ids=True), {"instance-type": "inf1.xlarge"}),
    "inf2.xlarge-bottlerocket-driver-2.26.10.txt": (_devices(1, 2), {}),
    "trn2.48xlarge-one-device-runtime-2.34.10.txt": (_devices(1, 4, ids=True, pids=(1966680, 1966681), lnc=2), {
        "instance-type": "trn2.48xlarge", "instance-id": "i-0dcf246b9a7d5f066", "logical-neuroncore-config": "2"}),
    "trn1.2xlarge-json-output-tools-2.28.23.json": (_devices(1, 2, ids=True), {}),
    "trn2.48xlarge-json-output-one-device-runtime-2.34.10.json": (
        _devices(1, 4, ids=True, pids=(1966680, 1966681), lnc=2), {}),
}


def _summary(devices: list[Any]) -> list[tuple[Any, ...]]:
    return [(device.index, device.core_count, device.core_ids, [process["pid"] for process in device.processes],
             device.logical_neuroncore_config) for device in devices]


def test_every_recording_has_expectations() -> None:
    assert sorted(path.name for path in RECORDED.iterdir() if path.name != "SOURCES.md") == sorted(EXPECTED)
    sources = (RECORDED / "SOURCES.md").read_text()
    assert all(f"| {name} |" in sources for name in EXPECTED)


@pytest.mark.parametrize("name", sorted(name for name in EXPECTED if name.endswith(".txt")))
def test_tables(name: str) -> None:
    text = (RECORDED / name).read_text()
    table = parse_neuron_ls_table(text)
    devices, header = EXPECTED[name]
    assert _summary(table.devices) == devices
    assert table.header == header
    assert set(table.columns) <= READ_COLUMNS | UNREAD_COLUMNS, set(table.columns) - READ_COLUMNS - UNREAD_COLUMNS
    assert set(table.header) <= READ_HEADER | UNREAD_HEADER
    assert all(not device.assumed for device in table.devices)
    assert parse_neuron_ls_json(text) == []  # a table (or AWS's elided example) is never read as JSON


@pytest.mark.parametrize("name", sorted(name for name in EXPECTED if name.endswith(".json")))
def test_json_documents(name: str) -> None:
    text = (RECORDED / name).read_text()
    devices = parse_neuron_ls_json(text)
    assert _summary(devices) == EXPECTED[name][0]
    assert all(not device.assumed for device in devices)
    for entry in json.loads(text):
        assert set(entry) <= READ_KEYS | UNREAD_KEYS, set(entry) - READ_KEYS - UNREAD_KEYS
        for process in entry["neuron_processes"]:
            assert set(process) <= PROCESS_KEYS
    assert parse_neuron_ls_table(text).devices == []


def test_the_table_and_the_json_of_one_host_read_alike() -> None:
    """The 2.34.10 report printed both forms on the same container: the doctor reads the same devices from each."""
    table = parse_neuron_ls_table((RECORDED / "trn2.48xlarge-one-device-runtime-2.34.10.txt").read_text())
    listed = parse_neuron_ls_json((RECORDED / "trn2.48xlarge-json-output-one-device-runtime-2.34.10.json").read_text())
    assert _summary(table.devices) == _summary(listed)
    assert [process["neuron_runtime_version"] for process in table.devices[0].processes] == ["2.34.10", "2.34.10"]


def test_a_table_row_holding_a_bar_keeps_its_columns() -> None:
    """A command is data: a `|` in it (a shell pipeline) must not shift the columns after it."""
    text = (RECORDED / "inf1.6xlarge-processes-docs.txt").read_text()
    text = text.replace("neuron-app01 infer --input-data-direc...", "sh -c 'a | b' infer --input-data-dire...", 1)
    devices = parse_neuron_ls_table(text).devices
    assert devices[0].processes[0] == {"pid": 23518, "command": "sh -c 'a | b' infer --input-data-dire...",
                                       "neuron_runtime_version": "2.0.0"}
    assert _summary(devices) == EXPECTED["inf1.6xlarge-processes-docs.txt"][0]


def _fake_neuron_ls(tmp_path: Path, script: str) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "neuron-ls"
    fake.write_text("#!/bin/sh\n" + script)
    fake.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def test_tools_that_answer_no_json_flag_are_read_from_their_table(tmp_path: Path) -> None:
    """neuron-ls of the Neuron 1.16 era knows neither `-j` nor `--output-format json` (an unknown flag: its message
    on stdout, exit 1): on a host with a device the doctor asks a third time without a flag and reads the table."""
    table = RECORDED / "inf1.2xlarge-tools-1.16-warning.txt"
    environ = _fake_neuron_ls(tmp_path, f"if [ $# -gt 0 ]; then echo \"unknown flag $1\"; exit 1; fi\ncat '{table}'\n")
    snapshot = HostSnapshot(device_nodes=[DeviceNode("/dev/neuron0", True, 0o666, 0, 0)])
    run_neuron_ls(snapshot, environ)
    assert [(command.argv[1:], command.ok) for command in snapshot.commands] == [
        (["-j"], False), (["--output-format", "json"], False), ([], True)]
    assert _summary(snapshot.neuron_ls) == [(0, 4, [], [], None)]
    without_devices = HostSnapshot()
    run_neuron_ls(without_devices, environ)  # nothing to list: the table is not asked for
    assert [command.argv[1:] for command in without_devices.commands] == [["-j"], ["--output-format", "json"]]
    assert without_devices.neuron_ls == []


def test_a_live_check_reads_a_recorded_json_document(tmp_path: Path) -> None:
    document = RECORDED / "trn1.2xlarge-json-output-tools-2.28.23.json"
    environ = _fake_neuron_ls(tmp_path, f"cat '{document}'\n")
    _, report, _ = check_json(["--venv", empty_folder(tmp_path), "--select", "hardware"], env=cli_env(environ))
    assert report["facts"]["host"]["snapshot"]["neuron_ls"] == [
        {"index": 0, "core_count": 2, "core_ids": [0, 1], "processes": [], "logical_neuroncore_config": None,
         "assumed": False}]
