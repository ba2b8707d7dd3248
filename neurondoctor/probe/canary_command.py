"""`neurondoctor probe canary`: does this environment's torch-neuronx compile and run on a NeuronCore?

Failures are classified by stage and message: import errors are explained by `check` on the same interpreter;
compiler errors by their `NCC_…` code (NCC_EVRF001/NCC_EUOC002: an unsupported operator, compiler/error-codes);
runtime errors by the runtime's own strings (nrt-ts: `NeuronCore(s) not available`, `compatibility id`, …).
Exit codes: 0 passed, 1 failed, 2 bad usage, 3 the probe itself failed, 4 skipped (no device / no torch-neuronx).
"""

from __future__ import annotations

import re
import sys
import tempfile
import time
from typing import Any, Optional

from neurondoctor import __version__
from neurondoctor.facts import Facts, HostFacts
from neurondoctor.host.neuron_devices import read_device_nodes
from neurondoctor.host.rootfs import RootFS
from neurondoctor.probe.probe_runner import run_probe
from neurondoctor.report.model import (
    EXIT_INTERNAL,
    STATUS_ERROR,
    STATUS_OK,
    CheckResult,
    Report,
    render_json,
)
from neurondoctor.rules.finding import SEVERITY_ERROR, Finding

EXIT_SKIPPED = 4
_NCC_CODE = re.compile(r"NCC_[A-Z]{4}\d{3}")
UNSUPPORTED_CODES = {"NCC_EVRF001", "NCC_EUOC002"}
# (pattern in the message, category, why) — nrt-ts, gh#655, deploy/troubleshooting.rst, train-ts.
FAILURE_PATTERNS = (
    ("NeuronCore(s) not available", "cores-busy", "another process holds the NeuronCores"),
    ("Unable to determine Neuron Driver version", "driver-missing", "the Neuron driver is not installed"),
    ("compatibility id", "driver-runtime-mismatch", "the runtime needs a newer (or reloaded) driver"),
    ("No neuron device available", "device-missing", "no Neuron device is visible (a container without --device?)"),
    ("NEFF version", "runtime-compiler-mismatch", "the runtime cannot load what this compiler emitted"),
    ("undefined symbol", "stock-torch-conflict", "torch does not match the torch torch-neuronx is built for"),
    ("WRONG PACKAGE", "wrong-pip-index", "a PyPI placeholder instead of the Neuron package"),
    ("Unknown flags in XLA_FLAGS", "framework-pin-mismatch", "libneuronxla from another release (gh#1012)"),
    ("IrValue", "framework-pin-mismatch", "TensorFlow or JAX beside torch-xla"),
)


def classify_failure(stage: str, message: str) -> tuple[str, str]:
    """(category, why) for a failed canary stage."""
    for pattern, category, why in FAILURE_PATTERNS:
        if pattern in message:
            return category, why
    if stage == "compile":
        codes = set(_NCC_CODE.findall(message))
        named = ", ".join(sorted(codes)) or "see message"
        if codes & UNSUPPORTED_CODES or "not supported" in message:
            return "unsupported-op", f"the compiler cannot lower an operator ({named})"
        return "compile-failure", f"neuronx-cc failed ({named})"
    if stage == "import":
        return "broken-venv", "torch_neuronx does not import in this environment"
    return "compile-failure", "the compiled model failed to run"


def _findings_for_failure(document: dict[str, Any], python: str) -> list[Finding]:
    stage = str(document.get("stage"))
    message = str(document.get("message", ""))
    category, why = classify_failure(stage, message)
    findings = [Finding(id="ND-CAN-001", category=category, severity=SEVERITY_ERROR,
                        title=f"canary failed at {stage}: {why}",
                        detail=message.splitlines()[0][:500] if message else "",
                        evidence={"stage": stage, "error_type": document.get("error_type"), "message": message[:2000],
                                  "python": python},
                        fix=[f"neurondoctor check --python {python}"] if stage == "import" else [])]
    if stage == "import":
        from neurondoctor.check_run import CheckOptions, run_check

        explained = run_check(CheckOptions(pythons=[python]))
        findings += [finding for finding in explained.findings if finding.severity == SEVERITY_ERROR]
    return findings


def _findings_for_result(document: dict[str, Any]) -> list[Finding]:
    findings = []
    if document.get("matches_cpu") is False:
        findings.append(Finding(id="ND-CAN-002", category="compile-failure", severity=SEVERITY_ERROR,
                                title=f"the traced model's output differs from the CPU output (max abs diff "
                                      f"{document.get('max_abs_diff'):.3g} beyond {document.get('tolerance')})",
                                evidence={key: document.get(key) for key in ("max_abs_diff", "tolerance")}))
    if document.get("roundtrip_matches") is False:
        findings.append(Finding(id="ND-CAN-003", category="compile-failure", severity=SEVERITY_ERROR,
                                title="torch.jit.save/load round trip changed the model's output"))
    return findings


def render_canary_text(report: Report) -> str:
    probe = report.probe or {}
    lines = [f"neurondoctor {report.tool_version} · probe canary · {probe.get('python')}", ""]
    if probe.get("status") == "ok":
        what = "compiled (--cpu-backend, no device run)" if probe.get("cpu_backend") else "compiled and ran"
        lines.append(f"[✓] canary {what}: torch-neuronx {probe.get('torch_neuronx')}, compile "
                     f"{probe.get('compile_s')} s")
        latency = probe.get("latency_ms")
        if isinstance(latency, dict):
            lines.append(f"    latency p50 {latency['p50']} ms, p99 {latency['p99']} ms over {latency['runs']} runs; "
                         f"max abs diff vs CPU {probe.get('max_abs_diff'):.3g} (tolerance {probe.get('tolerance')}); "
                         f"save/load round trip {'ok' if probe.get('roundtrip_matches') else 'CHANGED the output'}")
    for finding in report.findings:
        lines.append(f"[✗] {finding.id} ({finding.category}) {finding.title}")
        if finding.detail:
            lines.append(f"    {finding.detail}")
        lines += [f"    Fix: {command}" for command in finding.fix]
    return "\n".join(lines) + "\n"


def run_canary(python: Optional[str], root: str, cpu_backend: bool, runs: int, as_json: bool, timeout: float,
               environ: dict[str, str]) -> int:
    from neurondoctor.probe.ops_command import default_python

    interpreter = python or default_python(environ)
    if not cpu_backend and not read_device_nodes(RootFS(root)):
        sys.stderr.write(f"skipped: no Neuron device under {root} (/dev/neuron*); `--cpu-backend` compiles "
                         "without one\n")
        return EXIT_SKIPPED
    arguments = ["--runs", str(runs)] + (["--cpu-backend"] if cpu_backend else [])
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="neurondoctor-canary-") as workdir:
        outcome = run_probe(interpreter, "canary.py", [*arguments, "--workdir", workdir], timeout=timeout,
                            env=dict(environ))
    document = outcome.document
    if document is None:
        sys.stderr.write(f"error: the canary {outcome.failure}\n")
        return EXIT_INTERNAL
    if document.get("status") == "skipped":
        sys.stderr.write(f"skipped: {document.get('message')}\n")
        return EXIT_SKIPPED
    findings = (_findings_for_failure(document, interpreter) if document.get("status") == "error"
                else _findings_for_result(document))
    status = STATUS_ERROR if findings else STATUS_OK
    report = Report(tool_version=__version__, generated_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    root=root, facts=Facts(host=HostFacts(root=root)), environments=[], latest_release=None,
                    checks=[CheckResult("probe-canary", "Canary", status, (time.perf_counter() - started) * 1000,
                                        findings)],
                    probe={**document, "python": interpreter})
    sys.stdout.write(render_json(report) + "\n" if as_json else render_canary_text(report))
    return report.exit_code()
