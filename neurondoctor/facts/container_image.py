"""What names a container image: its own module, imported only inside a container (a record class costs every
run that imports it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass
class ContainerImage:
    """What a container image carries that names which AWS image it is: the marker files its Dockerfile copies in
    (host/container_image.py lists them, with the Dockerfiles they come from) and the branch of the vLLM Neuron
    checkout the vLLM images build from. Empty lists and None where the image carries none of it."""

    markers: list[str] = field(default_factory=list)
    vllm_branch: Optional[str] = None  # `release-0.24.0.1.1.0`, from /opt/vllm/.git/HEAD
    vllm_branch_source: Optional[str] = None
