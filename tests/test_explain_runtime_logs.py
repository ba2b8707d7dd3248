"""`explain` on real Neuron runtime logs: each file under tests/recorded/runtime-logs/ is a log a user
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
    # The hardware errors of the runtime troubleshooting guide, each with the guide's action first.
    "hbm-unrepairable-guide.log": ("hardware-error", None, "replace the hardware: stop and start the instance"),
    "hbm-repairable-guide.log": ("hardware-error", None, "reload the Neuron driver once no process holds the devices"),
    "sram-uncorrectable-guide.log": ("hardware-error", None, "replace the hardware: stop and start the instance"),
    "dma-abort-guide.log": ("hardware-error", None, "replace the hardware: stop and start the instance"),
    "collectives-hang-guide.log": ("hardware-error", None, "look in the other workers' logs and kernel logs"),
    "execution-timeout-custom-op-guide.log": ("hardware-error", None, "if NEURON_RT_RESET_CORES=0 is set"),
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


# The runtime's status codes (nrt_status.h), as its callers print them, where no signature says more.
STATUS_LINES = {
    "RuntimeError: nrt_execute status=1201": ("hardware-error", "NRT_EXEC_HW_ERR_HBM_UE, 1201"),
    'nrt_execute: status=1005, error message="NeuronCore busy"': ("cores-busy", "NRT_EXEC_NC_BUSY, 1005"),
    "RuntimeError: nrt_load status=9": ("cores-busy", "NRT_LOAD_NOT_ENOUGH_NC, 9"),
    "2023-Jan-09 20:27:41.0600 15042:15042 ERROR  NMGR:dlr_infer  Inference completed with err: 5": (
        "hardware-error", "NRT_TIMEOUT, 5"),
    "Neuron Runtime will exit with NRT_EXEC_HW_ERR_DMA_ABORT (1203)": (
        "hardware-error", "NRT_EXEC_HW_ERR_DMA_ABORT, 1203"),
    "nrt_load failed: NRT_UNSUPPORTED_NEFF_VERSION": ("runtime-compiler-mismatch", "NRT_UNSUPPORTED_NEFF_VERSION, 10"),
}
# Codes whose meaning fits no category are left unexplained rather than guessed; numbers off a runtime line are
# not statuses.
UNEXPLAINED = ['nrt_execute: status=1004, error message="Execution was completed with other errors".',
               "http status=404 from the server", "NRT_EXEC_HW_ERR_HBM_UE_SOMETHING_ELSE", "xNRT_TIMEOUT"]


def _explain(text: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "neurondoctor", "explain", "-", "--json"], input=text,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("line", sorted(STATUS_LINES))
def test_a_runtime_status_code_is_explained_by_the_runtime_table(line: str) -> None:
    done = _explain(line + "\n")
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    category, named = STATUS_LINES[line]
    assert answer["category"] == category and answer["why"].endswith(f"({named})"), answer
    assert answer["matched"] == line and "nrt_status.rst" in answer["source"] and answer["ways_out"]


@pytest.mark.parametrize("line", UNEXPLAINED)
def test_codes_without_a_fitting_category_and_other_numbers_stay_unexplained(line: str) -> None:
    done = _explain(line + "\n")
    assert done.returncode != 0 and json.loads(done.stdout)["category"] is None, done.stdout


def test_the_canary_names_a_runtime_status_instead_of_guessing_from_its_stage() -> None:
    from neurondoctor.release_data.probe_data import load_error_signatures
    from neurondoctor.rules.probes.canary import classify_failure

    signatures = load_error_signatures()
    assert classify_failure("run", "RuntimeError: nrt_execute status=1202", signatures) == (
        "hardware-error", "a NeuronCore's on-chip memory encountered a parity error (NRT_EXEC_HW_ERR_NC_UE, 1202)")
    assert classify_failure("run", "RuntimeError: something else", signatures)[0] == "compile-failure"


# The EFA, collectives and driver messages of the runtime troubleshooting guide (neuron-runtime/nrt-troubleshoot.rst),
# as it prints them: (category, the start of the first way out)
GUIDE_LINES = {
    "NCCL init error: Error opening libnccom.so, cannot use collective operations! Please set LD_LIBRARY_PATH to "
    "library location. Error: libnccom.so: cannot open shared object file: No such file or directory": (
        "tools-missing", "install aws-neuronx-collectives of the host's release"),
    "Unable to run multi-instance workload.  Ofi plugin is not installed or EFA is not enabled": (
        "tools-missing", "install the EFA software with the efa-installer"),
    "OFI plugin initNet() failed is EFA enabled?": ("device-missing", "check the EFA devices"),
    "Linux kernel 5.10 requires setting FI_EFA_FORK_SAFE=1 environment variable.  Multi-node support will be "
    "disabled.": ("env-var-misconfig", "export FI_EFA_FORK_SAFE=1"),
    "WARN Invalid NCCL_COMM_ID [compute1-dy-training-0-1.pcluster-trn1-24-pdx80-2n.pcluster:41211], please use "
    "format: <ipv4>:<port> or [<ipv6>]:<port>": ("env-var-misconfig", "give NEURON_RT_ROOT_COMM_ID"),
    "2023-Jan-06 22:28:01.0845 137472:137472 ERROR TDRV:pool_stdio_queue_consume_all_entries  Printing stderr from "
    "GPSIMD:\nGPSIMD EXCEPTION OCCURRED: ILLEGAL INSTRUCTION\nSubtype/Type/Cause: 0x201\nException PC: 0x840001E8": (
        "env-var-misconfig", "unset NEURON_RT_RESET_CORES"),
    "Removing aws-neuronx-dkms (2.x) ...\nNeuron module is currently loaded. Attempting to unload...\nERROR: Cannot "
    "unload neuron module - it is currently in use.": ("cores-busy", "stop the processes holding the devices"),
}


@pytest.mark.parametrize("text", sorted(GUIDE_LINES))
def test_the_guides_collectives_and_driver_messages(text: str) -> None:
    done = _explain(text + "\n")
    assert done.returncode == 0, done.stdout
    answer = json.loads(done.stdout)
    category, first_way = GUIDE_LINES[text]
    assert answer["category"] == category and answer["ways_out"][0].startswith(first_way), answer
    assert answer["source"].startswith("neuron-runtime/nrt-troubleshoot.rst")


def test_a_usage_table_value_that_is_no_size_is_left_out(tmp_path: Path) -> None:
    """`1.2.3GB` in a column reads as no size (it once ended explain in a ValueError traceback)."""
    log = tmp_path / "runtime.log"
    log.write_text("TDRV:log_dev_mem  Failed to allocate 4.000GB (alignment: none, usage: tensors) on ND 0:NC 4\n"
                   "         |  TOTAL  | Tensors |\n"
                   "\\_NC 4   | 1.2.3GB | 1.2.3GB |\n")
    done = subprocess.run([sys.executable, "-m", "neurondoctor", "explain", str(log), "--json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["detail"] == "4.000GB more for tensors on ND 0:NC 4, which already held 1.2.3GB"
