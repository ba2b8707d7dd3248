"""What each failed entry's own words mean, added to a counted cache where a command shows it (`check`'s
ND-CACHE-001, `cache status`, the bundle): each failure line read as `explain` reads it
(rules/host_stack/compile_failures.py), with the compiler's error-code table from the release data. Only where the
count found failed entries, so a host without one loads neither the table nor explain's readers (check's start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

if TYPE_CHECKING:  # the index module comes with a counted cache, never for this module
    from neurondoctor.facts.cache_index import CacheIndex


def explain_failures(index: Optional[CacheIndex]) -> None:
    """Fill `failed_meanings` of each compiler folder from its `failed_errors`."""
    if index is None or not any(compiler.failed_errors for compiler in index.compilers):
        return
    from neurondoctor.release_data.probe_data import load_error_signatures
    from neurondoctor.rules.host_stack.compile_failures import failure_meaning

    try:
        codes = load_error_signatures().compiler_codes
    except (OSError, ValueError):
        codes = ()  # the table is unreadable: codes are then not known, the readers still read the line
    for compiler in index.compilers:
        for name, line in compiler.failed_errors.items():
            meaning = failure_meaning(line, codes)
            if meaning:
                compiler.failed_meanings[name] = meaning
