"""The first error signature a text holds, and what its reader adds (pure): one matcher for `explain` and the
canary, so the two never disagree on what a message means.

Signatures are tried in file order (manifests/error-signatures.json: the most specific first). A signature with a
`detail` has its reader look further (rules/probes/runtime_log.py for the runtime's numbers,
rules/probes/import_errors.py for import-time failures); a reader may replace the signature's category when the text
shows which of its causes it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Callable, Optional

from neurondoctor.release_data.probe_data import ErrorSignature, ErrorSignatures
from neurondoctor.rules.explain_readers.message import Message
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
    return None if found is None else _with_reader(found, text)


_BLANKS = re.compile(r"\s+")


@lru_cache(maxsize=1024)
def loose_pattern(pattern: str) -> str:
    """A signature as the normalised text holds it: lower case, one space for every run of blanks."""
    return _BLANKS.sub(" ", pattern.lower())


def match_signature_loosely(message: Message, signatures: ErrorSignatures, fallback: bool = False
                            ) -> Optional[tuple[SignatureMatch, str]]:
    """The first signature in the normalised message whatever its case, spacing or line wrapping
    (explain_readers/message.py), with the line it starts on; the reader reads the normalised text."""
    for signature in signatures.signatures:
        if signature.fallback != fallback:
            continue
        position = message.unwrapped.find(loose_pattern(signature.pattern))
        if position >= 0:
            return _with_reader(signature, message.text), message.line(position)
    return None


def _with_reader(found: ErrorSignature, text: str) -> SignatureMatch:
    reader = READERS.get(found.detail) if found.detail else None
    detail = reader(text) if reader is not None else None
    if detail is None:
        return SignatureMatch(found, found.category, found.why, None, found.ways_out)
    if detail.category and detail.category != found.category:
        return SignatureMatch(found, detail.category, detail.why or found.why, detail, detail.ways)
    ways = tuple(dict.fromkeys(detail.ways + found.ways_out))  # a reader's way the signature also gives, once
    return SignatureMatch(found, found.category, detail.why or found.why, detail, ways)
