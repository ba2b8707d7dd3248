"""The compiler's documented error codes in a log (pure): `NCC_EOOM001`, `[NCC_EVRF009]`, the first one the
table of compiler/error-codes/index.rst explains (manifests/error-signatures.json, `compiler_error_codes`).

Read by `explain` and the canary when no error signature and no runtime status matched: the compiler's own word on
what failed (device memory, a dynamic shape, an unsupported data type or operator variant, too many instructions),
with AWS's recommendation for it. Linear in the text: one pass of a pattern with no repeats.
"""

from __future__ import annotations

import re
from typing import Optional

from neurondoctor.release_data.probe_data import CompilerCode

NCC_CODE = re.compile(r"NCC_[A-Z]{4}\d{3}(?![A-Za-z0-9_])")


def _word_start(text: str, start: int) -> bool:
    return start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")


def compiler_codes_in(text: str) -> list[str]:
    """Every compiler error code the text names, in order (`xNCC_…` inside a word is none)."""
    return [match.group(0) for match in NCC_CODE.finditer(text) if _word_start(text, match.start())]


def compiler_code(text: str, table: tuple[CompilerCode, ...], operator_codes: frozenset[str] = frozenset()
                  ) -> Optional[tuple[CompilerCode, str]]:
    """The first documented code the text names, with its line; None when it names none the table explains.
    `operator_codes` (an unsupported operator: NCC_EVRF001) are left to the operator's own reading, which names the
    op and its three ways out."""
    by_code = {entry.code: entry for entry in table if entry.code not in operator_codes}
    for match in NCC_CODE.finditer(text):
        if _word_start(text, match.start()) and match.group(0) in by_code:
            start = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.start())
            return by_code[match.group(0)], text[start:len(text) if end < 0 else end]
    return None


_PEAK_HBM = re.compile(r"peak HBM usage of ([0-9]{1,6}(?:\.[0-9]{1,3})?) ?GB exceeds (?:the )?(?:HBM )?limit of "
                       r"([0-9]{1,6}(?:\.[0-9]{1,3})?) ?GB(?: for ([A-Za-z0-9]{1,12}))?")


def compiler_detail(text: str) -> Optional[str]:
    """The number that matters in the compiler's out-of-memory line (`[NCC_EOOM001] Maximum peak HBM usage of
    32.00GB exceeds HBM limit of 24.00GB for Trn2.`): how much the graph needs, how much one NeuronCore has, the
    gap."""
    found = _PEAK_HBM.search(text)
    if found is None:
        return None
    needed, limit, target = float(found.group(1)), float(found.group(2)), found.group(3)
    where = f" on {target}" if target else ""
    return (f"the graph needs {needed:.2f} GB of HBM at its peak; a NeuronCore{where} has {limit:.2f} GB "
            f"({needed - limit:.2f} GB short)")
