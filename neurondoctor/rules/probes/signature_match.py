"""The first error signature a text holds, and what its reader adds (pure): one matcher for `explain` and the
canary, so the two never disagree on what a message means.

Signatures are tried in file order (manifests/error-signatures.json: the most specific first). A signature with a
`detail` has its reader look further (rules/probes/runtime_log.py for the runtime's numbers,
rules/probes/import_errors.py for import-time failures); a reader may replace the signature's category when the text
shows which of its causes it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from neurondoctor.release_data.probe_data import ErrorSignature, ErrorSignatures
from neurondoctor.rules.probes.import_errors import IMPORT_READERS
from neurondoctor.rules.probes.runtime_log import RUNTIME_READERS
from neurondoctor.rules.probes.text_detail import TextDetail

READERS: dict[str, Callable[[str], Optional[TextDetail]]] = {**RUNTIME_READERS, **IMPORT_READERS}


@dataclass(frozen=True)
class SignatureMatch:
    signature: ErrorSignature
    category: str
    why: str
    detail: Optional[TextDetail]
    ways: tuple[str, ...]  # the reader's first; the signature's only while its category stands


def match_signature(text: str, signatures: ErrorSignatures, fallback: bool = False) -> Optional[SignatureMatch]:
    """The first signature in the text with its reader's detail, or None when none is in it. `fallback` picks from
    the banners that explain a text only when nothing more specific does (ErrorSignature.fallback)."""
    found = next((signature for signature in signatures.signatures
                  if signature.fallback == fallback and signature.pattern in text), None)
    if found is None:
        return None
    reader = READERS.get(found.detail) if found.detail else None
    detail = reader(text) if reader is not None else None
    if detail is None:
        return SignatureMatch(found, found.category, found.why, None, found.ways_out)
    if detail.category and detail.category != found.category:
        return SignatureMatch(found, detail.category, detail.why or found.why, detail, detail.ways)
    ways = tuple(dict.fromkeys(detail.ways + found.ways_out))  # a reader's way the signature also gives, once
    return SignatureMatch(found, found.category, detail.why or found.why, detail, ways)
