"""Inf1 and the legacy stack (issue 11 §7). Drivers above 2.24 do not support Inf1 from Neuron 2.26. The docs'
correction (announce-correction-neuron-driver-support-inf1) superseded the earlier "2.21", and the release data
agrees: the newest driver entry listing inf1 is 2.24.7.0. Inf1's frameworks bundle their runtime, so no
aws-neuronx-runtime-lib is expected there."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import check_json, findings_by_id
from tests.host_fixture import HostSpec, build_host

INF1_PACKAGES = {"aws-neuronx-dkms": "2.24.7.0", "aws-neuronx-tools": "2.26.14.0",
                 "aws-neuronx-runtime-lib": None, "aws-neuronx-collectives": None}


def test_a_driver_newer_than_inf1_supports(tmp_path: Path) -> None:
    root = build_host(tmp_path / "inf1", HostSpec(instance_type="inf1.xlarge", release="2.31.1"))
    code, report, _ = check_json(["--root", str(root)])
    finding = findings_by_id(report)["ND-INST-002"][0]
    assert (finding["category"], finding["severity"]) == ("instance-unsupported", "error")
    assert finding["title"] == "aws-neuronx-dkms 2.29.0.0 does not support Inf1; the last driver that does is 2.24.*"
    assert finding["fix"][0] == "sudo apt-get install -y --allow-change-held-packages 'aws-neuronx-dkms=2.24.*'"
    assert code == 1


def test_near_miss_the_pinned_inf1_driver_with_a_framework_bundled_runtime(tmp_path: Path) -> None:
    root = build_host(tmp_path / "inf1", HostSpec(instance_type="inf1.6xlarge", release="2.26.1",
                                                  package_versions=INF1_PACKAGES, runtime_library=False,
                                                  collectives_library=False))
    _, report, _ = check_json(["--root", str(root)])
    found = findings_by_id(report)
    assert "ND-INST-002" not in found
    assert "ND-RT-003" not in found  # torch-neuron brings its own runtime on Inf1
    hardware = next(check for check in report["checks"] if check["id"] == "hardware")
    assert hardware["summary"].startswith("4 × Inferentia1 (16 NeuronCores)")


def test_near_miss_the_same_driver_on_trn1_is_not_judged_by_inf1s_limit(tmp_path: Path) -> None:
    root = build_host(tmp_path / "trn1", HostSpec(instance_type="trn1.2xlarge", release="2.31.1"))
    assert "ND-INST-002" not in findings_by_id(check_json(["--root", str(root)])[1])


def test_trn1_without_a_runtime_library_is_still_flagged(tmp_path: Path) -> None:
    root = build_host(tmp_path / "trn1", HostSpec(instance_type="trn1.2xlarge", runtime_library=False,
                                                  package_versions={"aws-neuronx-runtime-lib": None}))
    assert "ND-RT-003" in findings_by_id(check_json(["--root", str(root)])[1])
