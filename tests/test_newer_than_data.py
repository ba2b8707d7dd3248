"""A host one release newer than the bundled data: one info finding and exit 0, never a wall of
unknown-version warnings; a real mismatch planted in it (PyPI's torch 2.10 over a newer torch-neuronx 2.9) is
still caught, from the versions themselves."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import check_json, findings_by_id
from tests.fixes.local_release_data import NEXT_HOST
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import HEALTHY_STACKS, simple_wheel, stack_wheels, torch_wheel
from tests.wheelhouse import VenvFactory, write_pip_conf

NEXT_FRAMEWORK = {"torch-neuronx": "2.9.0.2.16.40112", "neuronx-cc": "2.29.1207.0", "libneuronxla": "2.2.18803.0"}


def next_release_venv(venvs: VenvFactory, name: str, torch: str) -> Path:
    stack = HEALTHY_STACKS["2.31.1"]
    wheels = [spec for spec in stack_wheels(stack) if spec.name not in (*NEXT_FRAMEWORK, "torch")]
    wheels += [simple_wheel("torch-neuronx", NEXT_FRAMEWORK["torch-neuronx"],
                            ("torch==2.9.*", "torch-xla==2.9.*", "libneuronxla<3.0,>=2.2", "protobuf>=3.20")),
               simple_wheel("neuronx-cc", NEXT_FRAMEWORK["neuronx-cc"], ("protobuf>3",)),
               simple_wheel("libneuronxla", NEXT_FRAMEWORK["libneuronxla"]), torch_wheel(torch)]
    venv = venvs.create(name)
    venvs.install(venv, wheels)
    write_pip_conf(venv)
    return venv


def test_a_host_one_release_newer_is_one_info_finding(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "host", HostSpec(release=None, package_versions=dict(NEXT_HOST)))
    venv = next_release_venv(venvs, "next-release", "2.9.0")
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)])
    assert [(item["id"], item["severity"]) for item in report["findings"]] == [("ND-REL-005", "info")]
    finding = report["findings"][0]
    assert finding["title"].startswith("this host runs Neuron components newer than neurondoctor's data (2.33.0): "
                                       "aws-neuronx-runtime-lib 2.36.12.0, aws-neuronx-dkms 2.32.4.0, ")
    assert finding["title"].endswith("(+3)") and len(finding["evidence"]["components"]) == 7
    assert finding["fix"] == ["neurondoctor manifests update"]
    assert code == 0 and report["health"]["state"] == "ok"


def test_a_real_mismatch_on_a_newer_host_is_still_caught(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "host", HostSpec(release=None, package_versions=dict(NEXT_HOST)))
    venv = next_release_venv(venvs, "next-release-torch-2-10", "2.10.0")
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)])
    found = findings_by_id(report)
    assert sorted(found) == ["ND-REL-005", "ND-TORCH-001"]
    assert found["ND-TORCH-001"][0]["title"] == ("torch 2.10.0+cpu replaced the torch 2.9 that torch-neuronx "
                                                "2.9.0.2.16.40112 is built for")
    assert code == 1
