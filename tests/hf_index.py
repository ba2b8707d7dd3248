"""A PEP 503 index on 127.0.0.1 with the Hugging Face and Neuron packages a porting user installs, as PyPI and the
Neuron repository publish them: optimum-neuron 0.4.5's real Requires-Dist (its `[neuronx]` extra pins the Neuron
2.26.1 stack), optimum 2.0.0 (which asks for `torch>=1.11`, so PyPI's CUDA torch comes along), transformers,
torchvision 0.23/0.24 pinning their torch, and fastapi for an unrelated break."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.local_index import served_index
from tests.neuron_envs import HEALTHY_STACKS, cuda_torch_wheels, simple_wheel, torch_wheel, torchvision_wheel
from tests.wheelhouse import WheelSpec, venv_python

STACK = HEALTHY_STACKS["2.26.1"]
NEURONX_EXTRA = ('extra == "neuronx"',)

# optimum-neuron 0.4.5's METADATA (PyPI, 2025): the base requirements and two extras, verbatim.
OPTIMUM_NEURON = WheelSpec("optimum-neuron", "0.4.5", requires_python="<3.12,>=3.10", requires=(
    "transformers~=4.57.1", "optimum~=2.0.0", "huggingface_hub>=0.35.3",
    'pytest<=8.0.0; extra == "tests"', 'psutil; extra == "tests"',
    'wheel; extra == "neuronx"', 'neuronx-cc==2.21.33363.0; extra == "neuronx"',
    'torch-neuronx==2.8.0.2.10.16998; extra == "neuronx"', 'torch==2.8.0.*; extra == "neuronx"',
    'torchvision==0.23.*; extra == "neuronx"', 'neuronx_distributed==0.15.22404; extra == "neuronx"',
    'libneuronxla==2.2.12677.0; extra == "neuronx"', 'protobuf>=3.20.3; extra == "neuronx"',
    'numpy<=1.26.4,>=1.22.2; extra == "neuronx"'))


def index_wheels() -> list[WheelSpec]:
    torch_xy = ".".join(STACK.torch.split(".")[:2])
    return [
        OPTIMUM_NEURON,
        simple_wheel("transformers", "4.57.1", ("huggingface-hub<1.0,>=0.34.0", "numpy>=1.17", "packaging>=20.0")),
        simple_wheel("transformers", "4.46.3", ("huggingface-hub<1.0,>=0.23.2", "numpy>=1.17", "packaging>=20.0")),
        simple_wheel("optimum", "2.0.0", ("transformers>=4.29", "torch>=1.11", "packaging", "numpy",
                                          "huggingface_hub>=0.8.0")),
        simple_wheel("huggingface-hub", "0.35.3", ("packaging>=20.9",)),
        simple_wheel("packaging", "25.0"),
        simple_wheel("torch-neuronx", STACK.torch_neuronx,
                     (f"torch=={torch_xy}.*", f"torch-xla=={torch_xy}.*", "libneuronxla<3.0,>=2.2", "protobuf>=3.20")),
        simple_wheel("neuronx-cc", "2.21.33363.0", ("protobuf>3",)),
        simple_wheel("libneuronxla", STACK.libneuronxla),
        simple_wheel("neuronx-distributed", "0.15.22404", ("torch-neuronx", "neuronx-cc")),
        torch_wheel(STACK.torch),
        *cuda_torch_wheels("2.9.0"),  # what PyPI gives `torch>=1.11` on x86_64
        simple_wheel("torch-xla", STACK.torch_xla, (f"torch=={STACK.torch}",)),
        torchvision_wheel("0.23.0", "cpu", "2.8.0"),  # the CPU index's torchvision for torch 2.8
        torchvision_wheel("0.24.0", "cu128", "2.9.0"),  # PyPI's x86_64 torchvision: a CUDA build
        torchvision_wheel("0.24.0+cpu", "cpu", "2.9.0"),  # the CPU index's, for the flavour fix
        simple_wheel("pillow", "11.3.0"),
        simple_wheel("numpy", "1.26.4"),
        simple_wheel("protobuf", "3.20.3"),
        simple_wheel("wheel", "0.45.1"),
        simple_wheel("fastapi", "0.115.0", ("starlette<0.39.0,>=0.37.2", "typing-extensions>=4.8.0")),
        simple_wheel("transformers-neuronx", "0.9.474"),  # what optimum-neuron#492's maintainers tested
        simple_wheel("torch-neuronx", "1.13.1.1.10.0"),  # release 2.13's, transformers-neuronx#33
    ]


def serve_hf_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Build the index once and serve it; yields its `/simple` URL (conftest's `hf_index_url` fixture)."""
    with served_index(tmp_path_factory.mktemp("req-index"), index_wheels()) as url:
        yield url


def pip(venv: Path, index_url: str, *args: str) -> None:
    """The user's own `pip install …` into the venv, against the local index only."""
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull}
    for variable in ("PIP_CONSTRAINT", "PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL"):
        env.pop(variable, None)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv_python(venv)), "install", "-q",
                    "--disable-pip-version-check", "--no-compile", "--index-url", index_url, *args],
                   check=True, capture_output=True, timeout=300, env=env)


def run_fix(command: str, index_url: str) -> None:
    """Run a fix line as printed, pointed at the local index instead of the Neuron repository."""
    argv = [part.strip("'") for part in command.split()]
    assert argv[1:4] == ["-m", "pip", "install"], command
    if "--extra-index-url" in argv:
        del argv[argv.index("--extra-index-url"):argv.index("--extra-index-url") + 2]
    env = {**os.environ, "PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": index_url}
    subprocess.run([*argv, "-q", "--disable-pip-version-check"], check=True, capture_output=True, timeout=300,
                   env=env)


