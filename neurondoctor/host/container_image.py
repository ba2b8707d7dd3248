"""Which AWS image a container is, from what the image itself carries.

The Neuron Deep Learning Containers (aws-neuron/deep-learning-containers) carry no label or variable that names the
instance families they are for; their Dockerfiles copy fixed files into the image, and the vLLM images clone the
vLLM Neuron repository at a release branch. Those are read here (and only inside a container, where the root is an
image); which image a set of them names, and its families, is data (manifests/support-ranges.json `images`).

The files, as the Dockerfiles at commit 2be9ed1d5da9d7c8e15d7abac1eb7f550ed3a723 copy them:

- `/usr/local/bin/deep_learning_container.py`: every Neuron DLC (pytorch/inference, pytorch/training, jax/training,
  vllm/inference `Dockerfile.neuronx`).
- `/usr/local/bin/vllm_entrypoint.py`: the vLLM inference images (`vllm/inference/*/Dockerfile.neuronx`), which also
  `git clone -b release-<vllm-neuron version> https://github.com/vllm-project/vllm-neuron.git /opt/vllm`.
- `/usr/local/bin/dockerd-entrypoint.py` and `/usr/local/bin/entrypoint.sh`: the PyTorch inference images
  (`pytorch/inference/2.9.0/Dockerfile.neuronx` copies neuron-entrypoint.py and torchserve-neuron.sh there).
- `/usr/local/bin/start_with_right_hostname.sh`: the training images (pytorch/training, jax/training).
"""

from __future__ import annotations

import re
from typing import Optional

from neurondoctor.facts.container_image import ContainerImage
from neurondoctor.host.rootfs import RootFS

DLC_MARKERS = (
    "/usr/local/bin/deep_learning_container.py",
    "/usr/local/bin/vllm_entrypoint.py",
    "/usr/local/bin/dockerd-entrypoint.py",
    "/usr/local/bin/entrypoint.sh",
    "/usr/local/bin/start_with_right_hostname.sh",
)
VLLM_CHECKOUT_HEAD = "/opt/vllm/.git/HEAD"
HEAD_LIMIT = 256  # a HEAD file is one short line; a longer one is cut, and a cut branch name is no branch
# `ref: refs/heads/release-0.24.0.1.1.0`: the only shape read; anything else (a detached HEAD, garbage) names none
_BRANCH = re.compile(r"\Aref: refs/heads/(release-[0-9]+(?:\.[0-9]+){1,6})\s*\Z")


def parse_branch(text: Optional[str]) -> Optional[str]:
    """The release branch a git HEAD file names, or None."""
    found = _BRANCH.match(text or "")
    return found.group(1) if found else None


def branch_version(branch: Optional[str]) -> Optional[str]:
    """`release-0.24.0.1.1.0` -> `0.24.0.1.1.0`."""
    return branch.removeprefix("release-") if branch else None


def read_container_image(fs: RootFS) -> ContainerImage:
    """The marker files present and the vLLM Neuron branch; reads one small file at most."""
    text = fs.try_read_text(VLLM_CHECKOUT_HEAD, limit=HEAD_LIMIT + 1)
    branch = parse_branch(text) if text is not None and len(text) <= HEAD_LIMIT else None
    return ContainerImage(markers=[path for path in DLC_MARKERS if fs.exists(path)], vllm_branch=branch,
                          vllm_branch_source=VLLM_CHECKOUT_HEAD if branch else None)
