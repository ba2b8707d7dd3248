"""Kernel log lines as AWS printed them (tests/recorded/kernel-log/), through the doctor's reader.

The doctor reads the `NEURON_HW_ERR=` lines (ND-HW-002, `health`): their kind, `nd-id`, `nc-id` and `action`. The
other fields those lines carry are listed here as not read, so a new one is noticed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from neurondoctor.host.kernel_log import hardware_errors, window

RECORDED = Path(__file__).parent / "recorded" / "kernel-log"
READ_FIELDS = {"nd-id", "nc-id", "action"}
UNREAD_FIELDS = {"instance-id", "hostname", "serial-num"}  # the node's, already known; the device's serial number
# file -> [(kind, nd-id, nc-id, action)] in the order of the lines
EXPECTED = {
    "nrt-troubleshoot-guide.txt": [("SRAM_UNCORRECTABLE_ERROR", "0", "0", "TERMINATE_INSTANCE")],
    "eks-node-monitoring-agent-test-lines.txt": [(kind, None, None, None) for kind in (
        "SRAM_UNCORRECTABLE_ERROR", "NC_UNCORRECTABLE_ERROR", "HBM_UNCORRECTABLE_ERROR", "DMA_ERROR")],
}


def test_every_recording_has_expectations() -> None:
    assert sorted(path.name for path in RECORDED.glob("*.txt")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_hardware_error_lines(name: str) -> None:
    lines = (RECORDED / name).read_text().splitlines()
    errors = hardware_errors(lines)
    assert [(error.kind, error.device, error.core, error.action) for error in errors] == EXPECTED[name]
    for line in lines:
        if "NEURON_HW_ERR=" in line:
            fields = set(re.findall(r"([\w-]+)=\S+", line.split("NEURON_HW_ERR=", 1)[1]))
            assert fields <= READ_FIELDS | UNREAD_FIELDS, fields - READ_FIELDS - UNREAD_FIELDS
    assert window(lines, None, 2026) == lines  # no `Linux version` line: the whole text is this boot


def test_the_driver_start_line_is_no_hardware_error() -> None:
    line = (RECORDED / "nrt-troubleshoot-guide.txt").read_text().splitlines()[1]
    assert line.endswith("Neuron Driver Started with Version:2.9.4.0-8a6fdf292607dccc3b7059ebbe2fb24c60dfc7c4")
    assert hardware_errors([line]) == []
