"""`explain` on real Neuron runtime logs (issue 30 §4): each file under tests/recorded/runtime-logs/ is a log a user
or AWS's docs published, its first line naming where (`# source: URL`). Each is recognised with its category, the
number that matters (what ran out and by how much, which rank waited how long, which cores) and its ways out, first
the one that fits the numbers."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from neurondoctor.rules.probes.runtime_log import usage_table

RECORDED = Path(__file__).parent / "recorded" / "runtime-logs"

# file -> (category, detail or None, the start of the first way out)
EXPECTED: dict[str, tuple[str, Optional[str], str]] = {
    "device-memory-oom-lnc1.log": (
        "resource",
        "4.000GB more for tensors on ND 0:NC 4, which already held 20.094GB (tensors 20.000GB, model code 96.065MB, "
        "runtime 229.062KB); at LNC=1, NC 4 and NC 5 share this HBM, so what the other core holds counts too",
        "tensors are the largest part (20.000GB of 20.094GB)"),
    "too-many-open-files-32-ranks.log": ("resource", None, "raise the open-files limit where the ranks start"),
    "rx-timeout-bootstrap.log": (
        "env-var-misconfig",
        "rank 0 of 8 waited 240 s in the collectives' bootstrap for peers that did not connect (4 timeout line(s))",
        "look above for another rank's first error"),
    "could-not-open-device.log": ("device-missing", None, "in a container, pass every device the job uses"),
    "nrt-resource-load.log": (
        "resource", "the model's load found no room on the NeuronCores it was given (visible cores: 0, 1)",
        "give the model more NeuronCores"),
    "runtime-cannot-be-initialized.log": ("cores-busy", None, "find the process that holds the NeuronCores"),
    "tensor-allocation-failure.log": ("resource", None, "see what each NeuronCore holds"),
}


def test_every_recorded_log_names_its_source_and_is_expected() -> None:
    files = sorted(path.name for path in RECORDED.glob("*.log"))
    assert files == sorted(EXPECTED)
    for name in files:
        first = (RECORDED / name).read_text().splitlines()[0]
        assert first.startswith("# source: https://"), name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_real_runtime_log_is_explained_with_its_numbers(name: str) -> None:
    category, detail, first_way = EXPECTED[name]
    done = subprocess.run([sys.executable, "-m", "neurondoctor", "explain", str(RECORDED / name), "--json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["category"] == category
    assert answer["detail"] == detail
    assert answer["ways_out"][0].startswith(first_way), answer["ways_out"]
    assert answer["source"] and answer["matched"]


def test_the_text_answer_says_it_in_short() -> None:
    done = subprocess.run([sys.executable, "-m", "neurondoctor", "explain", str(RECORDED / "rx-timeout-bootstrap.log")],
                          capture_output=True, text=True, timeout=60)
    assert "In short:   rank 0 of 8 waited 240 s" in done.stdout


def test_the_usage_table_reads_by_column_name_in_either_header_form() -> None:
    text = (RECORDED / "device-memory-oom-lnc1.log").read_text()
    row = usage_table(text, "5")
    assert row["TOTAL"] == "96.285MB" and row["Model Code"] == "96.037MB" and row["Profiler Buffers"] == "0.000B"
    assert row["DMA Rings Collectives"] == "0.000B"
    assert usage_table(text, "9")["TOTAL"] == "20.188GB"  # no such core: the device's overall row
    assert usage_table("no table here", "0") == {}
