"""The one-line texts of a report, shared by the terminal and Markdown reporters.

A healthy area shows the line its check wrote about what it verified; an unhealthy one leads with its worst
finding's title; one that could not judge says why (the verdict first, then per area). The verdict line
reads the health verdict, never recounts it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from neurondoctor.facts import ListedEnvironment
from neurondoctor.neuron_version import release_words
from neurondoctor.report.health import STATE_DEGRADED, STATE_OK, STATE_UNHEALTHY, STATE_UNKNOWN
from neurondoctor.report.model import (
    STATUS_CRASHED,
    STATUS_ERROR,
    STATUS_SKIPPED,
    STATUS_WARNING,
    UNJUDGED_STATUSES,
    CheckResult,
    EnvironmentSummary,
    Report,
)
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_INFO, SEVERITY_WARNING
from neurondoctor.rules.fix import Fix
from neurondoctor.rules.python_stack.package_index import placeholder_words

SEVERITY_ORDER = {SEVERITY_ERROR: 0, SEVERITY_WARNING: 1, SEVERITY_INFO: 2}
VERDICT_WORDS = {STATE_OK: "Healthy", STATE_DEGRADED: "Degraded", STATE_UNHEALTHY: "Unhealthy",
                 STATE_UNKNOWN: "Unknown"}


def environment_line(env: EnvironmentSummary, latest: str | None) -> str:
    """`/opt/venv (3.11.7): Neuron 2.31.1 packages, torch 2.9.0 (cpu)`."""
    parts = []
    if env.neuron_packages:
        if env.release is None:
            parts.append("Neuron packages from no known release")
        elif env.consistent:
            newer = f" (newest: {latest})" if latest and latest != env.release else ""
            parts.append(f"Neuron {release_words(env.releases) or env.release} packages{newer}")
        else:
            parts.append(f"Neuron packages mixed across releases (mostly {env.release})")
    elif env.placeholders:
        parts.append(f"no Neuron packages but {placeholder_words(env.placeholders)}")
    else:
        parts.append("no Neuron packages")
    if env.torch:
        flavour = f" ({env.torch_flavour})" if env.torch_flavour and env.torch_flavour != "unknown" else ""
        parts.insert(0 if not env.neuron_packages else 1, f"torch {env.torch}{flavour}")
    if env.guarded_release:
        parts.append(f"built and guarded by neurondoctor for {env.guarded_release}")
    about = ", ".join(filter(None, (env.python, env.holds, env.kind if env.kind not in (None, "venv") else None)))
    return f"{env.path}{f' ({about})' if about else ''}: " + ", ".join(parts)


LISTED_SHOWN = 20  # listed environments named in a report, the rest counted


def listed_line(listed: Sequence[ListedEnvironment], cut_at: Optional[int]) -> Optional[str]:
    """`3 more environment(s) without torch or a Neuron package, listed in the facts (-v)`, and the bound when
    discovery stopped at it; None when there is nothing to say."""
    if not listed and not cut_at:
        return None
    from neurondoctor.pyenv.discovery import MAX_ENVIRONMENTS, MAX_EXAMINED  # only a discovery has bounds

    text = f"{len(listed)} more environment(s) without torch or a Neuron package, not judged (-v lists them)"
    return text + (f"; discovery stopped at its bound after {cut_at:,} environment(s) (it looks at "
                   f"{MAX_ENVIRONMENTS:,} environments and {MAX_EXAMINED:,} folder entries at most)" if cut_at else "")


HOST_LABELS = (("aws-neuronx-dkms", "driver"), ("aws-neuronx-runtime-lib", "runtime"),
               ("aws-neuronx-collectives", "collectives"), ("aws-neuronx-tools", "tools"))


def host_line(report: Report) -> str | None:
    """`Neuron 2.31.1 (driver, runtime, collectives, tools agree)`, or None without Neuron OS packages."""
    versions = report.host_release_versions
    if not versions:
        return None
    names = ", ".join(label for name, label in HOST_LABELS if name in versions)
    if report.host_release and report.host_release_consistent:
        return f"Neuron {release_words(report.host_agreed_releases) or report.host_release} ({names} agree)"
    pin = report.facts.host.snapshot.inf1_pin
    pinned = pin is not None and pin.installs(versions.get("aws-neuronx-dkms", ""))
    return "Neuron packages from different releases: " + ", ".join(
        f"{name} {version}" for name, version in versions.items()) + (
        f" (the driver is the one the image pins on Inf1: {pin.unit})" if pin and pinned else "")


def node_line(report: Report) -> str | None:
    """What the node is for, when it is a container node: `Bottlerocket node (aws-k8s-1.33): the Neuron runtime and
    frameworks run in its containers`; None for a host that runs the stack itself."""
    role = report.facts.host.snapshot.node_role
    if role is None:
        return None
    return f"{role.name}: the Neuron runtime and frameworks run in its containers ({'; '.join(role.evidence)})"


def release_line(report: Report) -> str | None:
    """One line: the host's release, each environment's, and whether they go together."""
    if report.host_release is None:
        return None
    envs = [env for env in report.environments if env.release]
    if not envs:
        return None
    parts = [f"host {release_words(report.host_agreed_releases) or report.host_release}"]
    parts += [f"{env.path} {release_words(env.releases) or env.release}" for env in envs]
    verdict = "they go together" if report.host_and_environments_agree else "they do NOT go together"
    return " · ".join(parts) + f" · {verdict}"


def area_line(check: CheckResult) -> str:
    """The text after an area's status box: why it could not judge, its worst finding, or its healthy line."""
    if check.status in UNJUDGED_STATUSES:
        prefix = "the check crashed: " if check.status == STATUS_CRASHED else ""
        return prefix + (check.error or "could not judge")
    if check.status == STATUS_SKIPPED:
        return check.summary or "not applicable"
    if not check.findings:
        return check.summary or "no problems found"
    worst = sorted(check.findings, key=lambda finding: SEVERITY_ORDER[finding.severity])[0]
    more = len(check.findings) - 1
    return worst.title + (f" (+{more} more)" if more else "")


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def timed_out_lines(report: Report) -> list[str]:
    """One line per tool that was stopped at its deadline (a `neuron-ls` that hangs on a wedged device): the report
    goes on without its answer, and says so instead of leaving a silent gap."""
    return [f"Timed out: {command.failure}; this report goes on without its answer"
            for command in report.facts.host.snapshot.commands if command.timed_out and command.failure]


def verdict_line(report: Report) -> str:
    """The last line: the verdict, then what it counts (errors and warnings, and the areas that hold them)."""
    errors, warnings = report.count(SEVERITY_ERROR), report.count(SEVERITY_WARNING)
    failing = [check for check in report.checks if check.status in (STATUS_ERROR, STATUS_WARNING)]
    unjudged = [check for check in report.checks if check.status in UNJUDGED_STATUSES]
    counts = [_plural(errors, "error")] + ([_plural(warnings, "warning")] if warnings else [])
    text = f"{VERDICT_WORDS[report.health.state]}: {', '.join(counts)}"
    if failing:
        text += f" in {_plural(len(failing), 'area')}"
    if unjudged:
        text += f"; {_plural(len(unjudged), 'area')} could not be checked ({', '.join(c.title for c in unjudged)})"
    elif report.health.state == STATE_UNKNOWN:
        text += f"; could not check: {report.health.reasons[0]}"
    return text + "."


def combined_plans(report: Report) -> list[tuple[str, Fix]]:
    """(heading, lines) for each environment that several findings concern: their fixes as one plan.
    One finding's own lines already are its plan."""
    plans = []
    for env in report.environments:
        if len(env.fix_plan_findings) < 2:
            continue
        counts: dict[str, int] = {}
        for finding_id in env.fix_plan_findings:
            counts[finding_id] = counts.get(finding_id, 0) + 1
        ids = ", ".join(finding_id + (f" ×{count}" if count > 1 else "") for finding_id, count in counts.items())
        plans.append((f"One plan for {env.path} ({ids}), in this order:", env.fix_plan))
    return plans


def apply_hint(report: Report) -> str:
    """How `check --fix` applies the plans: on the live host only (docs/contracts.md §7)."""
    if report.root != "/":
        return ""
    return ("Or run the same check with --fix: it shows the plan, asks, backs up every file it edits and checks "
            "again.")
