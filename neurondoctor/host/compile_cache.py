"""Where the Neuron compile cache is and how much disk it has left (neuron-caching.rst: default
`/var/tmp/neuron-compile-cache`; `NEURON_COMPILE_CACHE_URL`; `--cache_dir=` in `NEURON_CC_FLAGS` wins).

The location is read as configured and the fact carries it redacted (`s3://KEY:SECRET@bucket` ->
`s3://[REDACTED]@bucket`): every output — report, health line, drain reason, bundle — inherits that.

An unattended verdict (`health`) measures the default location, which lies in world-writable /var/tmp, only where
root controls every step of the way to it (host/path_control.py); a cache the operator configured (health.conf,
or the variables in the environment `health` was given) is measured wherever it is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Optional

from neurondoctor.facts.host import CompileCache
from neurondoctor.host.path_control import controlled_by_another_user
from neurondoctor.host.rootfs import RootFS
from neurondoctor.redaction import redact_secrets

# Inside `check` the count is bounded by entries, never by the clock, so a host loaded by a training job gets the
# answer an idle one gets: a cache of 100,000 entries must not cost the check's budget (about 12 ms per 1,000
# entries here, docs/measured.md).
CHECK_MAX_ENTRIES = 1_000
CHECK_FLAG_SAMPLES = 20  # finished entries per compiler whose flags are read (ND-CACHE-005)
DEFAULT_CACHE = "/var/tmp/neuron-compile-cache"  # noqa: S108 - the inspected host's path, never written
CACHE_DIR_FLAG = re.compile(r"--cache_dir[= ](\S+)")
URL_VARIABLE = "NEURON_COMPILE_CACHE_URL"
DEFAULT_SOURCE = "default"
CONFIG_SOURCE = "health.conf"


@dataclass(frozen=True)
class CacheChoice:
    """Which cache a run judges, and on what trust: the one health.conf names (`configured`), else the
    environment's; `unattended` measures the default location only where root alone controls the way to it."""

    configured: Optional[str] = None
    unattended: bool = False


def cache_location(environ: Mapping[str, str], configured: Optional[str] = None) -> tuple[str, str]:
    """(location, where it was configured): the operator's health.conf first, then neuronx-cc's own order."""
    if configured:
        return configured, CONFIG_SOURCE
    flag = CACHE_DIR_FLAG.search(environ.get("NEURON_CC_FLAGS", ""))
    if flag:
        return flag.group(1), "NEURON_CC_FLAGS --cache_dir"
    if environ.get(URL_VARIABLE):
        return environ[URL_VARIABLE], URL_VARIABLE
    return DEFAULT_CACHE, DEFAULT_SOURCE


# vLLM's Neuron backend keeps its own cache (vllm-neuron docs, design/compilation/compilation_cache.md):
# `$VLLM_CACHE_ROOT/neuron/compile_cache`, VLLM_CACHE_ROOT defaulting to `~/.cache/vllm`.
VLLM_CACHE = "neuron/compile_cache"


def cache_locations(environ: Mapping[str, str], home: Optional[str]) -> list[tuple[str, str]]:
    """Every cache this environment configures, (location, where it was configured), the one neuronx-cc uses
    first: it, the default when that is another, and vLLM's. `--cache_dir` wins over NEURON_COMPILE_CACHE_URL, as
    the neuron-caching page says (optimum-neuron's notes say the opposite; the doctor follows the Neuron docs)."""
    found = [cache_location(environ)]
    if found[0][0] != DEFAULT_CACHE:
        found.append((DEFAULT_CACHE, DEFAULT_SOURCE))
    vllm_root = environ.get("VLLM_CACHE_ROOT") or (f"{home.rstrip('/')}/.cache/vllm" if home else None)
    if vllm_root:
        found.append((f"{vllm_root.rstrip('/')}/{VLLM_CACHE}",
                      "VLLM_CACHE_ROOT" if environ.get("VLLM_CACHE_ROOT") else "vLLM default"))
    return found


def _nearest_existing(fs: RootFS, inner: str) -> Optional[str]:
    path = inner.rstrip("/") or "/"
    while True:
        if fs.exists(path):
            return path
        if path == "/":
            return None
        path = path.rsplit("/", 1)[0] or "/"


def read_compile_cache(fs: RootFS, environ: Mapping[str, str], choice: CacheChoice = CacheChoice()) -> CompileCache:
    """Disk figures come from `statvfs` on the cache directory or its nearest existing parent; an unattended run
    leaves them out (and says why in `not_judged`) for a default cache another user controls."""
    location, source = cache_location(environ, choice.configured)
    shown = redact_secrets(location)
    cache = CompileCache(path=shown, source=source, remote="://" in location, path_redacted=shown != location)
    if cache.remote:
        return cache
    existing = _nearest_existing(fs, location)
    if choice.unattended and source == DEFAULT_SOURCE and existing:
        foreign = controlled_by_another_user(fs, existing)
        if foreign:
            cache.not_judged = redact_secrets(foreign)  # it names the paths on the way, which anyone may name
            return cache
    resolved = fs.resolve(existing) if existing else None
    if resolved is None:
        return cache
    try:
        usage = os.statvfs(resolved)
    except OSError:
        return cache
    cache.free_bytes = usage.f_bavail * usage.f_frsize
    cache.total_bytes = usage.f_blocks * usage.f_frsize
    cache.read_only = bool(usage.f_flag & os.ST_RDONLY)
    # Whether this user can write the cache, or create it where its nearest existing parent is (live host only:
    # under --root the user who will compile is not this one).
    cache.writable = os.access(resolved, os.W_OK | os.X_OK) if fs.is_live else None
    if existing == (location.rstrip("/") or "/"):
        from neurondoctor.host.cache_index import index_cache  # only where a cache exists (check's start-up)

        cache.index = index_cache(fs, location, max_entries=CHECK_MAX_ENTRIES, flag_samples=CHECK_FLAG_SAMPLES)
        cache.index.host_path = cache.index.host_path and redact_secrets(cache.index.host_path)
    return cache
