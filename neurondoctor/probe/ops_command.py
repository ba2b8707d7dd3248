"""`neurondoctor probe ops MODEL_SPEC --mode inventory`: which of a model's ops run on CPU on Neuron.

Exit codes (ARCHITECTURE.md §7): 0 no errors, 1 errors (an op neuronx-cc cannot lower), 2 the model spec is
bad (syntax error, missing factory, the factory or the step raised, or it hangs past --timeout), 3 the probe
itself failed, 4 skipped (no torch in the target environment).
"""

from __future__ import annotations

import sys
import time
from typing import Any, Optional

from neurondoctor import __version__
from neurondoctor.facts import Facts, HostFacts
from neurondoctor.probe.op_classification import Inventory, classify, load_op_support
from neurondoctor.probe.probe_runner import ProbeOutcome, run_probe
from neurondoctor.report.model import (
    EXIT_BAD_INPUT,
    EXIT_INTERNAL,
    STATUS_ERROR,
    STATUS_OK,
    STATUS_WARNING,
    CheckResult,
    Report,
    render_json,
)

EXIT_SKIPPED = 4
MODES = ("inventory", "xla")
SCRIPTS_BY_MODE = {"inventory": "op_inventory.py", "xla": "xla_fallbacks.py"}
DEFAULT_TIMEOUT = 600.0


def default_python(environ: dict[str, str]) -> str:
    """The active environment's interpreter, else the first discovered Neuron venv (DLAMI, ~/aws_neuron_venv_*),
    else `python3` — the same discovery `check` uses."""
    from pathlib import Path

    from neurondoctor.host.rootfs import RootFS
    from neurondoctor.pyenv.discovery import discover_environments

    for found in discover_environments(RootFS("/"), environ):
        interpreter = Path(found.path) if found.live else Path(found.path) / "bin" / "python"
        if interpreter.exists():
            return str(interpreter)
    return "python3"


def _error(message: str, code: int) -> int:
    sys.stderr.write(f"error: {message}\n")
    return code


def _outcome_error(outcome: ProbeOutcome, spec: str) -> Optional[int]:
    """An exit code and a one-line message when the probe gave no inventory."""
    if outcome.timed_out:
        return _error(f"{spec}: the model step {outcome.failure}", EXIT_BAD_INPUT)
    document = outcome.document
    if document is None:
        return _error(f"the probe failed: {outcome.failure}", EXIT_INTERNAL)
    if document.get("status") == "skipped":
        sys.stderr.write(f"skipped: {document.get('message')}\n")
        return EXIT_SKIPPED
    if document.get("status") == "error":
        stage = {"load": "could not load the model", "factory": "the factory raised",
                 "step": "the training step raised", "usage": "bad usage"}.get(str(document.get("stage")), "failed")
        where = f" at {document['where']}" if document.get("where") else ""
        return _error(f"{spec}: {stage}: {document.get('error_type')}: {document.get('message')}{where}",
                      EXIT_BAD_INPUT)
    return None


def build_report(spec: str, python: str, document: dict[str, Any], inventory: Inventory, duration_ms: float) -> Report:
    statuses = {finding.severity for finding in inventory.findings}
    status = STATUS_ERROR if "error" in statuses else STATUS_WARNING if "warning" in statuses else STATUS_OK
    check = CheckResult("probe-ops", "Op inventory", status, duration_ms, inventory.findings)
    return Report(
        tool_version=__version__, generated_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), root="/",
        facts=Facts(host=HostFacts(root="/")), environments=[], latest_release=None, checks=[check],
        duration_ms=duration_ms,
        probe={"mode": document.get("mode"), "model": spec, "python": python, "torch": document.get("torch"),
               "torch_xla": document.get("torch_xla"), "pjrt_device": document.get("pjrt_device"),
               "ops": [vars(verdict) for verdict in inventory.verdicts],
               "unknown": [verdict.op for verdict in inventory.by_status("unknown")]},
    )


def render_inventory_text(report: Report) -> str:
    probe = report.probe or {}
    ops = probe.get("ops", [])
    lines = [f"neurondoctor {report.tool_version} · probe ops {probe.get('model')} · torch {probe.get('torch')} "
             f"({probe.get('python')})", ""]
    for finding in report.findings:
        mark = {"error": "✗", "warning": "!", "info": "•"}[finding.severity]
        lines.append(f"{mark} {finding.id} {finding.title}")
        if finding.detail:
            lines.append(f"    {finding.detail}")
    counted = {status: sum(1 for op in ops if op["status"] == status) for status in
               ("supported", "cpu-fallback", "unsupported", "sync", "unknown")}
    if probe.get("mode") == "xla":
        lines += ["", f"{len(ops)} op(s) fell back to the CPU on the XLA device "
                  f"(PJRT_DEVICE={probe.get('pjrt_device')}, torch-xla {probe.get('torch_xla')})"]
    else:
        lines += ["", f"{len(ops)} distinct aten ops in forward + backward + optimizer step: "
                  + ", ".join(f"{count} {status}" for status, count in counted.items() if count)]
    unknown = probe.get("unknown", [])
    if unknown and probe.get("mode") != "xla":
        lines.append("no data (unknown, not assumed fine): " + ", ".join(unknown))
    comparison = probe.get("comparison") or {}
    if comparison.get("available"):
        lines.append("against the CPU inventory's prediction: predicted but not observed: "
                     + (", ".join(comparison["predicted_not_observed"]) or "none")
                     + "; observed but not predicted: " + (", ".join(comparison["observed_not_predicted"]) or "none"))
    return "\n".join(lines) + "\n"


def pjrt_device(environ: dict[str, str]) -> str:
    """PJRT_DEVICE as set, else NEURON where Neuron devices exist, else CPU (the XLA frontend's own fallbacks)."""
    import os

    if environ.get("PJRT_DEVICE"):
        return environ["PJRT_DEVICE"]
    return "NEURON" if os.path.exists("/dev/neuron0") else "CPU"


def run_probe_ops(spec: str, python: Optional[str], mode: str, as_json: bool, timeout: float,
                  environ: dict[str, str]) -> int:
    if mode not in MODES:
        return _error(f"--mode {mode}: choose {' or '.join(MODES)}", EXIT_BAD_INPUT)
    interpreter = python or default_python(environ)
    try:
        support = load_op_support()
    except (OSError, ValueError) as error:
        return _error(f"op data unusable: {error}", EXIT_INTERNAL)
    environment = dict(environ, PJRT_DEVICE=pjrt_device(environ)) if mode == "xla" else dict(environ)
    outcome = run_probe(interpreter, SCRIPTS_BY_MODE[mode], [spec], timeout=timeout, env=environment)
    code = _outcome_error(outcome, spec)
    if code is not None or outcome.document is None:
        return code if code is not None else EXIT_INTERNAL
    inventory = classify(list(outcome.document.get("ops", [])), support, spec,
                         measured=mode == "xla")
    report = build_report(spec, interpreter, outcome.document, inventory, outcome.duration_s * 1000)
    if mode == "xla" and report.probe is not None:
        predicted = run_probe(interpreter, SCRIPTS_BY_MODE["inventory"], [spec], timeout=timeout)
        report.probe["comparison"] = compare_with_inventory(predicted, inventory, support)
    sys.stdout.write(render_json(report) + "\n" if as_json else render_inventory_text(report))
    return report.exit_code()


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
