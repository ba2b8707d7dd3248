"""What an environment holds, in a few words: a DLAMI has several side by side, named after their framework and
library (`aws_neuronx_venv_pytorch_2_9_nxd_inference`), and a report that lists five paths should say which is
which (issue 26 §1): `PyTorch 2.9 (torch-neuronx) + NxD Inference`, `JAX 0.7 (jax-neuronx)`,
`PyTorch 1.13 (torch-neuron, Inf1)`."""

from __future__ import annotations

from neurondoctor.facts.python_env import PythonEnvironment
from neurondoctor.neuron_version import major_minor
from neurondoctor.release_data.catalog import ReleaseCatalog

_FRAMEWORKS = {"torch": ("PyTorch", "torch"), "jax": ("JAX", "jax"), "tensorflow": ("TensorFlow", "tensorflow"),
               "mxnet": ("MXNet", "mxnet")}


def environment_label(env: PythonEnvironment, catalog: ReleaseCatalog) -> str:
    """'' for an environment without a Neuron framework line or library."""
    installed = env.effective_distributions()
    parts = []
    for name, props in catalog.compat.get("framework_lines", {}).items():
        dist = installed.get(name)
        if not isinstance(props, dict) or dist is None or dist.placeholder:
            continue
        title, package = _FRAMEWORKS.get(str(props.get("framework")), (str(props.get("framework")), ""))
        framework = installed.get(package)
        version = f" {major_minor(framework.version)}" if framework and major_minor(framework.version) else ""
        only = props.get("instances") or []
        family = f", {', '.join(str(item).capitalize() for item in only)}" if only == ["inf1"] else ""
        parts.append(f"{title}{version} ({dist.display_name}{family})")
    for name, title in catalog.compat.get("neuron_libraries", {}).items():
        dist = installed.get(name)
        if name != "about" and dist is not None and not dist.placeholder:
            version = f" {major_minor(dist.version)}" if name == "vllm" and major_minor(dist.version) else ""
            parts.append(f"{title}{version}")
    return " + ".join(parts)
