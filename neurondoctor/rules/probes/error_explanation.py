"""What a compiler, runtime or framework error text means and the ways out (pure, no I/O).

The text is a log-neuron-cc.txt, a traceback pasted on stdin or a runtime log. It is matched against the error
signatures of the release data (`manifests/error-signatures.json`, shared with the canary) in file order, the
most specific first; compiler error codes (`NCC_EVRF001`) and "not supported" beside an `aten::` op name are the
fallbacks. For an operator the ways out are the three a porting engineer has: rewrite it (the op table's rewrite,
`manifests/op-support.json`), move it out of the compiled region so it runs on the CPU between compiled stages,
or a newer neuronx-cc that supports it (only when the release data records one; otherwise it says so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Optional

from packaging.version import InvalidVersion, Version

from neurondoctor.log_text import cut_lines
from neurondoctor.redaction import redact_secrets
from neurondoctor.release_data.probe_data import ErrorSignatures
from neurondoctor.rules.explain_readers import Clue, Message, read_message
from neurondoctor.rules.explain_readers.causes import Cause, cause_of, decisive_cause, first_cause, other_causes
from neurondoctor.rules.explain_readers.explain_causes import is_explain_cause
from neurondoctor.rules.probes.compiler_codes import compiler_code, compiler_codes_in, compiler_detail
from neurondoctor.rules.probes.runtime_status import runtime_status
from neurondoctor.rules.probes.signature_match import SignatureMatch, match_signature, match_signature_loosely

# Every pattern runs in linear time on any text, so a crafted log cannot stall `explain` (neurondoctor/log_text.py):
# no two parts of one pattern can match the same characters, so a failed match never retries a run it has scanned
# (the HLO type stops at `{`, its layout at a space: `[^\s(]+(?:\{[^}]*\})?` made `%a = {{{…` quadratic, minutes for
# 2 MiB), no pattern crosses a line, and lines are cut at log_text.MAX_LINE before any pattern sees them.
# A leading `\b` keeps `re` from skipping ahead to the literal (60 ns a character on 8 MiB): the boundary is checked on
# each hit instead (`_at_word_start`).
_ATEN_OP = re.compile(r"aten::([A-Za-z0-9_]+)")
_HLO_INSTRUCTION = re.compile(r"%[\w.\-]+ = [^\s({]+(?:\{[^}\s]*\})? ([a-z][a-z0-9\-]*)\(")
_COMPILER_VERSION = re.compile(r"(?:NeuronX Compiler version |neuronx-cc[= ]=?)(\d+\.\d+\.\d+(?:\.\d+)?)")


def answer_fields(name: str) -> dict[str, Optional[str]]:
    """`category` and `cause` of an answer: a finding category is both; a cause of explain's own
    (explain_readers/explain_causes.py) has no category."""
    return {"category": None if is_explain_cause(name) else name, "cause": name}


@dataclass(frozen=True)
class Explanation:
    category: str  # the answer: a finding category, or a cause of explain's own (to_json tells them apart)
    why: str
    matched: str  # the input line that was recognised, its secrets redacted
    source: str
    op: Optional[str] = None
    variant: Optional[str] = None
    compiler: Optional[str] = None  # the neuronx-cc version the text names
    ways_out: list[str] = field(default_factory=list)
    detail: Optional[str] = None  # a runtime log's number that matters: what ran out, and by how much
    kind: Optional[str] = None  # the kind of message the cause was read from (`pip`, `Python traceback`, …)
    facts: dict[str, str] = field(default_factory=dict)  # what its reader extracted (explain_readers/clue.py)
    # the other failures the text names: category, cause, why, line
    also: list[dict[str, Optional[str]]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {**answer_fields(self.category), "op": self.op, "variant": self.variant, "ways_out": list(self.ways_out),
                "why": self.why, "matched": self.matched, "compiler": self.compiler, "source": self.source,
                "detail": self.detail, "recognised": True, "kind": self.kind,
                "facts": {name: redact_secrets(value) for name, value in self.facts.items()},
                "also": [dict(other) for other in self.also]}


def _line_with(text: str, needle: str) -> str:
    """The first line holding the needle, cut and with its secrets redacted: the answer echoes the user's log."""
    return redact_secrets(next((line.strip() for line in text.splitlines() if needle in line), needle)[:300])


def _at_word_start(text: str, match: re.Match[str]) -> bool:
    return match.start() == 0 or not (text[match.start() - 1].isalnum() or text[match.start() - 1] == "_")


def _operator(text: str) -> Optional[str]:
    """The op the text names: an `aten::` op, else the first unsupported HLO instruction (`hlo:dynamic-slice`)."""
    aten = next((match for match in _ATEN_OP.finditer(text) if _at_word_start(text, match)), None)
    if aten:
        return f"aten::{aten.group(1)}"
    hlo = _HLO_INSTRUCTION.search(text)
    return f"hlo:{hlo.group(1)}" if hlo else None


def _variant(text: str, op: Optional[str]) -> Optional[str]:
    """`bool mask` for a masked index or assignment, `accumulate=True` for `index_put_(…, accumulate=True)`, or
    both (the op table keys variants apart: `aten::index_put (bool mask)`)."""
    if op is None or not op.startswith("aten::"):
        return None
    parts = (["bool mask"] if re.search(r"\bbool\b|\bmask\b", text) else []) + (
        ["accumulate=True"] if "accumulate=True" in text else [])
    return ", ".join(parts) or None


def _op_entry(op: Optional[str], variant: Optional[str], op_support: dict[str, dict[str, Any]]
              ) -> Optional[dict[str, Any]]:
    """The op table's entry: a variant's key, the op's own, or the op without its in-place `_`."""
    if op is None:
        return None
    names = [op, op.rstrip("_")] if op.endswith("_") else [op]
    parts = variant.split(", ") if variant else []
    keys = [f"{name} ({part})" for name in names for part in parts] + names
    return next((op_support[key] for key in keys if isinstance(op_support.get(key), dict)), None)


def _at_least(version: str, floor: str) -> bool:
    try:
        return Version(version) >= Version(floor)
    except InvalidVersion:
        return False


def _operator_ways(op: str, entry: Optional[dict[str, Any]], compiler: Optional[str],
                   fixes: list[dict[str, Any]]) -> list[str]:
    rewrite = (f"replace it: {entry['rewrite']} ({entry.get('source', 'op-support.json')})"
               if entry and entry.get("rewrite") else
               f"replace {op} with operations the compiler lowers; `neurondoctor probe ops MODEL_SPEC` lists which ops "
               "of your model are known to run on the device")
    move = ("move it out of the compiled region so it runs on the CPU between compiled stages: with "
            "torch_neuronx.trace, trace the parts before and after it as two models and call it on CPU tensors in "
            "between; on the XLA training path, compute it on `.cpu()` tensors outside the step (each such move is a "
            "device-to-host copy, so keep it out of the inner loop)")
    fixed = [fix for fix in fixes if fix.get("op") == op]
    if fixed:
        first = fixed[-1]
        if compiler and _at_least(compiler, str(first["compiler"])):
            newer = (f"not a newer neuronx-cc: {first['compiler']} (Neuron {first['release']}) already lowers it "
                     f"({first['source']}) and this log names {compiler}, so the cause is the op's arguments or "
                     "shapes: rewrite it or move it out as above")
        else:
            newer = (f"a newer neuronx-cc: {first['compiler']} (Neuron {first['release']}) adds it "
                     f"({first['source']})" + (f"; this log names {compiler}" if compiler else ""))
    else:
        newer = ("a newer neuronx-cc: the release data records no neuronx-cc release that adds " + op
                 + (f" (this log names {compiler})" if compiler else "")
                 + "; check release-notes/components/compiler.rst of the releases after yours")
    return [rewrite, move, newer]


def _unsupported(text: str, op: Optional[str], signatures: ErrorSignatures
                 ) -> Optional[tuple[list[str], set[str]]]:
    """The compiler's error codes and the unsupported-operator ones among them, when the text says an operator
    cannot be lowered (a code of the table, or "not supported" beside an op); None otherwise."""
    codes = sorted(set(compiler_codes_in(text)))
    unsupported = set(codes) & signatures.compiler_unsupported_codes
    if not unsupported and not (op and "not supported" in text.lower()):
        return None
    return codes, unsupported


MAX_ALSO = 5


def explain_text(text: str, signatures: ErrorSignatures, op_support: dict[str, dict[str, Any]],
                 compiler_fixes: Optional[list[dict[str, Any]]] = None) -> Optional[Explanation]:
    """The explanation of an error text, or None when nothing in it is recognised."""
    return explain_message(text, signatures, op_support, compiler_fixes)[0]


def explain_message(text: str, signatures: ErrorSignatures, op_support: dict[str, dict[str, Any]],
                    compiler_fixes: Optional[list[dict[str, Any]]] = None
                    ) -> tuple[Optional[Explanation], list[Clue]]:
    """The explanation of an error text (None when nothing in it is recognised) and every clue the readers found.

    The order of evidence, most specific first: a cause the text states in so many words (the loader naming the C
    library version a binary needs: explain_readers/causes.py, Cause.decisive), a signature of the release data as
    the text holds it, a runtime status, a documented compiler code, an operator the compiler cannot lower; then a
    signature in the normalised text (any case, spacing, wrapping, prefixes: explain_readers/message.py); then the
    readers' facts (explain_readers/causes.py); a banner only when nothing else explains the text. The other failures
    the text names are listed in `also`."""
    text = cut_lines(text)
    message = Message.of(text)
    clues = read_message(message)
    decisive = decisive_cause(clues)
    explanation = _from_cause(*decisive) if decisive else _exact(text, signatures, op_support, compiler_fixes)
    if explanation is None:
        loose = match_signature_loosely(message, signatures)
        if loose is not None:
            explanation = _from_signature(message.text, loose[0], loose[1], None)
        else:
            explanation = _by_facts_then_banner(text, message, clues, signatures)
    if explanation is None:
        return None, clues
    also = [{**answer_fields(cause.category), "why": cause.why, "matched": redact_secrets(clue.line[:300])}
            for clue, cause in other_causes(clues, explanation.category)][:MAX_ALSO]
    reading = next((clue for clue in clues if (cause := cause_of(clue)) and cause.category == explanation.category),
                   None)
    return replace(explanation, also=also, kind=explanation.kind or (reading.reader if reading else None),
                   facts=explanation.facts or (dict(reading.facts) if reading else {})), clues


def _by_facts_then_banner(text: str, message: Message, clues: list[Clue], signatures: ErrorSignatures
                          ) -> Optional[Explanation]:
    """A specific cause the readers found, else a banner, else a cause that many failures print (a compiler's
    non-zero exit, a rendezvous timeout)."""
    chosen = first_cause(clues, specific=True)
    if chosen is not None:
        return _from_cause(*chosen)
    banner = match_signature(text, signatures, fallback=True)
    if banner is not None:
        return _from_signature(text, banner, _line_with(text, banner.signature.pattern), None)
    loose = match_signature_loosely(message, signatures, fallback=True)
    if loose is not None:
        return _from_signature(message.text, loose[0], loose[1], None)
    chosen = first_cause(clues)
    return _from_cause(*chosen) if chosen is not None else None


def _from_signature(text: str, found: SignatureMatch, matched: str, compiler: Optional[str]) -> Explanation:
    detail = redact_secrets(found.detail.what) if found.detail is not None else None
    return Explanation(category=found.category, why=found.why, matched=redact_secrets(matched.strip()[:300]),
                       source=found.signature.source, compiler=compiler, ways_out=list(found.ways), detail=detail)


def _from_cause(clue: Clue, cause: Cause) -> Explanation:
    return Explanation(category=cause.category, why=cause.why, matched=redact_secrets(clue.line[:300]),
                       source=cause.source, ways_out=list(cause.ways_out), kind=clue.reader, facts=dict(clue.facts))


def _exact(text: str, signatures: ErrorSignatures, op_support: dict[str, dict[str, Any]],
           compiler_fixes: Optional[list[dict[str, Any]]]) -> Optional[Explanation]:
    """The explanation by the release data's signatures, runtime statuses, compiler codes and operators, as the text
    holds them; None when none of them is in it (banners are left to the caller)."""
    compiler_match = _COMPILER_VERSION.search(text)
    compiler = compiler_match.group(1) if compiler_match else None
    op = _operator(text)
    found = match_signature(text, signatures)
    status = runtime_status(text, signatures.runtime_statuses) if found is None else None
    documented = compiler_code(text, signatures.compiler_codes, signatures.compiler_unsupported_codes) \
        if found is None and status is None else None
    unsupported_codes = _unsupported(text, op, signatures) if (found, status, documented) == (None, None, None) \
        else None
    if found is None and status is None and documented is None and unsupported_codes is None:
        return None
    detail: Optional[str] = None
    if found is not None:
        category, why, source = found.category, found.why, found.signature.source
        matched, ways = _line_with(text, found.signature.pattern), list(found.ways)
        if found.detail is not None:
            detail = redact_secrets(found.detail.what)
    elif status is not None:
        known, line = status
        category, why, source, ways = known.category, f"{known.why} ({known.name}, {known.code})", \
            f"{known.source}: {known.name} = {known.code}", list(known.ways_out)
        matched = redact_secrets(line.strip()[:300])
    elif documented is not None:
        entry, line = documented
        category, why, source, ways = entry.category, f"{entry.why} ({entry.code})", \
            f"{entry.source}: {entry.code}", list(entry.ways_out)
        matched = redact_secrets(line.strip()[:300])
        detail = compiler_detail(text) if category == "resource" else None
    else:
        codes, unsupported = unsupported_codes or ([], set())
        needle = sorted(unsupported)[0] if unsupported else "not supported"
        category, why = "unsupported-op", "the compiler cannot lower an operator" + (
            f" ({', '.join(codes)})" if codes else "")
        matched = _line_with(text, needle) if unsupported else _line_with(text, op or "not supported")
        source, ways = "compiler/error-codes (NCC_EVRF001, NCC_EUOC002)", []
    variant = _variant(text, op) if category in ("unsupported-op", "cpu-fallback") else None
    if category in ("unsupported-op", "cpu-fallback") and op:
        ways = _operator_ways(op, _op_entry(op, variant, op_support), compiler, compiler_fixes or []) + ways
    return Explanation(category=category, why=why, matched=matched, source=source,
                       op=op if category in ("unsupported-op", "cpu-fallback") else None, variant=variant,
                       compiler=compiler, ways_out=ways, detail=detail)
