"""An AWS container image judged against the instance family it runs on (ND-SUP-003).

The images are AWS's Neuron Deep Learning Containers, shaped as their Dockerfiles build them
(aws-neuron/deep-learning-containers at commit 2be9ed1d5da9d7c8e15d7abac1eb7f550ed3a723):

- vllm/inference/0.21.0.1.0.0/Dockerfile.neuronx (Neuron 2.31.x: runtime-lib 2.33.10.0) copies vllm_entrypoint.py,
  neuron-monitor.sh and deep_learning_container.py to /usr/local/bin and clones vLLM Neuron at
  `release-0.21.0.1.0.0` into /opt/vllm; the README's image table lists it for trn2,trn3 only.
- vllm/inference/0.16.0/Dockerfile.neuronx (the same releases) copies the same files and clones `release-0.5.3`, the
  NxD Inference plugin; the table lists it for trn1,trn2,trn3,inf2 ("If you are using Trn1 instances, use the legacy
  vLLM 0.16 DLC instead": deploy/environments/quickstart-deploy-dlc.html of 2.31.1).
- pytorch/inference/2.9.0/Dockerfile.neuronx copies neuron-entrypoint.py to /usr/local/bin/dockerd-entrypoint.py and
  torchserve-neuron.sh to /usr/local/bin/entrypoint.sh: PyTorch/XLA inference, no longer supported on Trn2 and Trn3
  from Neuron 2.34 (announce-no-support-torch-xla-inference-trn).

The image's Python is a healthy environment of its release outside the root, as the other container tests use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

import pytest

from neurondoctor.host.container_image import DLC_MARKERS, VLLM_CHECKOUT_HEAD, branch_version, parse_branch
from neurondoctor.release_data.catalog import bundled_manifest_dir, load_catalog
from tests.conftest import check_json, findings_by_id
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import outside_venv
from tests.wheelhouse import VenvFactory

VLLM_MARKERS = ("/usr/local/bin/vllm_entrypoint.py", "/usr/local/bin/neuron-monitor.sh",
                "/usr/local/bin/deep_learning_container.py")
PYTORCH_INFERENCE_MARKERS = ("/usr/local/bin/dockerd-entrypoint.py", "/usr/local/bin/neuron-monitor.sh",
                             "/usr/local/bin/deep_learning_container.py", "/usr/local/bin/entrypoint.sh")


def plant_image(root: Path, markers: tuple[str, ...], branch: Optional[str] = None) -> Path:
    """The files a DLC Dockerfile copies in, and the vLLM Neuron checkout's HEAD as `git clone -b` writes it."""
    for marker in markers:
        path = root / marker.lstrip("/")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("#!/usr/bin/env python\n")
    if branch is not None:
        head = root / VLLM_CHECKOUT_HEAD.lstrip("/")
        head.parent.mkdir(parents=True, exist_ok=True)
        head.write_text(f"ref: refs/heads/{branch}\n")
    return root


def _image(tmp_path: Path, instance_type: Optional[str], markers: tuple[str, ...], branch: Optional[str] = None,
           container: bool = True) -> Path:
    root = build_host(tmp_path / "image", HostSpec(instance_type=instance_type, release="2.31.1",
                                                   container=container))
    return plant_image(root, markers, branch)


def _sup3(report: dict[str, Any]) -> list[dict[str, Any]]:
    return findings_by_id(report).get("ND-SUP-003", [])


@pytest.mark.parametrize("instance_type", ["trn1.32xlarge", "inf2.48xlarge"])
def test_the_vllm_neuron_0_21_image_on_trn1_or_inf2(tmp_path: Path, venvs: VenvFactory, instance_type: str) -> None:
    root = _image(tmp_path, instance_type, VLLM_MARKERS, "release-0.21.0.1.0.0")
    code, report, _ = check_json(["--root", str(root), *outside_venv(venvs, "2.31.1")])
    (finding,) = _sup3(report)
    assert finding["severity"] == "error" and code == 1
    assert finding["title"] == (
        "this container is the public.ecr.aws/neuron/pytorch-inference-vllm-neuronx image (vllm-neuron "
        f"0.21.0.1.0.0), which runs on trn2, trn3 only, not on this {instance_type}")
    assert finding["evidence"]["read_from"] == VLLM_CHECKOUT_HEAD and finding["evidence"]["release"] == "2.31.1"
    assert "vllm/inference/0.24.0.1.1.0/Dockerfile.neuronx" in finding["evidence"]["dockerfile"]
    assert finding["fix"] == ["# on the host, run the image AWS publishes for this family: 'the legacy vLLM 0.16 "
                              "image, public.ecr.aws/neuron/pytorch-inference-vllm-neuronx:0.16.0-neuronx-py312-"
                              "sdk2.31.1-ubuntu24.04 (the newest AWS lists for trn1 and inf2)'"]
    assert finding["docs"][-1].startswith("https://github.com/aws-neuron/deep-learning-containers/blob/")


@pytest.mark.parametrize("instance_type", ["trn2.48xlarge", "trn3.48xlarge"])
def test_near_miss_the_vllm_neuron_image_on_the_families_it_is_for(tmp_path: Path, venvs: VenvFactory,
                                                                   instance_type: str) -> None:
    root = _image(tmp_path, instance_type, VLLM_MARKERS, "release-0.21.0.1.0.0")
    _, report, _ = check_json(["--root", str(root), *outside_venv(venvs, "2.31.1")])
    assert _sup3(report) == []


def test_near_miss_the_legacy_vllm_0_16_image_on_trn1(tmp_path: Path, venvs: VenvFactory) -> None:
    """The 0.16 image builds vLLM Neuron's `release-0.5.3`, the NxD Inference plugin: trn1 is one of its families."""
    root = _image(tmp_path, "trn1.32xlarge", VLLM_MARKERS, "release-0.5.3")
    code, report, _ = check_json(["--root", str(root), *outside_venv(venvs, "2.31.1")])
    assert _sup3(report) == [] and report["findings"] == [] and code == 0


def test_the_pytorch_inference_image_on_trn2_judged_as_2_34(tmp_path: Path, venvs: VenvFactory) -> None:
    """PyTorch/XLA inference is no longer supported on Trn2 from 2.34: a warning (unsupported is not broken), with
    the vLLM Neuron image as the way out; the image's torch-neuronx is read from its environment."""
    root = _image(tmp_path, "trn2.48xlarge", PYTORCH_INFERENCE_MARKERS)
    _, report, _ = check_json(["--root", str(root), *outside_venv(venvs, "2.31.1"), "--release", "2.34.0"])
    (finding,) = _sup3(report)
    assert finding["severity"] == "warning" and finding["evidence"]["package"] == "torch-neuronx"
    assert "from Neuron 2.34.0 is supported on trn1, inf2 only, not on this trn2.48xlarge" in finding["title"]
    assert "pytorch-inference-vllm-neuronx:<vllm-neuron version>-neuronx-py313-sdk<release>" in finding["fix"][0]


@pytest.mark.parametrize(("instance_type", "release"), [("trn1.32xlarge", "2.34.0"), ("trn2.48xlarge", None)])
def test_near_miss_the_pytorch_inference_image_on_trn1_or_before_2_34(tmp_path: Path, venvs: VenvFactory,
                                                                      instance_type: str,
                                                                      release: Optional[str]) -> None:
    root = _image(tmp_path, instance_type, PYTORCH_INFERENCE_MARKERS)
    _, report, _ = check_json(["--root", str(root), *outside_venv(venvs, "2.31.1"),
                               *(["--release", release] if release else [])])
    assert _sup3(report) == []


def test_an_unpacked_image_without_an_instance_is_named_not_judged(tmp_path: Path, venvs: VenvFactory) -> None:
    """`check --root` of an image unpacked on a build machine: no instance family, so nothing to judge it against;
    what names the image is in the facts."""
    root = _image(tmp_path, None, VLLM_MARKERS, "release-0.21.0.1.0.0")
    _, report, _ = check_json(["--root", str(root), *outside_venv(venvs, "2.31.1")])
    assert _sup3(report) == []
    image = report["facts"]["host"]["snapshot"]["image"]
    assert image["vllm_branch"] == "release-0.21.0.1.0.0"
    assert set(image["markers"]) == {"/usr/local/bin/vllm_entrypoint.py", "/usr/local/bin/deep_learning_container.py"}


def test_near_miss_the_same_files_on_a_host_that_is_no_container(tmp_path: Path, venvs: VenvFactory) -> None:
    """A host whose /usr/local/bin happens to hold the same names is not an image: no image is read."""
    root = _image(tmp_path, "trn1.32xlarge", VLLM_MARKERS, "release-0.21.0.1.0.0", container=False)
    _, report, _ = check_json(["--root", str(root), *outside_venv(venvs, "2.31.1")])
    assert _sup3(report) == [] and report["facts"]["host"]["snapshot"]["image"] is None


def test_every_image_entry_names_files_the_collector_reads_and_a_way_out_per_other_family() -> None:
    catalog = load_catalog(bundled_manifest_dir())
    entries = catalog.support_ranges["images"]
    assert entries
    for entry in entries:
        assert set(entry["markers"]) <= set(DLC_MARKERS), entry["id"]
        others = {"trn1", "inf2", "trn2", "trn3"} - set(entry["instances"])
        assert others <= set(entry["way_out"]), entry["id"]
        assert "2be9ed1d5da9d7c8e15d7abac1eb7f550ed3a723" in entry["dockerfile"]


@pytest.mark.parametrize(("text", "branch"), [
    ("ref: refs/heads/release-0.24.0.1.1.0\n", "release-0.24.0.1.1.0"),
    ("ref: refs/heads/release-0.5.3", "release-0.5.3"),
    ("ref: refs/heads/main\n", None),
    ("5c1f0b7d9e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c\n", None),  # a detached HEAD names no branch
    ("ref: refs/heads/release-0.21\nref: refs/heads/release-0.5.3\n", None),
    (None, None),
])
def test_the_branch_a_head_file_names(text: Optional[str], branch: Optional[str]) -> None:
    assert parse_branch(text) == branch
    assert branch_version(branch) == (branch.removeprefix("release-") if branch else None)
