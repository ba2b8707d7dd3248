"""A host one release newer than the bundled data: infos and exit 0, never a wall of unknown-version warnings. The
data's newest release, 2.34.0, is known only in part (its host packages, compiler and libneuronxla are not
published in it): what it leaves unjudged is one ND-REL-006 line; what no release known in part explains (an XLA
torch-neuronx above every known one, while 2.34.0 lists only TorchNeuron) is ND-REL-005's. A real mismatch planted in
it (PyPI's torch 2.10 over a newer torch-neuronx 2.9) is still caught, from the versions themselves."""

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
    assert [(item["id"], item["severity"]) for item in report["findings"]] == [("ND-REL-005", "info"),
                                                                                ("ND-REL-006", "info")]
    newer, partial = report["findings"]
    assert newer["title"] == ("this host runs Neuron components newer than neurondoctor's data (2.34.0): "
                              f"torch-neuronx 2.9.0.2.16.40112 ({venv})")
    assert partial["title"].startswith("Neuron 2.34.0 is known only in part; not judged: aws-neuronx-runtime-lib "
                                       "2.36.12.0 (host), aws-neuronx-dkms 2.32.4.0 (host), ")
    assert partial["title"].endswith("+2 more")  # the title names four; the evidence holds all six
    assert sorted(partial["evidence"]["not_judged"]) == sorted(
        [f"{name} {version} (host)" for name, version in NEXT_HOST.items()]
        + [f"neuronx-cc 2.29.1207.0 ({venv})", f"libneuronxla 2.2.18803.0 ({venv})"])
    assert partial["evidence"]["environments"] == {}  # no environment is placed in 2.34.0 by what it lists
    assert newer["fix"] == partial["fix"] == ["neurondoctor manifests update"]
    assert code == 0 and report["health"]["state"] == "ok"


def test_a_real_mismatch_on_a_newer_host_is_still_caught(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "host", HostSpec(release=None, package_versions=dict(NEXT_HOST)))
    venv = next_release_venv(venvs, "next-release-torch-2-10", "2.10.0")
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)])
    found = findings_by_id(report)
    assert sorted(found) == ["ND-REL-005", "ND-REL-006", "ND-TORCH-001"]
    assert found["ND-TORCH-001"][0]["title"] == ("torch 2.10.0+cpu replaced the torch 2.9 that torch-neuronx "
                                                "2.9.0.2.16.40112 is built for")
    assert code == 1
