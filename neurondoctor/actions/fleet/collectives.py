"""`fleet check --collectives`: nccom-test all-reduce within each node and between node pairs (needs devices)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from neurondoctor.report.preflight import Preflight


def run_collectives(preflight: Preflight, environ: Mapping[str, str], deadline_s: float) -> dict[str, Any]:
    devices = {answer.name: len((answer.report.facts or {}).get("host", {}).get("snapshot", {}).get("device_nodes")
                                or []) if answer.report else 0 for answer in preflight.answers}
    if not any(devices.values()):
        return {"ran": False, "summary": "no Neuron device on any node: nothing was run"}
    return {"ran": False, "summary": "not built yet"}
