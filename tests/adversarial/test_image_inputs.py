"""Attack class: an image's own files aimed at the image identification (ND-SUP-003). The vLLM Neuron checkout's
HEAD is a file anyone building an image writes: a FIFO, a huge file, bytes that are no UTF-8, a branch name carrying
shell text or a second line, or a link out of the root must name no branch and no line of the report, and the rest
of the report must come out."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from neurondoctor.host.container_image import VLLM_CHECKOUT_HEAD
from tests.conftest import check_json
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import outside_venv
from tests.test_image_family import VLLM_MARKERS, plant_image
from tests.wheelhouse import VenvFactory


def _escape(head: Path, tmp_path: Path) -> None:
    """A link to a file outside the root that does name a branch: under --root it resolves inside the root."""
    outside = tmp_path / "outside-HEAD"
    outside.write_text("ref: refs/heads/release-0.21.0.1.0.0\n")
    head.symlink_to(outside)


PLANTS: dict[str, Callable[[Path, Path], None]] = {
    "fifo": lambda head, _: os.mkfifo(head),
    "huge": lambda head, _: head.write_bytes(b"ref: refs/heads/release-0.21.0.1.0.0" + b"0" * (8 << 20)),
    "not-utf8": lambda head, _: head.write_bytes(b"ref: refs/heads/release-0.21.\xff\xfe\n"),
    "shell": lambda head, _: head.write_text("ref: refs/heads/release-0.21.0.1.0.0$(reboot)\n"),
    "two-lines": lambda head, _: head.write_text("ref: refs/heads/release-0.21.0.1.0.0\n# forged line\n"),
    "escape": _escape,
}


@pytest.mark.parametrize("plant", sorted(PLANTS))
def test_a_hostile_checkout_head_names_no_branch(tmp_path: Path, venvs: VenvFactory, plant: str) -> None:
    root = plant_image(build_host(tmp_path / "image", HostSpec(instance_type="trn1.32xlarge", container=True)),
                       VLLM_MARKERS)
    head = root / VLLM_CHECKOUT_HEAD.lstrip("/")
    head.parent.mkdir(parents=True, exist_ok=True)
    PLANTS[plant](head, tmp_path)
    code, report, stderr = check_json(["--root", str(root), *outside_venv(venvs, "2.31.1")])
    assert "Traceback" not in stderr and code == 0
    assert report["facts"]["host"]["snapshot"]["image"]["vllm_branch"] is None
    assert not [item for item in report["findings"] if item["id"] == "ND-SUP-003"]
