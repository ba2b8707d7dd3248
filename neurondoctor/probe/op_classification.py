"""Classifies the ops a probe recorded against `manifests/op-support.json` (pure: document in, findings out).

cpu-fallback ops are warnings with their rewrite; unsupported ops are errors; `.item()` syncs are info; ops the
data file does not list are reported as unknown, never as fine.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neurondoctor.release_data.catalog import bundled_manifest_dir
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_INFO, SEVERITY_WARNING, Finding

OP_SUPPORT_FILE = "op-support.json"


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


def load_op_support(directory: Path | None = None) -> dict[str, dict[str, Any]]:
    """The op table; raises OSError/ValueError with the file named when it is unreadable or malformed."""
    path = (directory or bundled_manifest_dir()) / OP_SUPPORT_FILE
    document = json.loads(path.read_text(encoding="utf-8"))
    ops = document.get("ops") if isinstance(document, dict) else None
    if not isinstance(ops, dict):
        raise ValueError(f"{path}: no `ops` table")
    return ops


def _phases(phases: dict[str, int]) -> str:
    return ", ".join(f"{phase} ×{count}" for phase, count in phases.items())


def classify(ops: list[dict[str, Any]], support: dict[str, dict[str, Any]], model: str,
             measured: bool = False) -> Inventory:
    """Inventory ops are judged by the data file; measured XLA counters are fallbacks by definition (except
    the `.item()` sync), with the data file's rewrite when it has one."""
    inventory = Inventory()
    for entry in ops:
        name = str(entry.get("op"))
        known = dict(support.get(name, {}))
        if measured and known.get("status") != "sync":
            known["status"] = "cpu-fallback"
        verdict = OpVerdict(name, int(entry.get("count", 0)), dict(entry.get("phases", {})),
                            str(known.get("status", "unknown")), str(known.get("rewrite", "")))
        inventory.verdicts.append(verdict)
        if verdict.status not in ("cpu-fallback", "unsupported", "sync"):
            continue
        severity, category, consequence = {
            "cpu-fallback": (SEVERITY_WARNING, "cpu-fallback",
                             "runs on the CPU on the Neuron XLA path: a device-to-host copy and a graph break"),
            "unsupported": (SEVERITY_ERROR, "unsupported-op", "neuronx-cc cannot lower it: compilation fails"),
            "sync": (SEVERITY_INFO, "cpu-fallback", "forces a device-to-host sync (not a missing lowering)"),
        }[verdict.status]
        inventory.findings.append(Finding(
            id={"cpu-fallback": "ND-OP-001", "unsupported": "ND-OP-002", "sync": "ND-OP-003"}[verdict.status],
            category=category,
            severity=severity,
            title=f"{name} ({known.get('what', name)}) {consequence} — {_phases(verdict.phases)}",
            detail=f"Rewrite: {verdict.rewrite}" if verdict.rewrite else "",
            evidence={"model": model, "op": name, "count": verdict.count, "phases": verdict.phases,
                      "source": known.get("source", "")},
            fix=[],
        ))
    return inventory
