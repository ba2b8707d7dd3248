"""`neurondoctor probe canary`: does this environment's torch-neuronx compile and run on a NeuronCore?

The run is judged by rules/probes/canary.py; an import failure is explained further by `check` on the same
interpreter (its errors join the report). No device (unless `--cpu-backend`) or no torch-neuronx is Skipped
(exit 4); a canary that gave no document raises UserError with exit 3.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import field
from typing import Optional

from neurondoctor import exit_codes
from neurondoctor.actions.check.check_run import CheckOptions, run_check
from neurondoctor.actions.probe.probe_runner import default_python, probe_document, probe_health, run_probe
from neurondoctor.host.neuron_devices import read_device_nodes
from neurondoctor.host.rootfs import RootFS
from neurondoctor.records import dataclass
from neurondoctor.release_data.probe_data import load_error_signatures
from neurondoctor.report.model import ProbeReport, new_probe_report
from neurondoctor.rules.finding import SEVERITY_ERROR
from neurondoctor.rules.probes.canary import failure_findings, result_findings


@dataclass
class CanaryOptions:
    python: Optional[str] = None
    root: str = "/"
    cpu_backend: bool = False
    runs: int = 100
    timeout: float = 1800.0
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    progress: Optional[Callable[[str], None]] = None  # what the probe is doing, for the person waiting


def run_canary(options: CanaryOptions) -> ProbeReport:
    interpreter = options.python or default_python(options.environ)
    if not options.cpu_backend and not read_device_nodes(RootFS(options.root)):
        raise exit_codes.Skipped(f"no Neuron device under {options.root} (/dev/neuron*); `--cpu-backend` compiles "
                                 "without one")
    try:
        signatures = load_error_signatures()
    except (OSError, ValueError) as error:
        raise exit_codes.UserError(f"error signatures unusable: {error}", exit_codes.UNKNOWN) from error
    arguments = ["--runs", str(options.runs)] + (["--cpu-backend"] if options.cpu_backend else [])
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="neurondoctor-canary-") as workdir:
        outcome = run_probe(interpreter, "canary.py", [*arguments, "--workdir", workdir], timeout=options.timeout,
                            env=dict(options.environ), progress=options.progress)
    document = probe_document(outcome, "the canary")
    if document.get("status") == "error":
        findings = failure_findings(document, interpreter, signatures)
        if document.get("stage") == "import":
            explained = run_check(CheckOptions(pythons=[interpreter], environ=options.environ))
            findings += [finding for finding in explained.findings if finding.severity == SEVERITY_ERROR]
    else:
        findings = result_findings(document)
    return new_probe_report("canary", interpreter, findings, probe_health(findings),
                            (time.perf_counter() - started) * 1000, {**document, "python": interpreter})
