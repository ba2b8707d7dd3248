"""Reports of a generated fleet for `fleet summarize` (tests and scripts/bench_fleet.py): one real `check --json`
of a healthy fixture trn1.32xlarge host with a real 2.31.1 venv, copied per node with its own hostname, instance
id and time, and the planted differences a test names."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.host_fixture import HostSpec, build_host


def base_report(directory: Path, venv: Path) -> dict[str, Any]:
    root = build_host(directory / "fleet-node", HostSpec(instance_type="trn1.32xlarge"))
    done = subprocess.run([sys.executable, "-m", "neurondoctor", "check", "--root", str(root), "--venv", str(venv),
                           "--json"], capture_output=True, text=True, timeout=120)
    report: dict[str, Any] = json.loads(done.stdout)
    assert report["health"]["state"] == "ok", report["health"]
    return report


@dataclass
class Plan:
    """Which nodes differ, and how."""

    driver: dict[int, str] = field(default_factory=dict)  # node index -> aws-neuronx-dkms version
    torch: dict[int, str] = field(default_factory=dict)
    unknown: tuple[int, ...] = ()
    unhealthy: dict[int, str] = field(default_factory=dict)  # node index -> finding id

    @staticmethod
    def name(index: int) -> str:
        return f"trn1-{index:04d}"


def node_reports(base: dict[str, Any], count: int, plan: Plan) -> Iterator[dict[str, Any]]:
    for index in range(count):
        report = copy.deepcopy(base)
        report["node"] = {**report["node"], "hostname": Plan.name(index), "instance_id": f"i-{index:017x}"}
        report["generated_at"] = f"2026-12-01T{10 + index // 3600 % 10:02d}:{index // 60 % 60:02d}:{index % 60:02d}Z"
        if index in plan.driver:
            report["release"]["host_packages"]["aws-neuronx-dkms"] = plan.driver[index]
        if index in plan.torch:
            report["environments"][0]["torch"] = plan.torch[index]
        if index in plan.unknown:
            report["health"] = {"state": "unknown", "reasons": ["Driver: could not read /proc/modules"]}
        if index in plan.unhealthy:
            finding = {"id": plan.unhealthy[index], "category": "driver-not-loaded", "severity": "error",
                       "title": "the Neuron driver is installed and built but the `neuron` module is not loaded",
                       "detail": "", "evidence": {}, "fix": ["sudo modprobe neuron"], "docs": []}
            report["findings"] = [*report["findings"], finding]
            report["health"] = {"state": "unhealthy", "reasons": [f"{finding['id']} {finding['title']}"]}
        yield report
