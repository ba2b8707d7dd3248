"""The one-line texts of a report, shared by the terminal and Markdown reporters.

A healthy area gets one quiet line that says what was verified; an unhealthy one leads with its worst
finding's title (UX.md: the verdict first and per area).
"""

from __future__ import annotations

from neurondoctor.report.model import STATUS_CRASHED, CheckResult, EnvironmentSummary, Report
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
    python = f" ({env.python})" if env.python else ""
    return f"{env.path}{python}: " + ", ".join(parts)


def _healthy_line(report: Report, check: CheckResult) -> str:
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
