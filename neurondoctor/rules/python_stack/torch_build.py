"""Which torch build an environment holds: the version `import torch` reports, CUDA or CPU, its nvidia-* packages.

Read from the dist-info and `torch/version.py` as text; torch is never imported.
"""

from __future__ import annotations

from neurondoctor.facts.python_env import Distribution, PythonEnvironment, TorchBuild
from neurondoctor.rules.context import RuleContext, pin, pip_command
from neurondoctor.rules.fix import Command

NVIDIA_PREFIX = "nvidia-"


def nvidia_distributions(env: PythonEnvironment) -> list[Distribution]:
    return [dist for name, dist in sorted(env.effective_distributions().items()) if name.startswith(NVIDIA_PREFIX)]


def torch_version_shown(torch: Distribution, build: TorchBuild | None) -> str:
    """`2.9.0+cu128` from version.py when the dist-info says only `2.9.0` (PyPI's x86_64 wheel)."""
    if build is not None and build.version and build.version.split("+")[0] == torch.version.split("+")[0]:
        return build.version
    return torch.version


def is_cuda_build(torch: Distribution, build: TorchBuild | None) -> bool:
    if build is not None and build.flavour == "cuda":
        return True
    if "+cu" in torch.version:
        return True
    return any(req.lower().startswith(NVIDIA_PREFIX) for req in torch.requires)


def cpu_torch_command(ctx: RuleContext, env: PythonEnvironment, version: str, replace: bool = True) -> Command:
    """torch X.Y.Z's CPU build from the PyTorch CPU index (what Neuron pins and its venvs use). PyPI's x86_64
    `torch==X.Y.Z` is the CUDA build, which *requires* the nvidia-* packages: reinstalling it and then removing them
    leaves `import torch` failing on libcublas. Replacing, `--no-deps` keeps the rest of the environment as
    it is; installing afresh, the CPU index also serves torch's own dependencies."""
    base = version.split("+")[0]
    options = ["--force-reinstall", "--no-deps"] if replace else []
    return pip_command(env, "install", *options, pin("torch", f"{base}+cpu"), "--index-url",
                       str(ctx.catalog.compat.get("torch_cpu_index")))
