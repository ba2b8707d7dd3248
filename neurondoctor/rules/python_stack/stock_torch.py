"""stock-torch-conflict: a PyPI/CUDA torch that replaced, or sits beside, the Neuron-pinned one.

torch-neuronx `X.Y.Z.A.B.C` is built for torch `X.Y`; any other torch X.Y makes `import torch_neuronx`
fail with `undefined symbol` in `_XLAC` (train-ts; gh#875). torch-xla must match torch exactly
(docs/measured.md: torch-xla 2.9.0 needs torch 2.9.0).
"""

from __future__ import annotations

from neurondoctor.facts.python_env import Distribution, PythonEnvironment
from neurondoctor.neuron_version import major_minor
from neurondoctor.rules.check import FindingSpec, RuleSet, environment_check
from neurondoctor.rules.context import RuleContext, TorchStack, pin, pip_command
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Command, Fix, command
from neurondoctor.rules.python_stack import framework_missing, framework_pins, requirements, torch_companions
from neurondoctor.rules.python_stack.torch_build import (
    cpu_torch_command,
    is_cuda_build,
    nvidia_distributions,
    torch_version_shown,
)

CATEGORY = "stock-torch-conflict"


def _reinstall_commands(ctx: RuleContext, env: PythonEnvironment, stack: TorchStack, torch: str) -> list[Command]:
    """The pinned torch's CPU build, then the torch-xla of the same release (its `torch==` is then satisfied)."""
    commands = [cpu_torch_command(ctx, env, torch)]
    if stack.stack == "xla":
        commands.append(pip_command(env, "install", pin("torch-xla", ctx.catalog.torch_xla_for(torch))))
    return commands


def _uninstall_nvidia(env: PythonEnvironment, nvidia: list[Distribution]) -> list[Command]:
    if not nvidia:
        return []
    return [pip_command(env, "uninstall", "-y", *[dist.display_name for dist in nvidia])]


def _cuda_note(nvidia: list[Distribution], cuda: bool) -> str:
    if not cuda:
        return ""
    return f" It is a CUDA build with {len(nvidia)} nvidia-* package(s), unused on Neuron."


def torch_version_mismatch(ctx: RuleContext) -> list[Finding]:
    """ND-TORCH-001: torch X.Y differs from the X.Y the Neuron framework package is built for."""
    findings = []
    for env, stack, framework, torch, framework_torch in ctx.framework_stacks():
        if major_minor(torch.version) == major_minor(framework_torch):
            continue
        build = env.torch_build()
        shown = torch_version_shown(torch, build)
        nvidia = nvidia_distributions(env)
        cuda = is_cuda_build(torch, build)
        findings.append(Finding(
            id="ND-TORCH-001",
            category=CATEGORY,
            severity=SEVERITY_ERROR,
            title=f"torch {shown} replaced the torch {major_minor(framework_torch)} that "
                  f"{framework.display_name} {framework.version} is built for",
            detail=(f"{framework.display_name} {framework.version} is built for torch {framework_torch}; "
                    f"this environment has torch {shown}.{_cuda_note(nvidia, cuda)} "
                    f"`import {framework.name.replace('-', '_')}` fails with `undefined symbol`"
                    + (" in _XLAC" if stack.stack == "xla" else "") + ". A later "
                    "`pip install` of a package that wants a newer torch usually does this."),
            evidence={"venv": env.path, "torch": shown, framework.name: framework.version,
                      "torch_location": torch.location, "nvidia_packages": len(nvidia)},
            fix=Fix(_reinstall_commands(ctx, env, stack, framework_torch) + _uninstall_nvidia(env, nvidia)),
            docs=["https://awsdocs-neuron.readthedocs-hosted.com/en/latest/archive/nxd-training/"
                  "training-troubleshooting.html"],
        ))
    return findings


def cuda_torch_in_neuron_env(ctx: RuleContext) -> list[Finding]:
    """ND-TORCH-002: the right torch X.Y, but PyPI's CUDA build with GBs of nvidia-* packages."""
    findings = []
    for env, _, framework, torch, framework_torch in ctx.framework_stacks():
        if major_minor(torch.version) != major_minor(framework_torch):
            continue  # ND-TORCH-001 reports it, CUDA included
        build = env.torch_build()
        nvidia = nvidia_distributions(env)
        if not is_cuda_build(torch, build) and not nvidia:
            continue
        shown = torch_version_shown(torch, build)
        findings.append(Finding(
            id="ND-TORCH-002",
            category=CATEGORY,
            severity=SEVERITY_WARNING,
            title=(f"{len(nvidia)} nvidia-* packages left in a Neuron environment" if not is_cuda_build(torch, build)
                   else f"torch {shown} is a CUDA build from PyPI ({len(nvidia)} nvidia-* packages) in a Neuron "
                   "environment" if nvidia
                   # a `+cu121` wheel of PyTorch's own CUDA index carries its CUDA libraries inside (HF DLAMI 2024)
                   else f"torch {shown} is a CUDA build (its CUDA libraries inside the wheel) in a Neuron "
                   "environment"),
            detail=(f"{framework.display_name} runs with it, but the CUDA libraries are unused on Trainium/Inferentia, "
                    "take gigabytes, and show that torch came from a CUDA index (PyPI's default, or PyTorch's "
                    "`cu` index) rather than being pinned with the Neuron packages: the next upgrade can replace it "
                    "with another X.Y. "
                    + str(ctx.catalog.compat.get("cuda_torch_source", ""))),
            evidence={"venv": env.path, "torch": shown, "cuda": build.cuda if build else None,
                      "nvidia_packages": [dist.display_name for dist in nvidia]},
            fix=Fix([cpu_torch_command(ctx, env, torch.version), *_uninstall_nvidia(env, nvidia)]),
        ))
    return findings


def torch_xla_mismatch(ctx: RuleContext) -> list[Finding]:
    """ND-TORCH-003: torch-xla X.Y differs from a torch that is itself the right one (or has no framework)."""
    findings = []
    for env in ctx.facts.environments:
        stack = ctx.torch_stack(env)
        if stack.torch is None or stack.torch_xla is None:
            continue
        if major_minor(stack.torch.version) == major_minor(stack.torch_xla.version):
            continue
        if stack.framework_torch and major_minor(stack.torch.version) != major_minor(stack.framework_torch):
            continue  # ND-TORCH-001 reinstalls torch and torch-xla together
        wanted = stack.framework_torch or stack.torch.version.split("+")[0]
        specs = [pin("torch", wanted), pin("torch-xla", ctx.catalog.torch_xla_for(wanted))]
        findings.append(Finding(
            id="ND-TORCH-003",
            category=CATEGORY,
            severity=SEVERITY_ERROR,
            title=f"torch-xla {stack.torch_xla.version} does not match torch {stack.torch.version}",
            detail=("torch-xla is compiled against one torch release; with another X.Y `import torch_xla` "
                    "fails with `undefined symbol` in _XLAC."),
            evidence={"venv": env.path, "torch": stack.torch.version, "torch-xla": stack.torch_xla.version},
            fix=Fix([pip_command(env, "install", *specs, "--extra-index-url", ctx.catalog.pip_repository)]),
        ))
    return findings


def duplicate_torch(ctx: RuleContext) -> list[Finding]:
    """ND-TORCH-004: two torch dist-infos in one site-packages (an interrupted or mixed replace)."""
    findings = []
    for env in ctx.facts.environments:
        for site in env.site_dirs:
            torches = [dist for dist in site.judged_distributions() if dist.name == "torch"]
            if len(torches) < 2:
                continue
            stack = ctx.torch_stack(env)
            wanted = stack.framework_torch or torches[0].version.split("+")[0]
            stale = [dist for dist in torches if dist.version.split("+")[0] != wanted] or torches[1:]
            findings.append(Finding(
                id="ND-TORCH-004",
                category=CATEGORY,
                severity=SEVERITY_ERROR,
                title=f"{len(torches)} torch installs recorded in {site.path}: "
                      + ", ".join(dist.version for dist in torches),
                detail=("Two torch dist-infos in one directory mean one install overwrote the other's files "
                        "without removing its record: `import torch` loads a mixture of both."),
                evidence={"venv": env.path, "dist_infos": [dist.metadata_dir for dist in torches]},
                fix=Fix([*(command("rm", "-rf", dist.metadata_dir) for dist in stale),
                         cpu_torch_command(ctx, env, wanted)]),
            ))
    return findings


def pytorch_summary(ctx: RuleContext) -> str:
    """`torch 2.9.0 (cpu) matches torch-neuronx`, or that there is no torch or no Neuron framework."""
    envs = ctx.facts.environments  # never empty: the area is skipped without one
    torches, anchors = set(), set()
    for env in envs:
        torch = env.effective_distributions().get("torch")
        if torch is not None:
            torches.add(f"torch {torch_version_shown(torch, env.torch_build())}")
        anchor = ctx.release_of(env).anchor
        if anchor is not None:
            anchors.add(anchor.dist.name)
    if not torches:
        return "torch not installed"
    return ", ".join(sorted(torches)) + (f" matches {', '.join(sorted(anchors))}" if anchors
                                         else "; no Neuron framework")


RULE_SET = RuleSet(
    rules=(torch_version_mismatch, cuda_torch_in_neuron_env, torch_xla_mismatch, duplicate_torch),
    findings=(
        FindingSpec("ND-TORCH-001", "stock-torch-conflict", SEVERITY_ERROR,
                    "torch X.Y differs from the X.Y the Neuron framework is built for"),
        FindingSpec("ND-TORCH-002", "stock-torch-conflict", SEVERITY_WARNING,
                    "the right torch X.Y, but PyPI's CUDA build with nvidia-* packages"),
        FindingSpec("ND-TORCH-003", "stock-torch-conflict", SEVERITY_ERROR, "torch-xla X.Y differs from torch X.Y"),
        FindingSpec("ND-TORCH-004", "stock-torch-conflict", SEVERITY_ERROR,
                    "two torch dist-infos in one site-packages"),
    ),
)
CHECK = environment_check("pytorch-stack", "PyTorch stack",
                          (RULE_SET, torch_companions.RULE_SET, framework_pins.RULE_SET, requirements.RULE_SET,
                           framework_missing.RULE_SET),
                          pytorch_summary)
