"""Inf1 and the legacy stack. Drivers above 2.24 do not support Inf1 from Neuron 2.26. The docs'
correction (announce-correction-neuron-driver-support-inf1) superseded the earlier "2.21", and the release data
agrees: the newest driver entry listing inf1 is 2.24.7.0. Inf1's frameworks bundle their runtime, so no
aws-neuronx-runtime-lib is expected there."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import check_json, findings_by_id
from tests.host_fixture import HostSpec, build_host, pinned_inf1_host
from tests.neuron_envs import HEALTHY_STACKS, simple_wheel, stack_wheels, torch_wheel
from tests.wheelhouse import (
    VenvFactory,
    install_image_interpreter,
    relabel_python,
    repoint_to_image_interpreter,
    write_pip_conf,
)

INF1_PACKAGES = {"aws-neuronx-dkms": "2.24.7.0", "aws-neuronx-tools": "2.26.14.0",
                 "aws-neuronx-runtime-lib": None, "aws-neuronx-collectives": None}


def test_a_driver_newer_than_inf1_supports(tmp_path: Path) -> None:
    root = build_host(tmp_path / "inf1", HostSpec(instance_type="inf1.xlarge", release="2.31.1"))
    code, report, _ = check_json(["--root", str(root)])
    finding = findings_by_id(report)["ND-INST-002"][0]
    assert (finding["category"], finding["severity"]) == ("instance-unsupported", "error")
    assert finding["title"] == "aws-neuronx-dkms 2.29.0.0 does not support Inf1; the last driver that does is 2.24.*"
    assert finding["fix"][0] == ("sudo apt-get install -y --allow-change-held-packages --allow-downgrades "
                                 "'aws-neuronx-dkms=2.24.*'")
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


# Neuron 2.21.1 on Inf1 (n2-manifest.json): the Inf1 lines of runtime-lib and collectives, a driver and tools
# that still list inf1. Trn1 and Inf2 got runtime-lib 2.23.112.0 in the same release.
INF1_2_21 = {"aws-neuronx-dkms": "2.19.64.0", "aws-neuronx-runtime-lib": "2.12.23.0",
             "aws-neuronx-collectives": "2.12.35.0", "aws-neuronx-tools": "2.20.204.0"}


def test_trn_runtime_packages_on_inf1(tmp_path: Path) -> None:
    """Runtime-lib and collectives 2.33 list trn1/inf2/trn2/trn3 only; Neuron 2.31.1 ships none for inf1."""
    root = build_host(tmp_path / "inf1", HostSpec(instance_type="inf1.xlarge", release="2.31.1"))
    found = findings_by_id(check_json(["--root", str(root)])[1])
    runtime = {finding["evidence"]["package"]: finding for finding in found["ND-INST-003"]}
    assert set(runtime) == {"aws-neuronx-runtime-lib", "aws-neuronx-collectives"}
    finding = runtime["aws-neuronx-runtime-lib"]
    assert (finding["severity"], finding["title"]) == (
        "error", "aws-neuronx-runtime-lib 2.33.10.0 is built for inf2, trn1, trn2, trn3, not for this inf1.xlarge")
    assert finding["fix"] == ["sudo apt-get remove -y aws-neuronx-runtime-lib"]


def test_near_miss_a_runtime_version_that_served_trn1_in_an_earlier_release(tmp_path: Path) -> None:
    """runtime-lib 2.12.23.0 is the Inf1 line in 2.21.1 but was Trn1's own runtime in Neuron 2.9.1: a version any
    release ships for this family is never instance-unsupported."""
    root = build_host(tmp_path / "trn1", HostSpec(instance_type="trn1.2xlarge", release=None,
                                                  package_versions=INF1_2_21))
    assert "ND-INST-003" not in findings_by_id(check_json(["--root", str(root)])[1])


def test_near_miss_the_inf1_runtime_line_on_inf1(tmp_path: Path) -> None:
    root = build_host(tmp_path / "inf1", HostSpec(instance_type="inf1.6xlarge", release=None,
                                                  package_versions=INF1_2_21))
    assert "ND-INST-003" not in findings_by_id(check_json(["--root", str(root)])[1])


def test_torch_neuronx_in_a_venv_on_inf1(tmp_path: Path, venvs: VenvFactory) -> None:
    """The venv lies outside the copied root, as a support engineer runs it."""
    root = build_host(tmp_path / "inf1", HostSpec(instance_type="inf1.xlarge", release="2.26.1",
                                                  package_versions=INF1_PACKAGES, runtime_library=False,
                                                  collectives_library=False))
    venv = venvs.create("inf1-torch-neuronx")
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.26.1"]))
    found = findings_by_id(check_json(["--root", str(root), "--venv", str(venv)])[1])
    titles = [finding["title"] for finding in found["ND-INST-001"]]
    assert "torch-neuronx 2.8.0.2.10.16998 is built for inf2, trn1, trn2, not for this inf1.xlarge" in titles


def test_runtime_1x_and_the_old_tools_package(tmp_path: Path) -> None:
    """A host carried over from Neuron 1.x: neuron-rtd's packages and aws-neuron-tools."""
    root = build_host(tmp_path / "inf1", HostSpec(
        instance_type="inf1.xlarge", release="2.26.1",
        package_versions={**INF1_PACKAGES, "aws-neuronx-tools": None}, runtime_library=False,
        collectives_library=False,
        extra_packages={"aws-neuron-runtime": "1.6.24.0", "aws-neuron-runtime-base": "1.6.21.0",
                        "aws-neuron-tools": "2.1.4.0"}))
    found = findings_by_id(check_json(["--root", str(root)])[1])
    rtd = found["ND-RT-004"][0]
    assert (rtd["category"], rtd["severity"]) == ("mixed-sdk-release", "warning")
    assert rtd["fix"] == ["sudo systemctl disable --now neuron-rtd",
                          "sudo apt-get remove -y aws-neuron-runtime aws-neuron-runtime-base"]
    tools = found["ND-RT-005"][0]
    assert tools["fix"] == ["sudo apt-get remove -y aws-neuron-tools",
                            "sudo apt-get install -y --allow-change-held-packages 'aws-neuronx-tools=2.26.14.0*'"]


def test_near_miss_a_current_inf1_host_has_no_legacy_findings(tmp_path: Path) -> None:
    root = build_host(tmp_path / "inf1", HostSpec(instance_type="inf1.6xlarge", release="2.26.1",
                                                  package_versions=INF1_PACKAGES, runtime_library=False,
                                                  collectives_library=False))
    assert not {"ND-RT-004", "ND-RT-005"} & set(findings_by_id(check_json(["--root", str(root)])[1]))


# What AWS publishes for Inf1 from Neuron 2.26 on: the driver pinned to 2.24.* (announce-correction-neuron-driver-
# support-inf1: `apt-get install aws-neuronx-dkms=2.24.*`), the release's tools (they list inf1), no runtime-lib
# (the Inf1 frameworks bundle theirs), and a venv with the Inf1 PyTorch line the release data lists: torch-neuron
# 1.13.1.2.11.13.0 + neuron-cc 1.24.0.0 + torch 1.13.1 on Python 3.10 (torch-neuron's wheels: 3.8-3.10), the
# n2-helper's `aws_neuron_venv_pytorch_inf1`.
INF1_TOOLS = {"2.26.1": "2.26.14.0", "2.31.1": "2.31.15.0", "2.33.0": "2.33.38.0"}


@pytest.mark.parametrize("release", sorted(INF1_TOOLS))
def test_a_healthy_inf1_host_on_the_inf1_lines(tmp_path: Path, venvs: VenvFactory, release: str) -> None:
    root = pinned_inf1_host(tmp_path / "inf1", release, INF1_TOOLS[release])
    interpreter = install_image_interpreter(root, "3.10")
    venv = venvs.create("aws_neuron_venv_pytorch_inf1", parent=root / "home" / "ubuntu")
    venvs.install(venv, [simple_wheel("torch-neuron", "1.13.1.2.11.13.0", ("torch==1.13.1",)), torch_wheel("1.13.1"),
                         simple_wheel("neuron-cc", "1.24.0.0", ("numpy<1.24",)), simple_wheel("numpy", "1.23.5")])
    write_pip_conf(venv)
    repoint_to_image_interpreter(venv, interpreter)
    relabel_python(venv, "3.10")
    code, report, _ = check_json(["--root", str(root)])
    assert [(item["id"], item["title"]) for item in report["findings"] if item["severity"] != "info"] == []
    assert code == 0
    assert report["environments"][0]["holds"] == "PyTorch 1.13 (torch-neuron, Inf1)"
