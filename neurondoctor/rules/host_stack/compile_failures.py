"""What a failed compile's own words mean (pure): the line `cache status` and ND-CACHE-001 show from an entry's
`model.log` (host/cache_index.failure_line), read as `explain` reads it.

A documented compiler code (`NCC_EOOM001`) takes its meaning from the compiler's error-code table
(compiler/error-codes/index.rst, manifests/error-signatures.json `compiler_error_codes`); any other line is given to
explain's readers (an older code such as `[XCG815]  Estimated peak HBM usage (22.839451) exceeds 16GB` is the
compiler's HBM estimate, which the memory reader knows). A code neither knows is said to be not documented: its
meaning is not guessed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Optional

from neurondoctor.release_data.probe_data import CompilerCode
from neurondoctor.rules.explain_readers import read_message
from neurondoctor.rules.explain_readers.causes import first_cause
from neurondoctor.rules.probes.compiler_codes import compiler_code

_BRACKET_CODE = re.compile(r"\[([A-Z]{1,4}[0-9]{3})\]")


def failure_meaning(line: str, codes: Sequence[CompilerCode]) -> Optional[str]:
    """`CODE: meaning` for a documented code, the cause explain's readers give the line, `CODE: not in the compiler's
    documented error codes` for a code neither knows, else None."""
    documented = compiler_code(line, tuple(codes))
    if documented is not None:
        code, _ = documented
        return f"{code.code}: {code.why}"
    found = first_cause(read_message(line))
    bracket = _BRACKET_CODE.search(line)
    if found is not None:
        return f"{bracket.group(1)}: {found[1].why}" if bracket else found[1].why
    if bracket:
        return f"{bracket.group(1)}: not in the compiler's documented error codes"
    return None
