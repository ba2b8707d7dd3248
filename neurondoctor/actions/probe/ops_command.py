"""`neurondoctor probe ops MODEL_SPEC`: which of a model's ops run on CPU on Neuron, as a library call.

`--mode inventory` records every aten op of one training step on CPU and classifies it (rules/probes/ops.py);
`--mode xla` runs the step on an XLA device and reads the ops that really fell back. Bad model specs (syntax
error, missing factory, the factory or the step raised, a hang past the timeout) raise UserError (exit 2); a
probe that gave no document raises UserError with exit 3; no torch is Skipped (exit 4).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

from neurondoctor import exit_codes
from neurondoctor.actions.probe.probe_runner import (
    ProbeOutcome,
    default_python,
    probe_document,
    probe_health,
    run_probe,
)
from neurondoctor.release_data.probe_data import load_op_support
from neurondoctor.report.probe_report import ProbeReport, new_probe_report
from neurondoctor.rules.probes.ops import Inventory, classify

MODES = ("inventory", "xla")
SCRIPTS_BY_MODE = {"inventory": "op_inventory.py", "xla": "xla_fallbacks.py"}
DEFAULT_TIMEOUT = 600.0
_STAGES = {"load": "could not load the model", "factory": "the factory raised", "step": "the training step raised",
           "usage": "bad usage"}


@dataclass
class ProbeOpsOptions:
    model_spec: str
    python: Optional[str] = None
    mode: str = "inventory"
    timeout: float = DEFAULT_TIMEOUT
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    progress: Optional[Callable[[str], None]] = None  # what the probe is doing, for the person waiting


def raise_for_outcome(outcome: ProbeOutcome, spec: str) -> dict[str, Any]:
    """The probe's document when it holds an inventory; raises the matching UserError otherwise."""
    if outcome.timed_out:
        raise exit_codes.UserError(f"{spec}: the model step {outcome.failure}")
    document = probe_document(outcome, "the probe failed:")
    if document.get("status") == "error":
        stage = _STAGES.get(str(document.get("stage")), "failed")
        where = f" at {document['where']}" if document.get("where") else ""
        raise exit_codes.UserError(f"{spec}: {stage}: {document.get('error_type')}: {document.get('message')}{where}")
    return document


def pjrt_device(environ: Mapping[str, str]) -> str:
    """PJRT_DEVICE as set, else NEURON where Neuron devices exist, else CPU (the XLA frontend's own fallbacks)."""
    if environ.get("PJRT_DEVICE"):
        return environ["PJRT_DEVICE"]
    return "NEURON" if os.path.exists("/dev/neuron0") else "CPU"


def compare_with_inventory(predicted: ProbeOutcome, measured: Inventory,
                           support: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """Where the CPU inventory's prediction and the XLA counters differ."""
    if predicted.document is None or predicted.document.get("status") != "ok":
        return {"available": False, "reason": predicted.failure or str((predicted.document or {}).get("message"))}
    expected = {str(entry["op"]) for entry in predicted.document.get("ops", [])
                if support.get(str(entry["op"]), {}).get("status") == "cpu-fallback"}
    observed = {verdict.op for verdict in measured.verdicts if verdict.status != "sync"}
    # Mask indexing reaches XLA as nonzero: count the prediction as met when nonzero fell back.
    via_nonzero = {op for op in expected if op.endswith("(bool mask)")} if "aten::nonzero" in observed else set()
    return {"available": True,
            "predicted_not_observed": sorted(expected - observed - via_nonzero),
            "observed_not_predicted": sorted(observed - expected)}


def run_probe_ops(options: ProbeOpsOptions) -> ProbeReport:
    if options.mode not in MODES:
        raise exit_codes.UserError(f"--mode {options.mode}: choose {' or '.join(MODES)}")
    interpreter = options.python or default_python(options.environ)
    try:
        support = load_op_support()
    except (OSError, ValueError) as error:
        raise exit_codes.UserError(f"op data unusable: {error}", exit_codes.UNKNOWN) from error
    environment = dict(options.environ)
    if options.mode == "xla":
        environment["PJRT_DEVICE"] = pjrt_device(options.environ)
    outcome = run_probe(interpreter, SCRIPTS_BY_MODE[options.mode], [options.model_spec], timeout=options.timeout,
                        env=environment, progress=options.progress)
    document = raise_for_outcome(outcome, options.model_spec)
    inventory = classify(list(document.get("ops", [])), support, options.model_spec,
                         measured=options.mode == "xla")
    details: dict[str, Any] = {
        "mode": document.get("mode"), "model": options.model_spec, "python": interpreter,
        "torch": document.get("torch"), "torch_xla": document.get("torch_xla"),
        "pjrt_device": document.get("pjrt_device"),
        "ops": [vars(verdict) for verdict in inventory.verdicts],
        "unknown": [verdict.op for verdict in inventory.by_status("unknown")]}
    if options.mode == "xla":
        predicted = run_probe(interpreter, SCRIPTS_BY_MODE["inventory"], [options.model_spec],
                              progress=options.progress, timeout=options.timeout)
        details["comparison"] = compare_with_inventory(predicted, inventory, support)
    return new_probe_report("ops", interpreter, inventory.findings, probe_health(inventory.findings),
                            outcome.duration_s * 1000, details)
