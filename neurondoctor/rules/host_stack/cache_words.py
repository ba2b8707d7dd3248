"""How a fix line names the compile cache: by its path, or, when the path held a secret the report does not show
(a URL's credentials), by the variable that holds it, so the line still runs and never prints the secret."""

from __future__ import annotations

from neurondoctor.facts.host import CompileCache
from neurondoctor.host.compile_cache import URL_VARIABLE
from neurondoctor.rules.fix import Part, Shell


def cache_word(cache: CompileCache, below: str = "") -> tuple[Part, ...]:
    """The cache, or the path `below` inside it, as one word of a fix: its path; `"$NEURON_COMPILE_CACHE_URL"/…`
    when the path was redacted and that variable sets it; else the redacted path (such a line cannot be run
    without the secret, and it is the only form the report has)."""
    suffix = f"/{below}" if below else ""
    if cache.path_redacted and cache.source == URL_VARIABLE:
        return (Shell(f'"${URL_VARIABLE}"'), suffix) if suffix else (Shell(f'"${URL_VARIABLE}"'),)
    return (f"{cache.path.rstrip('/')}{suffix}" if suffix else cache.path,)
