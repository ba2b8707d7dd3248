"""What an environment holds, in a few words: a DLAMI has several side by side, named after their framework and
library (`aws_neuronx_venv_pytorch_2_9_nxd_inference`), and a report that lists five paths should say which is
which: `PyTorch 2.9 (torch-neuronx) + NxD Inference`, `JAX 0.7 (jax-neuronx)`,
`PyTorch 1.13 (torch-neuron, Inf1)`."""

from __future__ import annotations

from typing import Any

from neurondoctor.facts.python_env import Distribution, PythonEnvironment
from neurondoctor.neuron_version import major_minor
from neurondoctor.release_data.catalog import ReleaseCatalog

_FRAMEWORKS = {"torch": ("PyTorch", "torch"), "jax": ("JAX", "jax"), "tensorflow": ("TensorFlow", "tensorflow"),
               "mxnet": ("MXNet", "mxnet")}


def framework_lines_held(env: PythonEnvironment, catalog: ReleaseCatalog) -> list[tuple[Distribution, dict[str, Any]]]:
    """(distribution, its compat.json `framework_lines` entry) for each Neuron framework line the environment holds
    (a PyPI placeholder is none)."""
    installed = env.effective_distributions()
    return [(installed[name], props) for name, props in catalog.compat.get("framework_lines", {}).items()
            if isinstance(props, dict) and name in installed and not installed[name].placeholder]


def environment_label(env: PythonEnvironment, catalog: ReleaseCatalog) -> str:
    """'' for an environment without a Neuron framework line or library."""
    installed = env.effective_distributions()
    parts = []
    for dist, props in framework_lines_held(env, catalog):
        title, package = _FRAMEWORKS.get(str(props.get("framework")), (str(props.get("framework")), ""))
        framework = installed.get(package)
        version = f" {major_minor(framework.version)}" if framework and major_minor(framework.version) else ""
        only = props.get("instances") or []
        family = f", {', '.join(str(item).capitalize() for item in only)}" if only == ["inf1"] else ""
        parts.append(f"{title}{version} ({dist.display_name}{family})")
    for name, title in catalog.compat.get("neuron_libraries", {}).items():
        library = installed.get(name)
        if name != "about" and library is not None and not library.placeholder:
            version = f" {major_minor(library.version)}" if name == "vllm" and major_minor(library.version) else ""
            parts.append(f"{title}{version}")
    return " + ".join(parts)
