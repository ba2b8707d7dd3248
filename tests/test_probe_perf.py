"""`probe canary --perf`: the judge on the numbers (pure), the refusal without a device, and, in the
XLA tier, the real path on real torch 2.9.0 + torch-xla 2.9.0 (PJRT_DEVICE=CPU: each "NeuronCore" a process of
its own, NEURON_RT_VISIBLE_CORES set as on a device) up to the device boundary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from neurondoctor.release_data.probe_data import load_error_signatures
from neurondoctor.rules.probes.perf import logical_cores, perf_findings
from tests.conftest import cli_env, run_cli
from tests.host_fixture import HostSpec, build_host


def _cores(*values: tuple[float, float]) -> dict[str, Any]:
    return {"cores": [{"core": index, "status": "ok", "matmul_tflops": matmul, "copy_gbs": copy}
                      for index, (matmul, copy) in enumerate(values)]}


def test_a_core_under_half_its_peers_is_a_hardware_warning() -> None:
    document = _cores((80.0, 300.0), (81.0, 310.0), (30.0, 305.0), (79.5, 298.0))
    findings = perf_findings(document, "trn1", "", load_error_signatures())
    by_id = {finding.id: finding for finding in findings if finding.id == "ND-PERF-002"}
    assert list(by_id) == ["ND-PERF-002"] and by_id["ND-PERF-002"].evidence["slow"] == [2]
    assert by_id["ND-PERF-002"].category == "hardware-error" and by_id["ND-PERF-002"].severity == "warning"
    info = [finding for finding in findings if finding.id == "ND-PERF-001"]
    assert [finding.severity for finding in info] == ["info", "info"]
    assert "of the per-core share of the published figure" in info[0].title  # trn1: 190 TFLOPS per 2 cores
    assert info[0].evidence["published_share"] == 95.0


def test_even_cores_unknown_families_and_failures() -> None:
    signatures = load_error_signatures()
    even = perf_findings(_cores((80.0, 300.0), (78.0, 290.0)), "inf2", "", signatures)
    assert [finding.id for finding in even] == ["ND-PERF-001", "ND-PERF-001"]
    assert "published" not in even[0].title  # no figure for Inferentia2 here
    failed = perf_findings({"cores": [{"core": 3, "status": "error", "stage": "matmul",
                                       "message": "nrt_tensor_allocate status=4 message=\"Allocation Failure\""}]},
                           "trn2", "", signatures)
    assert [(finding.id, finding.category) for finding in failed] == [("ND-PERF-003", "resource")]
    assert logical_cores([8] * 16, "trn2", "") == 64 and logical_cores([8] * 16, "trn2", "1") == 128
    assert logical_cores([2] * 16, "trn1", "") == 32


def test_without_a_device_it_is_skipped(tmp_path: Path) -> None:
    root = build_host(tmp_path / "root", HostSpec(instance_type=None, pci=False))
    result = run_cli(["probe", "canary", "--perf", "--root", str(root), "--json"], timeout=120)
    assert result.returncode == 4 and "measures devices" in result.stderr


@pytest.mark.xla
def test_the_real_path_on_torch_xla_cpu(xla_venv: Path, tmp_path: Path) -> None:
    root = build_host(tmp_path / "root", HostSpec(instance_type="trn1.2xlarge"))
    result = run_cli(["probe", "canary", "--perf", "--quick", "--root", str(root), "--python",
                      str(xla_venv / "bin" / "python"), "--json"], env=cli_env({"PJRT_DEVICE": "CPU"}), timeout=1200)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    probe = report["probe"]
    assert probe["mode"] == "perf" and probe["pjrt_device"] == "CPU" and probe["torch_xla"] == "2.9.0"
    assert [core["core"] for core in probe["cores"]] == [0, 1]  # a trn1.2xlarge: one device, two NeuronCores
    assert all(core["status"] == "ok" and core["matmul_tflops"] > 0 and core["copy_gbs"] > 0 for core in probe["cores"])
    info = [finding for finding in report["findings"] if finding["id"] == "ND-PERF-001"]
    assert len(info) == 2 and all("published figure" in finding["title"] for finding in info)
