"""What a reader of an error text found beyond its signature (pure record): the one line that says what exactly
broke, the ways out that fit it best, and, where the text decides it, the category the signature alone cannot.

A signature (manifests/error-signatures.json) names the kind of reader in its `detail`: the runtime's logs
(rules/probes/runtime_log.py) and import-time failures (rules/probes/import_errors.py). One record for both, so that
`explain` and the canary read every kind the same way (rules/probes/signature_match.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class TextDetail:
    """What broke, in one line; the ways out that fit it (put first); a category and why that replace the
    signature's when the text shows which of several causes it is (an undefined `nrt_` symbol is not torch's)."""

    what: str
    ways: tuple[str, ...] = ()
    category: Optional[str] = None
    why: Optional[str] = None
