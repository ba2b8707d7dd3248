"""`neurondoctor probe shapes MODEL_SPEC`: how many graphs a model's step compiles as its input shapes vary.

Runs scripts/xla_shapes.py in the target interpreter on an XLA device (PJRT_DEVICE as set, else the Neuron device
where one exists, else the CPU) and judges the counts (rules/probes/shapes.py). Exit codes as `probe ops`: 2 for a
model that cannot be loaded or stepped, 4 without torch-xla.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Optional

from neurondoctor.actions.probe.ops_command import DEFAULT_TIMEOUT, pjrt_device, raise_for_outcome
from neurondoctor.actions.probe.probe_runner import default_python, probe_health, run_probe
from neurondoctor.report.probe_report import ProbeReport, new_probe_report
from neurondoctor.rules.probes.shapes import judge_shapes
from neurondoctor.strict_numbers import json_count


@dataclass
class ProbeShapesOptions:
    model_spec: str
    python: Optional[str] = None
    timeout: float = DEFAULT_TIMEOUT
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    progress: Optional[Callable[[str], None]] = None  # what the probe is doing, for the person waiting


def run_probe_shapes(options: ProbeShapesOptions) -> ProbeReport:
    interpreter = options.python or default_python(options.environ)
    environment = {**options.environ, "PJRT_DEVICE": pjrt_device(options.environ)}
    outcome = run_probe(interpreter, "xla_shapes.py", [options.model_spec], timeout=options.timeout,
                        env=environment, progress=options.progress)
    document = raise_for_outcome(outcome, options.model_spec)
    findings = judge_shapes(document, options.model_spec)
    details = {"mode": "shapes", "model": options.model_spec, "python": interpreter, "torch": document.get("torch"),
               "torch_xla": document.get("torch_xla"), "pjrt_device": document.get("pjrt_device"),
               "shapes": document.get("shapes", []),
               "graphs": sum(json_count(run.get("graphs")) or 0 for run in document.get("shapes", [])
                             if isinstance(run, dict))}
    return new_probe_report("shapes", interpreter, findings, probe_health(findings), outcome.duration_s * 1000,
                            details)
