"""AWS's end-of-support announcements (manifests/end-of-support.json), judged on the environments they apply to.

An announcement names what ends (the packages an environment holds, a framework stack, instance families), the
release that announced it and the release from which Neuron no longer supports it. On a host of that release or a
later one the environment gets a warning (ND-EOS-001): it still runs, so the node is degraded, never drained
(docs/contracts.md §6); in the releases that announced the end, an info (ND-EOS-002). The release is `--release`,
else the host's own (its OS packages), else the environment's. A host whose Neuron packages are newer than every
release the data lists may already be on a release the data does not have (2.34.0 when the data ends at 2.33.0):
for an end in such a release it gets the info, saying so, never a guess of the warning.

The fix is the way forward the announcement names: for the PyTorch/XLA ends a TorchNeuron environment
(`venv create --framework pytorch-native`) where the host runs it (Trn2, Trn3) and its wheels have the Python;
otherwise the announcement's advice.
"""

from __future__ import annotations

from typing import Any, Optional

from neurondoctor.facts.python_env import PythonEnvironment
from neurondoctor.neuron_version import release_tuple
from neurondoctor.python_packaging import matches
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_INFO, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Fix, Note, Step, command
from neurondoctor.rules.python_stack.python_support import closest_supported

CATEGORY = "end-of-support"


def announcements(ctx: RuleContext) -> list[dict[str, Any]]:
    return [entry for entry in ctx.catalog.end_of_support.get("announcements", []) if isinstance(entry, dict)]


def _newer_than_data(ctx: RuleContext) -> bool:
    """The host's runtime, driver, collectives or tools are newer than every version the data lists."""
    host = ctx.host_release()
    return bool(host.unknown) and all(ctx.catalog.newer_than_known(name, host.versions[name]) for name in host.unknown)


def release_in_effect(ctx: RuleContext, env: PythonEnvironment) -> tuple[Optional[str], bool]:
    """(the release judged against, whether the host is newer than that release: the newest in the data)."""
    if ctx.target_release:
        return ctx.target_release, False
    host = ctx.host_release()
    if host.release:
        return host.release, False
    if _newer_than_data(ctx):  # newer than every release whose host packages the data knows (a partial one has none)
        return ctx.catalog.whole_latest, True
    return ctx.release_of(env).release, False


def _held(ctx: RuleContext, env: PythonEnvironment, entry: dict[str, Any]) -> Optional[dict[str, str]]:
    """The packages the announcement names, as this environment holds them; None when it does not apply here."""
    wanted: dict[str, str] = entry.get("packages", {})
    if not wanted:
        return None  # a host-only announcement (a driver): another rule judges it (`covered_by`)
    dists = env.effective_distributions()
    held: dict[str, str] = {}
    for name, specifier in wanted.items():
        dist = dists.get(name)
        if dist is None or dist.placeholder or matches(dist.version, specifier) is not True:
            return None
        held[name] = dist.version
    stack = entry.get("stack")
    framework = held.get("torch-neuronx")
    if stack and framework is not None and ctx.catalog.framework_stack("torch-neuronx", framework) != stack:
        return None
    families = entry.get("instances") or []
    if families and ctx.facts.host.instance_family not in families:
        return None
    return held


def _stage(release: str, newer: bool, entry: dict[str, Any], latest: Optional[str]) -> Optional[str]:
    """`ended`, `announced`, `maybe-ended` (a host newer than the data, an end after the data) or None."""
    ends = release_tuple(str(entry["ends_in"]))
    if newer and latest is not None and ends > release_tuple(latest):
        return "maybe-ended"
    if release_tuple(release) >= ends:
        return "ended"
    announced = entry.get("announced_in")
    if announced and release_tuple(release) >= release_tuple(str(announced)):
        return "announced"
    return None


def _native_venv(ctx: RuleContext, env: PythonEnvironment, release: str) -> Optional[list[Step]]:
    """`venv create ENV-native --framework pytorch-native` of the newest release up to `release` that has TorchNeuron
    for this instance family, on the environment's Python when its wheels have it, else the nearest they have."""
    family = ctx.facts.host.instance_family
    candidates = [name for name in ctx.catalog.release_names if release_tuple(name) <= release_tuple(release)]
    for name in candidates:
        native = [entry for entry in ctx.catalog.entries(name, "torch-neuronx")
                  if ctx.catalog.framework_stack("torch-neuronx", entry.version) == "native"
                  and family is not None and family in entry.instances]
        if not native:
            continue
        pythons = sorted({python for entry in native for python in entry.python}, key=release_tuple)
        python = env.python_major_minor
        if pythons and (python is None or python not in pythons):
            python = closest_supported(python or pythons[0], pythons)
        target = f"{env.path.rstrip('/')}-native"
        words = ["neurondoctor", "venv", "create", target, "--release", name, "--framework", "pytorch-native"]
        return [command(*words, *(["--python", f"python{python}"] if python else []))]
    return None


def _release_venv(ctx: RuleContext, env: PythonEnvironment, release: str) -> list[Step]:
    return [command("neurondoctor", "venv", "create", f"{env.path.rstrip('/')}-{release}", "--release", release)]


def _fix(ctx: RuleContext, env: PythonEnvironment, entry: dict[str, Any], release: str) -> Fix:
    kind = entry.get("fix")
    steps: Optional[list[Step]] = None
    if kind == "native-venv":
        steps = _native_venv(ctx, env, release)
    elif kind == "release-venv" and release in ctx.catalog.releases:
        steps = _release_venv(ctx, env, release)
    if steps is None:
        steps = [Note("the way forward: {} ({})", (str(entry["way_forward"]), str(entry["source"])))]
    return Fix(steps)


def _title(env: PythonEnvironment, entry: dict[str, Any], stage: str, release: str, latest: Optional[str]) -> str:
    what, ends = entry["what"], entry["ends_in"]
    if stage == "ended":
        return f"{env.path}: {what} is not supported from Neuron {ends}, and this host is on {release}"
    if stage == "maybe-ended":
        return (f"{env.path}: Neuron {ends} ends support for {what}; this host's Neuron packages are newer than "
                f"{latest}, the newest release whose host packages neurondoctor's data lists, so it may be on {ends} "
                "already")
    return (f"{env.path}: Neuron {ends} ends support for {what} (announced in {entry['announced_in']}); this host is "
            f"on {release}")


def ended_support(ctx: RuleContext) -> list[Finding]:
    """ND-EOS-001 (the release no longer supports what the environment holds) and ND-EOS-002 (the release announces
    the end, or the host may already be past it)."""
    findings = []
    latest = ctx.catalog.whole_latest
    for env in ctx.facts.environments:
        release, newer = release_in_effect(ctx, env)
        if release is None:
            continue
        for entry in announcements(ctx):
            if entry.get("covered_by"):
                continue
            held = _held(ctx, env, entry)
            stage = _stage(release, newer, entry, latest) if held is not None else None
            if stage is None or held is None:
                continue
            way = f"The way forward: {entry['way_forward']}."
            note = f" {entry['note']}" if entry.get("note") else ""
            findings.append(Finding(
                id="ND-EOS-001" if stage == "ended" else "ND-EOS-002", category=CATEGORY,
                severity=SEVERITY_WARNING if stage == "ended" else SEVERITY_INFO,
                title=_title(env, entry, stage, release, latest),
                detail=(f"Unsupported is not broken: the environment still runs, but AWS no longer fixes or tests it "
                        f"({entry['source']}). {way}{note}"),
                evidence={"announcement": entry["id"], "ends_in": entry["ends_in"],
                          "announced_in": entry.get("announced_in"), "release": release,
                          "newer_than_data": newer, "packages": held, "environment": env.path},
                fix=_fix(ctx, env, entry, release),
                docs=[str(entry["source"])],
            ))
    return findings


RULE_SET = RuleSet(
    rules=(ended_support,),
    findings=(
        FindingSpec("ND-EOS-001", CATEGORY, SEVERITY_WARNING,
                    "an environment holds what this host's Neuron release no longer supports (an AWS announcement)"),
        FindingSpec("ND-EOS-002", CATEGORY, SEVERITY_INFO,
                    "info: this host's Neuron release announces the end of what an environment holds"),
    ),
)
