"""framework-missing: a torch environment that cannot run on the NeuronCores, because nothing Neuron is in it.

People porting PyTorch code to Trainium start from the environment they have: `pip install torch` (a CUDA build
from PyPI), or `pip install optimum-neuron` without its `[neuronx]` extra, which brings CUDA torch and no
Neuron package at all (measured with real packages from PyPI). On a Neuron host, or judged with `--release`, such
an environment is not a pass: it says what it has, what the release needs, and the one command that builds it.
"""

from __future__ import annotations

from typing import Optional

from neurondoctor.facts.python_env import Distribution, PythonEnvironment
from neurondoctor.neuron_version import major_minor, release_tuple
from neurondoctor.python_packaging import marker_extras, parse_requirement
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext, neuron_host, pin, pip_command
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Command, Fix, command
from neurondoctor.rules.python_stack.labels import framework_lines_held
from neurondoctor.rules.python_stack.requirements import extra_release
from neurondoctor.rules.python_stack.torch_build import is_cuda_build, nvidia_distributions, torch_version_shown

CATEGORY = "framework-missing"


def _release(ctx: RuleContext) -> Optional[str]:
    """--release, else the host's own release on a Neuron host, else (a Neuron host without OS packages) the
    newest; None off Neuron hardware without --release: a CPU torch venv on a laptop is not a finding."""
    if ctx.target_release:
        return ctx.target_release
    if not neuron_host(ctx):
        return None
    return ctx.host_release().release or ctx.catalog.whole_latest


def _what_it_has(env: PythonEnvironment, torch: Distribution) -> str:
    build = env.torch_build()
    shown = torch_version_shown(torch, build)
    nvidia = nvidia_distributions(env)
    if is_cuda_build(torch, build):
        return f"torch {shown}, a CUDA build with {len(nvidia)} nvidia-* package(s)"
    return f"torch {shown} (CPU build)" if "+cpu" in shown or (build and build.flavour == "cpu") else \
        f"torch {shown}"


def _what_the_release_needs(ctx: RuleContext, release: str, python: Optional[str]) -> tuple[str, list[str]]:
    """(`torch 2.9 + torch-neuronx 2.9.0.2.15.32035 + torch-xla 2.9.0`, the `venv create` options that pick it) for
    this host's family and this Python: the newest torch-neuronx with wheels for both. On a trn1 2.33 offers the XLA
    torch-neuronx only; on a trn2 with Python 3.13 it is TorchNeuron 2.14 (`--framework pytorch-native --torch
    2.14 --python python3.13`: TorchNeuron needs 3.12-3.14, which the default `python3` may not be), with Python
    3.11 the XLA one."""
    family = ctx.facts.host.instance_family
    frameworks = sorted((entry for entry in ctx.catalog.entries(release, "torch-neuronx")
                         if family is None or not entry.instances or family in entry.instances),
                        key=lambda entry: release_tuple(entry.version), reverse=True)
    runnable = [entry for entry in frameworks if python is None or not entry.python or python in entry.python]
    if not frameworks:
        return "no torch-neuronx (a release without the PyTorch/XLA stack)", []
    newest = (runnable or frameworks)[0]
    stack = ctx.catalog.framework_stack("torch-neuronx", newest.version)
    torch_xy = major_minor(ctx.catalog.framework_torch("torch-neuronx", newest.version) or "") or "?"
    pair = ctx.catalog.compat.get("venv_torch_pairs", {}).get(torch_xy, {})
    xla = pair.get("torch-xla") if isinstance(pair, dict) and stack != "native" else None
    parts = [f"torch {torch_xy}", f"torch-neuronx {newest.version}"] + ([f"torch-xla {xla}"] if xla else [])
    same_stack = [entry for entry in frameworks if ctx.catalog.framework_stack("torch-neuronx", entry.version) == stack]
    several = len({major_minor(ctx.catalog.framework_torch("torch-neuronx", entry.version) or "")
                   for entry in same_stack}) > 1
    native = ["--framework", "pytorch-native"] + (["--python", f"python{python}"] if python else [])
    options = (native if stack == "native" else []) + (["--torch", torch_xy] if several else [])
    return " + ".join(parts), options


def _inf1_line(ctx: RuleContext, release: str, python: Optional[str],
               target: str) -> Optional[tuple[str, list[Command]]]:
    """On Inf1 the PyTorch line is torch-neuron with neuron-cc (compat.json `framework_lines`; `neurondoctor venv
    create` builds torch-neuronx environments only): what the release lists for Inf1, and the steps AWS's Inf1
    install page runs (`pip config set global.extra-index-url` the Neuron repository, then `pip install torch-neuron
    neuron-cc[tensorflow] "protobuf"`, pinned to the release, torch from the PyTorch CPU index) in a new venv on a
    Python its wheels support (3.8-3.10)."""
    if ctx.facts.host.instance_family != "inf1":
        return None
    frameworks = [entry for entry in ctx.catalog.entries(release, "torch-neuron") if "inf1" in entry.instances]
    compilers = [entry for entry in ctx.catalog.entries(release, "neuron-cc") if "inf1" in entry.instances]
    if not frameworks or not compilers:
        return None
    framework = max(frameworks, key=lambda entry: release_tuple(entry.version))
    torch = ctx.catalog.framework_torch("torch-neuron", framework.version)
    if torch is None:
        return None
    supported = list(framework.python)
    chosen = python if python in supported else (sorted(supported, key=release_tuple)[-1] if supported else "3")
    needs = (f"torch-neuron {framework.version} + neuron-cc {compilers[0].version} + torch {torch} on Python "
             f"{', '.join(supported) or '?'} (Inf1's PyTorch line)")
    python_in_target = f"{target}/bin/python"
    return needs, [command(f"python{chosen}", "-m", "venv", target),
                   command(python_in_target, "-m", "pip", "config", "--site", "set", "global.extra-index-url",
                           ctx.catalog.pip_repository),
                   command(python_in_target, "-m", "pip", "install", pin("torch-neuron", framework.version),
                           pin("neuron-cc[tensorflow]", compilers[0].version), pin("torch", f"{torch}+cpu"),
                           "protobuf", "--extra-index-url", ctx.catalog.pip_repository,
                           "--extra-index-url", str(ctx.catalog.compat.get("torch_cpu_index")))]


def _native_note(ctx: RuleContext, release: str) -> str:
    family = ctx.facts.host.instance_family
    native = [entry for entry in ctx.catalog.entries(release, "libtorch-neuronx-lite")
              + [entry for entry in ctx.catalog.entries(release, "torch-neuronx")
                 if ctx.catalog.framework_stack("torch-neuronx", entry.version) == "native"]
              if family is None or family in entry.instances]
    if not native:
        return ""
    where = ", ".join(sorted({instance for entry in native for instance in entry.instances}))
    return (f" On {where}, the native TorchNeuron stack ({native[0].manifest_name} {native[0].version}) is the "
            "other way.")


def torch_without_framework(ctx: RuleContext) -> list[Finding]:
    """ND-FW-001: torch and no Neuron framework, on a Neuron host (warning) or judged with --release (error)."""
    release = _release(ctx)
    if release is None:
        return []
    findings = []
    for env in ctx.facts.environments:
        stack = ctx.torch_stack(env)
        if (stack.torch is None or stack.framework is not None or _addon_without_extra(ctx, env)
                or framework_lines_held(env, ctx.catalog)):
            # tensorflow-neuron, mx-neuron or jax-neuronx beside a torch some library pulled in is a Neuron
            # environment: it is not offered a torch-neuronx one
            continue
        target = f"{env.path.rstrip('/')}-neuron"
        inf1 = _inf1_line(ctx, release, env.python_major_minor, target)
        if inf1 is not None:
            needs, steps = inf1
        else:
            needs, options = _what_the_release_needs(ctx, release, env.python_major_minor)
            steps = [command("neurondoctor", "venv", "create", target, "--release", release, *options)]
        findings.append(Finding(
            id="ND-FW-001", category=CATEGORY,
            severity=SEVERITY_ERROR if ctx.target_release else SEVERITY_WARNING,
            title=f"{env.path} has {_what_it_has(env, stack.torch)} and no Neuron framework",
            detail=(f"Without a Neuron framework, nothing in it reaches the NeuronCores. Neuron {release} needs "
                    f"{needs}."
                    f"{_native_note(ctx, release)} A new environment is quicker and safer than converting this one "
                    "(its torch would be replaced)."),
            evidence={"venv": env.path, "torch": stack.torch.version, "release": release, "needs": needs},
            fix=Fix(steps)))
    return findings


def _addon_without_extra(ctx: RuleContext, env: PythonEnvironment) -> list[tuple[Distribution, str, list[str]]]:
    """(add-on, its Neuron extra, the extra's Neuron packages that are missing) for each add-on lacking them."""
    installed = env.effective_distributions()
    neuron = ctx.catalog.neuron_pip_packages()
    found = []
    for name, props in ctx.catalog.compat.get("neuron_addons", {}).items():
        extra = props.get("neuron_extra") if isinstance(props, dict) else None
        dist = installed.get(name)
        if dist is None or not extra:
            continue
        wanted = [requirement.name for requirement in (parse_requirement(text) for text in dist.requires)
                  if requirement and extra in marker_extras(requirement.marker) and requirement.name in neuron]
        missing = [name for name in wanted if name not in installed]
        if wanted and len(missing) == len(wanted):
            found.append((dist, str(extra), missing))
    return found


def addon_without_neuron_extra(ctx: RuleContext) -> list[Finding]:
    """ND-FW-002: optimum-neuron (or another add-on) installed without the extra that brings the Neuron packages."""
    findings = []
    for env in ctx.facts.environments:
        for dist, extra, missing in _addon_without_extra(ctx, env):
            pinned = extra_release(ctx, dist, extra)
            release = _release(ctx)
            apart = f" Its [{extra}] extra pins the Neuron {pinned} packages" + (
                f", not this host's {release}" if release and pinned and release != pinned else "") + "." \
                if pinned else ""
            findings.append(Finding(
                id="ND-FW-002", category=CATEGORY, severity=SEVERITY_ERROR,
                title=f"{dist.display_name} {dist.version} is installed without its [{extra}] extra: "
                      f"no {', '.join(missing)}",
                detail=(f"`pip install {dist.display_name}` brings the library and PyPI's torch, not the Neuron "
                        f"compiler and framework; models then run on the CPU or fail to compile.{apart}"),
                evidence={"venv": env.path, "package": dist.display_name, "version": dist.version, "extra": extra,
                          "missing": missing, "extra_release": pinned},
                fix=Fix([pip_command(env, "install", f"{dist.display_name}[{extra}]=={dist.version}",
                                     "--extra-index-url", ctx.catalog.pip_repository)])))
    return findings


RULE_SET = RuleSet(
    rules=(torch_without_framework, addon_without_neuron_extra),
    findings=(
        FindingSpec("ND-FW-001", CATEGORY, SEVERITY_WARNING,
                    "torch without a Neuron framework on a Neuron host (an error when judged with --release)",
                    also=(SEVERITY_ERROR,)),
        FindingSpec("ND-FW-002", CATEGORY, SEVERITY_ERROR,
                    "a Neuron add-on (optimum-neuron) installed without the extra that brings the Neuron packages"),
    ),
)
