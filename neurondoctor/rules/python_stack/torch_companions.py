"""stock-torch-conflict for torchvision and torchaudio: built for another torch X.Y, or another build of it.

A companion's compiled operators are registered against one torch release and one build: PyPI's torchvision (a
CUDA build, `0.24.0+cu128` in its version.py) beside a CPU torch, or torchvision 0.24 beside torch 2.8, fails on
`import torchvision` with `operator torchvision::nms does not exist` (docs/measured.md; pytorch.org's versions
table pairs each torch X.Y with one torchvision, compat.json `torch_companions`).
"""

from __future__ import annotations

from typing import Optional

from neurondoctor.facts.python_env import Distribution, PythonEnvironment, TorchBuild
from neurondoctor.neuron_version import major_minor
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext, pin, pip_command
from neurondoctor.rules.finding import SEVERITY_ERROR, Finding
from neurondoctor.rules.fix import Command, Fix
from neurondoctor.rules.python_stack.torch_build import is_cuda_build, torch_version_shown

CATEGORY = "stock-torch-conflict"
COMPANIONS = ("torchvision", "torchaudio")
SYMPTOM = "`import torchvision` fails with `operator torchvision::nms does not exist`"


def build_flavour(version: Optional[str]) -> Optional[str]:
    """cuda / cpu / rocm from a local label (`0.24.0+cu128`); None when the version says nothing."""
    label = (version or "").partition("+")[2]
    if label.startswith("cu"):
        return "cuda"
    if label.startswith("rocm"):
        return "rocm"
    if label.startswith("cpu"):
        return "cpu"
    return None


def _torch_flavour(torch: Distribution, build: Optional[TorchBuild]) -> Optional[str]:
    if is_cuda_build(torch, build):
        return "cuda"
    if build is not None and build.flavour in ("cpu", "rocm"):
        return build.flavour
    return build_flavour(torch.version)


def _reinstall(ctx: RuleContext, env: PythonEnvironment, name: str, spec_version: str,
               flavour: Optional[str]) -> Command:
    """The companion for torch's build: the CPU index for a CPU torch (what Neuron venvs use), PyPI otherwise."""
    if flavour == "cpu":
        version = spec_version if spec_version.endswith(".*") else f"{spec_version}+cpu"
        return pip_command(env, "install", "--force-reinstall", "--no-deps", pin(name, version), "--index-url",
                           str(ctx.catalog.compat.get("torch_cpu_index")))
    return pip_command(env, "install", "--force-reinstall", "--no-deps", pin(name, spec_version))


def companion_mismatches(ctx: RuleContext) -> list[Finding]:
    """ND-TORCH-005: a companion paired with another torch X.Y; ND-TORCH-006: the right X.Y, another build."""
    pairs = ctx.catalog.compat.get("torch_companions", {})
    findings = []
    for env in ctx.facts.environments:
        installed = env.effective_distributions()
        torch = installed.get("torch")
        if torch is None:
            continue
        build = env.torch_build()
        torch_shown, torch_xy = torch_version_shown(torch, build), major_minor(torch.version)
        flavour = _torch_flavour(torch, build)
        for name in COMPANIONS:
            dist = installed.get(name)
            if dist is None:
                continue
            companion = env.companion_build(name)
            shown = companion.version if companion and companion.version else dist.version
            expected = pairs.get(name, {}).get(torch_xy or "") if isinstance(pairs.get(name), dict) else None
            evidence = {"venv": env.path, name: shown, "torch": torch_shown}
            if expected and major_minor(dist.version) != expected:
                findings.append(Finding(
                    id="ND-TORCH-005", category=CATEGORY, severity=SEVERITY_ERROR,
                    title=f"{name} {shown} is built for another torch than torch {torch_shown} ({name} {expected} is)",
                    detail=f"{name} pairs with one torch X.Y; {SYMPTOM}. Keep torch (the Neuron framework pins it) "
                           f"and install the {name} built for it.",
                    evidence={**evidence, "expected": expected},
                    fix=Fix([_reinstall(ctx, env, name, f"{expected}.*", flavour)])))
                continue
            companion_flavour = build_flavour(shown)
            if flavour and companion_flavour and companion_flavour != flavour:
                findings.append(Finding(
                    id="ND-TORCH-006", category=CATEGORY, severity=SEVERITY_ERROR,
                    title=f"{name} {shown} is a {companion_flavour.upper()} build beside torch {torch_shown}, "
                          f"a {flavour.upper()} build",
                    detail=f"The companion's operators are compiled for the other build; {SYMPTOM}.",
                    evidence={**evidence, "companion_build": companion_flavour, "torch_build": flavour},
                    fix=Fix([_reinstall(ctx, env, name, dist.version.partition("+")[0], flavour)])))
    return findings


RULE_SET = RuleSet(
    rules=(companion_mismatches,),
    findings=(
        FindingSpec("ND-TORCH-005", CATEGORY, SEVERITY_ERROR, "torchvision/torchaudio built for another torch X.Y"),
        FindingSpec("ND-TORCH-006", CATEGORY, SEVERITY_ERROR,
                    "torchvision/torchaudio of another build (CUDA vs CPU) than torch"),
    ),
)
