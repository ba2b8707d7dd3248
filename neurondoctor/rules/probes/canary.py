"""Judges a canary run (pure): a failed stage is classified by the error signatures in the release data; a run
that finished is judged by its output against the CPU and its save/load round trip.

Compiler errors are classified by their `NCC_…` code (the unsupported-operator codes are data too); runtime and
import errors by the messages the runtime and the framework print.
"""

from __future__ import annotations

from typing import Any

from neurondoctor.log_text import cut_lines
from neurondoctor.release_data.probe_data import ErrorSignatures
from neurondoctor.rules.check import Check, FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_ERROR, Finding
from neurondoctor.rules.fix import Fix, command
from neurondoctor.rules.probes.compiler_codes import compiler_code, compiler_codes_in
from neurondoctor.rules.probes.runtime_status import runtime_status
from neurondoctor.rules.probes.signature_match import match_signature


def classify_failure(stage: str, message: str, signatures: ErrorSignatures) -> tuple[str, str]:
    """(category, why) for a failed canary stage (its message's lines cut as explain cuts a log's: log_text)."""
    message = cut_lines(message)
    found = match_signature(message, signatures)
    if found is not None:
        return found.category, found.why
    status = runtime_status(message, signatures.runtime_statuses)
    if status is not None:  # `nrt_execute status=1201`: the runtime's own word, before any guess from the stage
        return status[0].category, f"{status[0].why} ({status[0].name}, {status[0].code})"
    documented = compiler_code(message, signatures.compiler_codes, signatures.compiler_unsupported_codes)
    if documented is not None:  # `NCC_EOOM001`: the compiler's own word, from its error-code table
        return documented[0].category, f"{documented[0].why} ({documented[0].code})"
    codes = set(compiler_codes_in(message))
    named = ", ".join(sorted(codes)) or "see message"
    if stage == "compile" and (codes & signatures.compiler_unsupported_codes or "not supported" in message):
        return "unsupported-op", f"the compiler cannot lower an operator ({named})"
    banner = match_signature(message, signatures, fallback=True)
    if banner is not None:  # `An Internal Compiler Error has occurred`: only when nothing above explained it
        return banner.category, banner.why
    if stage == "compile":
        return "compile-failure", f"neuronx-cc failed ({named})"
    if stage == "import":
        return "broken-venv", "torch_neuronx does not import in this environment"
    if stage == "device":
        return "device-missing", "the model and its input could not be moved to the neuron device"
    return "compile-failure", "the compiled model failed to run"


def failure_findings(document: dict[str, Any], python: str, signatures: ErrorSignatures) -> list[Finding]:
    """ND-CAN-001 for a canary that stopped at a stage, in the category its message points to."""
    stage = str(document.get("stage"))
    message = str(document.get("message", ""))
    category, why = classify_failure(stage, message, signatures)
    return [Finding(id="ND-CAN-001", category=category, severity=SEVERITY_ERROR,
                    title=f"canary failed at {stage}: {why}",
                    detail=message.splitlines()[0][:500] if message else "",
                    evidence={"stage": stage, "error_type": document.get("error_type"), "message": message[:2000],
                              "python": python},
                    fix=Fix([command("neurondoctor", "check", "--python", python)] if stage == "import" else []))]


def result_findings(document: dict[str, Any]) -> list[Finding]:
    """ND-CAN-002/003 for a canary that ran but whose output is wrong or changed by save/load."""
    findings = []
    native = document.get("path") == "native"
    runs = [("matches_cpu", "max_abs_diff",
             "the model's eager output on the neuron device" if native else "the traced model's output")]
    if native:
        runs.append(("compiled_matches_cpu", "compiled_max_abs_diff",
                     "the torch.compile(backend='neuron') output"))
    for flag, difference, what in runs:
        if document.get(flag) is False:
            findings.append(Finding(id="ND-CAN-002", category="compile-failure", severity=SEVERITY_ERROR,
                                    title=f"{what} differs from the CPU output (max abs diff "
                                          f"{document.get(difference):.3g} beyond {document.get('tolerance')})",
                                    evidence={"max_abs_diff": document.get(difference),
                                              "tolerance": document.get("tolerance"), "path": document.get("path")}))
    if document.get("roundtrip_matches") is False:
        findings.append(Finding(id="ND-CAN-003", category="compile-failure", severity=SEVERITY_ERROR,
                                title="torch.jit.save/load round trip changed the model's output"))
    return findings


def _canary_summary(ctx: RuleContext) -> str:
    return "the canary compiled, ran and matched the CPU"


RULE_SET = RuleSet(
    rules=(),
    findings=(
        FindingSpec("ND-CAN-001", "compile-failure", SEVERITY_ERROR,
                    "the canary failed at import, compile, run or round trip (category by cause)"),
        FindingSpec("ND-CAN-002", "compile-failure", SEVERITY_ERROR, "the canary's output differs from the CPU's"),
        FindingSpec("ND-CAN-003", "compile-failure", SEVERITY_ERROR, "torch.jit.save/load changed the output"),
    ),
)
CHECK = Check("probe-canary", "Canary", (RULE_SET,), _canary_summary)
