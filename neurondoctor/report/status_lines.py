"""The one-line texts of a report, shared by the terminal and Markdown reporters.

A healthy area gets one quiet line that says what was verified; an unhealthy one leads with its worst
finding's title (UX.md: the verdict first and per area).
"""

from __future__ import annotations

from neurondoctor.host.host_facts import HostSnapshot
from neurondoctor.neuron_version import normalize_neuron_version
from neurondoctor.report.model import STATUS_CRASHED, STATUS_SKIPPED, CheckResult, EnvironmentSummary, Report
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_INFO, SEVERITY_WARNING

SEVERITY_ORDER = {SEVERITY_ERROR: 0, SEVERITY_WARNING: 1, SEVERITY_INFO: 2}


def environment_line(env: EnvironmentSummary, latest: str | None) -> str:
    """`/opt/venv (3.11.7): Neuron 2.31.1 packages, torch 2.9.0 (cpu)`."""
    parts = []
    if env.neuron_packages:
        if env.release is None:
            parts.append("Neuron packages from no known release")
        elif env.consistent:
            newer = f" (newest: {latest})" if latest and latest != env.release else ""
            parts.append(f"Neuron {env.release} packages{newer}")
        else:
            parts.append(f"Neuron packages mixed across releases (mostly {env.release})")
    else:
        parts.append("no Neuron packages")
    if env.torch:
        flavour = f" ({env.torch_flavour})" if env.torch_flavour and env.torch_flavour != "unknown" else ""
        parts.insert(0 if not env.neuron_packages else 1, f"torch {env.torch}{flavour}")
    if env.guarded_release:
        parts.append(f"built and guarded by neurondoctor for {env.guarded_release}")
    python = f" ({env.python})" if env.python else ""
    return f"{env.path}{python}: " + ", ".join(parts)


HOST_LABELS = (("aws-neuronx-dkms", "driver"), ("aws-neuronx-runtime-lib", "runtime"),
               ("aws-neuronx-collectives", "collectives"), ("aws-neuronx-tools", "tools"))
DEVICE_NAMES = {"trn1": "Trainium1", "inf2": "Inferentia2", "trn2": "Trainium2", "inf1": "Inferentia1"}
GIB = 1 << 30


def host_line(report: Report) -> str | None:
    """`Neuron 2.31.1 (driver, runtime, collectives, tools agree)`, or None without Neuron OS packages."""
    versions = report.host_release_versions
    if not versions:
        return None
    names = ", ".join(label for name, label in HOST_LABELS if name in versions)
    if report.host_release and report.host_release_consistent:
        return f"Neuron {report.host_release} ({names} agree)"
    return "Neuron packages from different releases: " + ", ".join(
        f"{name} {version}" for name, version in versions.items())


def release_line(report: Report) -> str | None:
    """One line: the host's release, each environment's, and whether they go together (issue 3 §3)."""
    if report.host_release is None:
        return None
    envs = [env for env in report.environments if env.release]
    if not envs:
        return None
    parts = [f"host {report.host_release}"] + [f"{env.path} {env.release}" for env in envs]
    verdict = "they go together" if report.host_and_environments_agree else "they do NOT go together"
    return " · ".join(parts) + f" · {verdict}"


def _hardware_line(snapshot: HostSnapshot) -> str:
    if not snapshot.pci and not snapshot.device_nodes:
        return "none found (this is not a Trainium/Inferentia instance)"
    family = snapshot.pci[0].family if snapshot.pci else ""
    cores = sum(device.core_count or 0 for device in snapshot.sysfs_devices)
    core_text = f" ({cores} NeuronCores)" if cores else ""
    return (f"{len(snapshot.pci)} × {DEVICE_NAMES.get(family, family or 'Neuron device')}{core_text} on PCI, "
            f"{len(snapshot.device_nodes)} device nodes")


def _driver_line(snapshot: HostSnapshot) -> str:
    package = snapshot.packages.get("aws-neuronx-dkms")
    loaded = snapshot.loaded_driver_version
    parts = [f"aws-neuronx-dkms {normalize_neuron_version(package.version)}" if package else "no driver package"]
    parts.append(f"loaded {normalize_neuron_version(loaded)}" if loaded else "not loaded")
    if snapshot.kernel and (snapshot.dkms.installed_module or snapshot.dkms.built_for_kernel):
        parts.append(f"built for {snapshot.kernel}")
    return ", ".join(parts)


def _runtime_line(report: Report) -> str:
    versions = report.host_release_versions
    shown = [f"{name.replace('aws-neuronx-', '')} {versions[name]}" for name in
             ("aws-neuronx-runtime-lib", "aws-neuronx-collectives", "aws-neuronx-tools") if name in versions]
    return ", ".join(shown) or "runtime files present"


def _devices_line(snapshot: HostSnapshot) -> str:
    return f"{len(snapshot.device_nodes)} device node(s) usable, no process holds a NeuronCore"


def _host_env_line(report: Report) -> str:
    snapshot = report.facts.host.snapshot
    variables = [key for key in report.facts.environ if key.startswith("NEURON_RT_")]
    parts = [f"{', '.join(variables)} set" if variables else "NEURON_RT_* unset"]
    cache = snapshot.compile_cache
    if cache is not None:
        free = f", {cache.free_bytes / GIB:.0f} GiB free" if cache.free_bytes is not None else ""
        parts.append(f"compile cache {cache.path}{free}")
    return "; ".join(parts)


def _healthy_host_line(report: Report, check: CheckResult) -> str | None:
    snapshot = report.facts.host.snapshot
    lines = {
        "hardware": lambda: _hardware_line(snapshot),
        "driver": lambda: _driver_line(snapshot),
        "runtime": lambda: _runtime_line(report),
        "devices": lambda: _devices_line(snapshot),
        "host-env": lambda: _host_env_line(report),
    }
    return lines[check.id]() if check.id in lines else None


def _healthy_line(report: Report, check: CheckResult) -> str:
    host = _healthy_host_line(report, check)
    if host is not None:
        return host
    envs = report.environments
    if not envs:
        return "no Python environment found (name one with --venv DIR or --python EXE)"
    if check.id == "python-env":
        pythons = sorted({env.python or "?" for env in envs})
        return f"{len(envs)} environment(s), Python {', '.join(pythons)}: interpreters present, nothing shadowed"
    if check.id == "neuron-release":
        releases = sorted({env.release for env in envs if env.release})
        if not releases:
            return "no Neuron packages installed"
        return f"Neuron {', '.join(releases)}; every package is in that release (newest known: {report.latest_release})"
    if check.id == "pytorch-stack":
        torches = sorted({f"torch {env.torch}" for env in envs if env.torch})
        anchors = sorted({env.anchor for env in envs if env.anchor})
        if not torches:
            return "torch not installed"
        return ", ".join(torches) + (f" matches {', '.join(anchors)}" if anchors else "; no Neuron framework")
    if check.id == "pip-index":
        if any(env.neuron_packages for env in envs):
            return "pip reaches the Neuron repository; no PyPI placeholders"
        return "no PyPI placeholders installed"
    return "no problems found"


def area_line(report: Report, check: CheckResult) -> str:
    if check.status == STATUS_CRASHED:
        return f"the check crashed: {check.error}"
    if check.status == STATUS_SKIPPED:
        return _hardware_line(report.facts.host.snapshot) if check.id == "hardware" else "not applicable"
    if not check.findings:
        return _healthy_line(report, check)
    worst = sorted(check.findings, key=lambda finding: SEVERITY_ORDER[finding.severity])[0]
    more = len(check.findings) - 1
    return worst.title + (f" (+{more} more)" if more else "")


def verdict_line(report: Report) -> str:
    errors, warnings = report.count(SEVERITY_ERROR), report.count(SEVERITY_WARNING)
    text = f"{errors} error{'s' if errors != 1 else ''}"
    if warnings:
        text += f", {warnings} warning{'s' if warnings != 1 else ''}"
    return text + "."
