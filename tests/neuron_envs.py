"""Test environments built from small specs: the Neuron packages of a release, and ways to break them.

Versions are written out from docs/neuron-facts.md §1.3 and §2 (the release table and the official pins), not
read from the manifests under test, so a loader bug cannot make a broken fixture look healthy.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from tests.wheelhouse import (
    PLACEHOLDER_INIT,
    VenvFactory,
    WheelSpec,
    install_image_interpreter,
    repoint_to_image_interpreter,
    torch_files,
    write_pip_conf,
)

NEURON_REPO = "https://pip.repos.neuron.amazonaws.com"


@dataclass(frozen=True)
class ReleaseStack:
    torch_neuronx: str
    neuronx_cc: str
    libneuronxla: str
    torch: str
    torch_xla: str


# docs/neuron-facts.md §1.3; 2.32.0 is the official install: 2.32 compiler + 2.31 torch-neuronx (§2). Releases §1.3
# does not repeat are AWS's n2-manifest.json entries: the newest torch-neuronx of the release and the torch and
# torch-xla it pins.
HEALTHY_STACKS = {
    "2.24.1": ReleaseStack("2.7.0.2.8.6734", "2.19.8089.0", "2.2.4410.0", "2.7.0", "2.7.0"),
    "2.25.0": ReleaseStack("2.7.0.2.9.9357", "2.20.9961.0", "2.2.8201.0", "2.7.0", "2.7.0"),
    "2.26.0": ReleaseStack("2.8.0.2.10.13553", "2.21.18209.0", "2.2.12677.0", "2.8.0", "2.8.1"),
    "2.26.1": ReleaseStack("2.8.0.2.10.16998", "2.21.33363.0+82129205", "2.2.12677.0", "2.8.0", "2.8.1"),
    "2.27.0": ReleaseStack("2.9.0.2.11.19912", "2.22.12471.0", "2.2.14584.0", "2.9.0", "2.9.0"),
    "2.27.1": ReleaseStack("2.9.0.2.11.19912", "2.22.12471.0", "2.2.14584.0", "2.9.0", "2.9.0"),
    "2.28.0": ReleaseStack("2.9.0.2.12.22436", "2.23.6484.0", "2.2.15515.0", "2.9.0", "2.9.0"),
    "2.28.1": ReleaseStack("2.9.0.2.12.22436", "2.23.6484.0", "2.2.15515.0", "2.9.0", "2.9.0"),
    "2.29.1": ReleaseStack("2.9.0.2.13.26312", "2.24.8799.0", "2.2.16408.0", "2.9.0", "2.9.0"),
    "2.29.0": ReleaseStack("2.9.0.2.13.24727", "2.24.5133.0", "2.2.16408.0", "2.9.0", "2.9.0"),
    "2.30.0": ReleaseStack("2.9.0.2.14.27725", "2.25.3371.0", "2.2.16974.0", "2.9.0", "2.9.0"),
    "2.31.0": ReleaseStack("2.9.0.2.15.32035", "2.26.6360.0", "2.2.17544.0", "2.9.0", "2.9.0"),
    "2.31.1": ReleaseStack("2.9.0.2.15.32035", "2.26.6360.0+bd4c5f4b", "2.2.17544.0", "2.9.0", "2.9.0"),
    "2.32.0": ReleaseStack("2.9.0.2.15.32035", "2.27.5334.0", "2.2.17544.0", "2.9.0", "2.9.0"),
    # releasecontent.rst 2.33.0 (Trn1): torch-neuronx 2.9.0.2.15.32035 again, with the 2.33 compiler; that build
    # uses the libneuronxla 2.2 line (the list itself names only the JAX line 3.0.10135.0).
    "2.33.0": ReleaseStack("2.9.0.2.15.32035", "2.28.7631.0", "2.2.17544.0", "2.9.0", "2.9.0"),
    # release-notes/2.33.1.rst: the compiler and torch-neuronx are 2.33.0's ("all other packages are the same"); only
    # the JAX line of libneuronxla is rebuilt (3.0.12293.0)
    "2.33.1": ReleaseStack("2.9.0.2.15.32035", "2.28.7631.0", "2.2.17544.0", "2.9.0", "2.9.0"),
}

# The Pythons 3.10-3.13 each release's torch-neuronx supports (n2-manifest.json supported_python_versions).
STACK_PYTHONS = {release: ("3.10", "3.11") for release in ("2.24.1", "2.25.0", "2.26.0", "2.26.1")}
STACK_PYTHONS.update({release: ("3.10", "3.11", "3.12") for release in
                      ("2.27.0", "2.27.1", "2.28.0", "2.28.1", "2.29.0", "2.29.1")})
STACK_PYTHONS.update({release: ("3.11", "3.12", "3.13") for release in ("2.30.0", "2.31.0", "2.31.1", "2.32.0",
                                                                       "2.33.0", "2.33.1")})


@dataclass(frozen=True)
class NativeStack:
    """TorchNeuron (release-notes/components/torchneuron.rst, 2.33.0): torch-neuronx of torch's X.Y (the family
    2.14.3.0.*; the build number here stands for whatever the repository serves), the release's compiler and nki,
    and torch from the PyTorch CPU index. No torch-xla, no libneuronxla."""

    torch_neuronx: str
    neuronx_cc: str
    nki: str
    torch: str


NATIVE_STACKS = {"2.33.0": NativeStack("2.14.3.0.1024", "2.28.7631.0", "0.7.0", "2.14.0"),
                 "2.33.1": NativeStack("2.14.3.0.1024", "2.28.7631.0", "0.7.0", "2.14.0"),  # unchanged in 2.33.1
                 # torch-neuronx's GitHub release v2.34.0: the 2.14.3.1.* family (the build number stands for whatever
                 # the repository serves); 2.34.0's compiler and nki are not published, so 2.33's stand beside it
                 "2.34.0": NativeStack("2.14.3.1.2048", "2.28.7631.0", "0.7.0", "2.14.0")}


def native_stack_wheels(stack: NativeStack) -> list[WheelSpec]:
    """What `pip install "torch-neuronx==2.14.*" "neuronx-cc==2.*" nki` (setup/pytorch/update-manual.rst 2.33)
    leaves, torch as the CPU build."""
    torch_xy = ".".join(stack.torch.split(".")[:2])
    return [
        simple_wheel("torch-neuronx", stack.torch_neuronx, (f"torch=={torch_xy}.*", "neuronx-cc>=2", "nki")),
        simple_wheel("neuronx-cc", stack.neuronx_cc, ("numpy",)),
        simple_wheel("nki", stack.nki, ("numpy",)),
        torch_wheel(stack.torch),
        simple_wheel("numpy", "2.3.4"),
    ]


def jax_stack_wheels(jax: str, libneuronxla: str = "3.0.3854.0") -> list[WheelSpec]:
    """The DLAMI's JAX venv (dlami/index.rst: `/opt/aws_neuronx_venv_jax_0_9` in 2.31) with release 2.31.1's JAX
    line: jax-neuronx 0.10.0.1.0.10466, libneuronxla 3.0.3854.0 (JAX needs the 3.* line,
    release-notes/components/jax.rst), neuronx-cc 2.26.6360.0; with JAX `jax` and its jaxlib."""
    return [simple_wheel("jax-neuronx", "0.10.0.1.0.10466", ("libneuronxla>=3.0", "neuronx-cc>=2.26")),
            simple_wheel("libneuronxla", libneuronxla), simple_wheel("neuronx-cc", "2.26.6360.0"),
            simple_wheel("jax", jax, (f"jaxlib<={jax},>={jax}",)), simple_wheel("jaxlib", jax)]


def torch_wheel(version: str, version_py: Optional[str] = None, cuda: Optional[str] = None,
                requires: tuple[str, ...] = ()) -> WheelSpec:
    shown = version_py or (version if "+" in version else f"{version}+cpu")
    return WheelSpec("torch", version, requires=requires, files=torch_files(shown, cuda))


def torchvision_wheel(version: str, build: str, torch: str) -> WheelSpec:
    """torchvision as pytorch.org and PyPI ship it: `torchvision/version.py` carries the build label (`+cu128` on
    PyPI's x86_64 wheel, `+cpu` on the CPU index) and a `cuda` set only at import time; Requires-Dist pins torch."""
    version_py = (f"__version__ = '{version.partition('+')[0]}+{build}'\n"
                  "git_version = 'b919a3ab1b0a8fa2bbd5d0e6ce2ac9e0b2d8d9d7'\n"
                  "from torchvision.extension import _check_cuda_version\n"
                  "if _check_cuda_version() > 0:\n    cuda = _check_cuda_version()\n")
    return WheelSpec("torchvision", version, requires=("numpy", f"torch=={torch}", "pillow!=8.3.*,>=5.3.0"),
                     files=(("torchvision/__init__.py", "from .version import __version__\n"),
                            ("torchvision/version.py", version_py)))


def simple_wheel(name: str, version: str, requires: tuple[str, ...] = ()) -> WheelSpec:
    module = name.replace("-", "_")
    return WheelSpec(name, version, requires=requires,
                     files=((f"{module}/__init__.py", f'__version__ = "{version}"\n'),))


def stack_wheels(stack: ReleaseStack, torch: Optional[WheelSpec] = None) -> list[WheelSpec]:
    """The packages `pip install neuronx-cc==… torch-neuronx==…` leaves, torch as the CPU build."""
    torch_xy = ".".join(stack.torch.split(".")[:2])
    return [
        simple_wheel("torch-neuronx", stack.torch_neuronx,
                     (f"torch=={torch_xy}.*", f"torch-xla=={torch_xy}.*", "libneuronxla<3.0,>=2.2",
                      "protobuf>=3.20")),
        simple_wheel("neuronx-cc", stack.neuronx_cc, ("protobuf>3",)),
        simple_wheel("libneuronxla", stack.libneuronxla),
        torch or torch_wheel(stack.torch),
        simple_wheel("torch-xla", stack.torch_xla, (f"torch=={stack.torch}",)),
        simple_wheel("numpy", "1.26.4"),
        simple_wheel("protobuf", "3.20.3"),  # what both protobuf requirements resolve to
    ]


NVIDIA_PACKAGES = ("nvidia-cublas-cu12", "nvidia-cuda-runtime-cu12", "nvidia-cudnn-cu12", "nvidia-nccl-cu12")


def cuda_torch_wheels(version: str) -> list[WheelSpec]:
    """PyPI's x86_64 torch: dist version `X.Y.Z`, version.py `X.Y.Z+cu128`, `cuda = '12.8'`, nvidia-* deps."""
    requires = tuple(f"{name}==12.8.0; platform_system == \"Linux\"" for name in NVIDIA_PACKAGES)
    torch = torch_wheel(version, version_py=f"{version}+cu128", cuda="12.8", requires=requires)
    return [torch] + [simple_wheel(name, "12.8.0") for name in NVIDIA_PACKAGES]


# The four PyPI placeholders as published (read from PyPI's wheels on 2026-12-01): one `raise ImportError(…)` line
# each; neuronx-cc's folder is `neuronx-cc/` (not importable at all), transformers-neuronx points at GitHub.
PLACEHOLDER_LAYOUTS = {"neuronx-cc": "neuronx-cc",
                       "transformers-neuronx": "transformers_neuronx", "torch-neuronx": "torch_neuronx",
                       "libneuronxla": "libneuronxla"}
TRANSFORMERS_NEURONX_INIT = ('raise ImportError("WRONG PACKAGE. Please install the package from Neuron Repository - '
                             'https://github.com/aws-neuron/transformers-neuronx#installation")\n')


def placeholder_wheel(name: str, version: str) -> WheelSpec:
    """PyPI's placeholder as published: one `raise ImportError("WRONG PACKAGE …")` line."""
    folder = PLACEHOLDER_LAYOUTS.get(name, name.replace("-", "_"))
    init = TRANSFORMERS_NEURONX_INIT if name == "transformers-neuronx" else PLACEHOLDER_INIT
    description = init.split('"')[1]
    return WheelSpec(name, version, files=((f"{folder}/__init__.py", init),), description=description)


def stack_venv(venvs: VenvFactory, name: str, release: str, replace: tuple[WheelSpec, ...] = (),
               extra: tuple[WheelSpec, ...] = (), pip_conf: bool = True) -> Path:
    """A venv with a release's stack, some of its packages swapped for `replace` (same name), plus `extra`."""
    swapped = {spec.name for spec in replace}
    wheels = [spec for spec in stack_wheels(HEALTHY_STACKS[release]) if spec.name not in swapped]
    venv = venvs.create(name)
    venvs.install(venv, [*wheels, *replace, *extra])
    if pip_conf:
        write_pip_conf(venv)
    return venv


def image_stack_venv(venvs: VenvFactory, root: Path, relative: str, release: str, python: str) -> Path:
    """A venv of a release's stack inside a host tree at `relative`, linked to the image's own `pythonPYTHON` (this
    machine's interpreter copied into the tree), with the Neuron repository in its pip.conf."""
    venv = venvs.create(Path(relative).name, parent=root / Path(relative).parent)
    venvs.install(venv, stack_wheels(HEALTHY_STACKS[release]))
    write_pip_conf(venv)
    repoint_to_image_interpreter(venv, install_image_interpreter(root, python))
    return venv


_RELEASE_VENVS: dict[str, Path] = {}


def outside_venv(venvs: VenvFactory, release: str = "2.31.1") -> list[str]:
    """`--venv DIR` for a healthy venv of `release` outside any fixture root (built once per session), as a
    support engineer runs `check --root copied-tree --venv copied-venv`."""
    if release not in _RELEASE_VENVS:
        venv = venvs.create(f"outside-{release}")
        venvs.install(venv, stack_wheels(HEALTHY_STACKS[release]))
        write_pip_conf(venv)
        _RELEASE_VENVS[release] = venv
    return ["--venv", str(_RELEASE_VENVS[release])]
