"""Judges a performance canary run, pure: each NeuronCore's BF16 matmul and device-memory copy,
against the per-core share of what AWS publishes per chip (info), and against the other cores of the node: a core
under half its peers' median is a `hardware-error` warning (a throttled or failing core; a single slow core slows
every collective of a job). A core whose run failed is an error, classified like the canary's failures.

Published per-chip figures (about-neuron/arch/neuron-hardware, docs/neuron-facts.md §9): Trainium 190 BF16 TFLOPS
and 820 GiB/s of HBM with 2 NeuronCores; Trainium2 667 BF16 TFLOPS and 2.9 TB/s with 8 physical NeuronCores (4
logical at LNC=2). Inferentia2 and Trainium3: no figure here, so no ratio. The share is an upper bound a fixed
benchmark does not reach: the ratio is information, never a verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from neurondoctor.release_data.probe_data import ErrorSignatures
from neurondoctor.rules.check import Check, FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_INFO, SEVERITY_WARNING, Finding
from neurondoctor.rules.probes.canary import classify_failure
from neurondoctor.strict_numbers import finite_float, json_count

SLOW_FRACTION = 0.5
# family -> (BF16 TFLOPS per chip, HBM GB/s per chip, physical NeuronCores per chip)
PUBLISHED = {"trn1": (190.0, 820 * 1.073741824, 2), "trn2": (667.0, 2900.0, 8)}
_LOGICAL_FAMILIES = ("trn2", "trn3")


def logical_cores(core_counts: Sequence[int], family: Optional[str], lnc_setting: str) -> int:
    """The NeuronCores a process can pin: the devices' physical cores, halved on Trn2/Trn3 at LNC=2 (their default;
    NEURON_LOGICAL_NC_CONFIG=1 exposes every physical core; logical-neuroncore-config.rst)."""
    physical = sum(core_counts)
    if family in _LOGICAL_FAMILIES and lnc_setting.strip() != "1":
        return physical // 2
    return physical


def _share(family: Optional[str], lnc_setting: str) -> Optional[tuple[float, float]]:
    """(TFLOPS, GB/s) per core this process sees, from the published per-chip figures."""
    figures = PUBLISHED.get(family or "")
    if figures is None:
        return None
    tflops, gbs, physical = figures
    cores = logical_cores([physical], family, lnc_setting)
    return tflops / cores, gbs / cores


def _failed(result: dict[str, Any], signatures: ErrorSignatures) -> Finding:
    message = str(result.get("message", ""))
    category, why = classify_failure("run", message, signatures)
    return Finding(id="ND-PERF-003", category=category, severity=SEVERITY_ERROR,
                   title=f"the performance canary failed on NeuronCore {result.get('core')} at "
                         f"{result.get('stage')}: {why}",
                   detail=message.splitlines()[0][:500] if message else "",
                   evidence={key: result.get(key) for key in ("core", "stage", "error_type", "message")})


def perf_findings(document: dict[str, Any], family: Optional[str], lnc_setting: str,
                  signatures: ErrorSignatures) -> list[Finding]:
    import statistics  # only when a perf run is judged (the registry imports this module for `check --list`)

    results = [result for result in document.get("cores") or [] if isinstance(result, dict)]
    findings = [_failed(result, signatures) for result in results if result.get("status") != "ok"]
    # the probe's numbers are the target environment's output: a core that is no index or a figure that is not a
    # finite number is not a measurement
    measured = [result for result in results if result.get("status") == "ok" and json_count(result.get("core"))
                is not None and all(finite_float(result.get(key)) is not None for key in ("matmul_tflops", "copy_gbs"))]
    if not measured:
        return findings
    share = _share(family, lnc_setting)
    for key, label, unit, index in (("matmul_tflops", "BF16 matmul", "TFLOPS", 0), ("copy_gbs", "memory copy", "GB/s",
                                                                                     1)):
        values = {json_count(result["core"]) or 0: finite_float(result[key]) or 0.0 for result in measured}
        median = statistics.median(values.values())
        slow = sorted(core for core, value in values.items()
                      if len(values) > 1 and value < SLOW_FRACTION * statistics.median(
                          [other for other_core, other in values.items() if other_core != core]))
        if slow:
            findings.append(Finding(
                id="ND-PERF-002", category="hardware-error", severity=SEVERITY_WARNING,
                title=f"{label} on NeuronCore(s) {', '.join(map(str, slow))} under half the other cores' "
                      f"({', '.join(f'{values[core]:.3g}' for core in slow)} {unit}, the others' median "
                      f"{median:.3g})",
                detail="A throttled or failing core: every collective of a job waits for it. Run the canary again; "
                       "a core that stays slow is reported to AWS with `neurondoctor bundle`.",
                evidence={"values": {str(core): value for core, value in sorted(values.items())}, "slow": slow}))
        ratio = f" ({median / share[index]:.0%} of the per-core share of the published figure)" if share else ""
        findings.append(Finding(
            id="ND-PERF-001", category="hardware-error", severity=SEVERITY_INFO,
            title=f"{label}: {median:.3g} {unit} median over {len(values)} NeuronCore(s){ratio}",
            evidence={"min": min(values.values()), "median": median, "max": max(values.values()),
                      "published_share": share[index] if share else None}))
    return findings


def _perf_summary(ctx: RuleContext) -> str:
    return "every NeuronCore ran the matmul and the copy"


RULE_SET = RuleSet(rules=(), findings=(
    FindingSpec("ND-PERF-001", "hardware-error", SEVERITY_INFO,
                "each measure's median over the cores, and its ratio to the published per-core share"),
    FindingSpec("ND-PERF-002", "hardware-error", SEVERITY_WARNING,
                "a NeuronCore under half the other cores' matmul or copy speed"),
    FindingSpec("ND-PERF-003", "compile-failure", SEVERITY_ERROR,
                "the performance canary failed on a NeuronCore (category by cause)"),
))
CHECK = Check("probe-perf", "Performance canary", (RULE_SET,), _perf_summary)
