"""Classifies the ops a probe recorded against the op-support data (pure: the probe's op list in, findings out).

cpu-fallback ops are warnings with their rewrite; unsupported ops are errors; `.item()`/`bool()` syncs of the
model's forward and backward are host-sync warnings with the user's lines (optimizer step counters on the CPU are
left out by the probe); ops the data file does not list are reported as unknown, never as fine. An entry may say
what happens in its own words (`consequence`): a fused optimizer fails in torch before neuronx-cc sees it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from neurondoctor.rules.check import Check, FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from neurondoctor.strict_numbers import json_count


@dataclass
class OpVerdict:
    op: str
    count: int
    phases: dict[str, int]
    status: str
    rewrite: str = ""


@dataclass
class Inventory:
    verdicts: list[OpVerdict] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def by_status(self, status: str) -> list[OpVerdict]:
        return [verdict for verdict in self.verdicts if verdict.status == status]


# status -> (finding id, severity, category, consequence)
_BY_STATUS = {
    "cpu-fallback": ("ND-OP-001", SEVERITY_WARNING, "cpu-fallback",
                     "runs on the CPU on the Neuron XLA path: a device-to-host copy and a graph break"),
    "unsupported": ("ND-OP-002", SEVERITY_ERROR, "unsupported-op", "neuronx-cc cannot lower it: compilation fails"),
    "sync": ("ND-OP-003", SEVERITY_WARNING, "host-sync",
             "forces a device-to-host sync every step (a graph break on the XLA path, not a missing lowering)"),
}


SPARSE_KEY = "* (sparse)"  # op-support.json's entry for any op on a sparse tensor


def _sites(entry: dict[str, Any]) -> str:
    """` at model.py:42 (forward ×2), model.py:57 (backward)`: the user's lines a sync comes from."""
    sites = [site for site in entry.get("sites", []) if isinstance(site, dict) and site.get("where")]
    if not sites:
        return ""
    shown = [f"{site['where']} ({site.get('phase')}" + (f" ×{site['count']}" if (json_count(site.get("count")) or 1) > 1
                                                        else "") + ")" for site in sites[:4]]
    return " at " + ", ".join(shown) + (f" (+{len(sites) - 4})" if len(sites) > 4 else "")


def _site_advice(entry: dict[str, Any], known: dict[str, Any]) -> list[str]:
    """What the data file knows about the library lines a sync comes from (`known_sites`, by file name): a mask
    check inside transformers has its own way out."""
    sites = known.get("known_sites")
    if not isinstance(sites, dict):
        return []
    advice = []
    for name, about in sites.items():
        if isinstance(about, dict) and any(f"{name}:" in str(site.get("where", "")) for site in entry.get("sites", [])
                                           if isinstance(site, dict)):
            advice.append(f"{about.get('what', name)}: {about.get('rewrite', '')}")
    return advice


def _phases(phases: dict[str, int]) -> str:
    return ", ".join(f"{phase} ×{count}" for phase, count in phases.items())


def classify(ops: list[dict[str, Any]], support: dict[str, dict[str, Any]], model: str,
             measured: bool = False) -> Inventory:
    """Inventory ops are judged by the data file; measured XLA counters are fallbacks by definition (except
    the `.item()` sync), with the data file's rewrite when it has one."""
    inventory = Inventory()
    for entry in ops:
        name = str(entry.get("op"))
        known = dict(support.get(name) or (support.get(SPARSE_KEY, {}) if name.endswith(" (sparse)") else {}))
        if measured and known.get("status") != "sync":
            known["status"] = "cpu-fallback"
        verdict = OpVerdict(name, json_count(entry.get("count")) or 0, dict(entry.get("phases", {})),
                            str(known.get("status", "unknown")), str(known.get("rewrite", "")))
        inventory.verdicts.append(verdict)
        if verdict.status not in _BY_STATUS:
            continue
        finding_id, severity, category, consequence = _BY_STATUS[verdict.status]
        inventory.findings.append(Finding(
            id=finding_id,
            category=category,
            severity=severity,
            title=f"{name} ({known.get('what', name)}) {known.get('consequence', consequence)} — "
                  f"{_phases(verdict.phases)}{_sites(entry)}",
            detail="\n".join([*_site_advice(entry, known)] + ([f"Rewrite: {verdict.rewrite}"] if verdict.rewrite
                                                                 else [])),
            evidence={"model": model, "op": name, "count": verdict.count, "phases": verdict.phases,
                      "sites": entry.get("sites", []), "source": known.get("source", "")},
        ))
    return inventory


def _probe_summary(ctx: RuleContext) -> str:
    return "no op falls back to the CPU"


RULE_SET = RuleSet(
    rules=(),
    findings=tuple(FindingSpec(finding_id, category, severity, consequence)
                   for finding_id, severity, category, consequence in _BY_STATUS.values()),
)
CHECK = Check("probe-ops", "Op inventory", (RULE_SET,), _probe_summary)
