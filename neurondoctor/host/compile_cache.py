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
from pathlib import Path
from typing import Optional

from neurondoctor.facts.host import CompileCache
from neurondoctor.facts.mounts import MountTable
from neurondoctor.host.live_view import LiveView
from neurondoctor.host.mount_table import path_mount, read_mount_table
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
# `$VLLM_CACHE_ROOT/neuron/compile_cache`, VLLM_CACHE_ROOT defaulting to `~/.cache/vllm`; with the home folder on
# NFS it falls back to `/tmp/vllm_neuron_wdir_$USER/neuron/compile_cache`, and NEURON_LIBTORCH_REMOTE_CACHE names its
# shared tier (an NFS or FSx path). TorchNeuron keeps its NEFFs in TORCH_NEURONX_NEFF_CACHE_DIR, `/tmp/neff_cache` by
# default (its NEFF cache source). Where its local cache (TORCH_NEURONX_NEFF_LOCAL_CACHE_DIR) keeps what, no source
# shows: it is not listed.
VLLM_CACHE = "neuron/compile_cache"
VLLM_FALLBACK_SOURCE = "vLLM fallback for a home on NFS"
TORCHNEURON_VARIABLE = "TORCH_NEURONX_NEFF_CACHE_DIR"
TORCHNEURON_DEFAULT = "/tmp/neff_cache"  # noqa: S108 - the inspected host's path, never written
TORCHNEURON_SOURCE = "TorchNeuron default"
# Caches listed only where they are there: a fallback and a default most hosts never have.
SHOWN_WHEN_PRESENT = frozenset({VLLM_FALLBACK_SOURCE, TORCHNEURON_SOURCE})


def cache_locations(environ: Mapping[str, str], home: Optional[str]) -> list[tuple[str, str]]:
    """Every cache this environment configures, (location, where it was configured), the one neuronx-cc uses
    first: it, the default when that is another, vLLM Neuron's (and its fallback and remote tier), TorchNeuron's.
    `--cache_dir` wins over NEURON_COMPILE_CACHE_URL, as the neuron-caching page says (optimum-neuron's notes say
    the opposite; the doctor follows the Neuron docs)."""
    found = [cache_location(environ)]
    if found[0][0] != DEFAULT_CACHE:
        found.append((DEFAULT_CACHE, DEFAULT_SOURCE))
    vllm_root = environ.get("VLLM_CACHE_ROOT") or (f"{home.rstrip('/')}/.cache/vllm" if home else None)
    if vllm_root:
        found.append((f"{vllm_root.rstrip('/')}/{VLLM_CACHE}",
                      "VLLM_CACHE_ROOT" if environ.get("VLLM_CACHE_ROOT") else "vLLM default"))
    user = environ.get("USER", "")
    if not environ.get("VLLM_CACHE_ROOT") and user and "/" not in user:
        found.append((f"/tmp/vllm_neuron_wdir_{user}/{VLLM_CACHE}", VLLM_FALLBACK_SOURCE))  # noqa: S108
    if environ.get("NEURON_LIBTORCH_REMOTE_CACHE"):
        found.append((environ["NEURON_LIBTORCH_REMOTE_CACHE"], "NEURON_LIBTORCH_REMOTE_CACHE"))
    found.append((environ[TORCHNEURON_VARIABLE], TORCHNEURON_VARIABLE) if environ.get(TORCHNEURON_VARIABLE)
                 else (TORCHNEURON_DEFAULT, TORCHNEURON_SOURCE))
    first: dict[str, tuple[str, str]] = {}
    for path, source in found:
        first.setdefault(path, (path, source))  # one cache named twice is counted once, by its first source
    return list(first.values())


def _nearest_existing(fs: RootFS, inner: str) -> Optional[str]:
    path = inner.rstrip("/") or "/"
    while True:
        if fs.exists(path):
            return path
        if path == "/":
            return None
        path = path.rsplit("/", 1)[0] or "/"


def read_compile_cache(fs: RootFS, environ: Mapping[str, str], choice: CacheChoice = CacheChoice(),
                       table: Optional[MountTable] = None, view: Optional[LiveView] = None) -> CompileCache:
    """Read-only, noexec and network come from the host's own mount table (`table`); free disk and this
    machine's read-only flag from `statvfs` on the cache directory or its nearest existing parent, only where that
    measures the host's filesystem (host/live_view.py: the live host, or a live view of it), else they are not
    known and `disk_not_known` says why. An unattended run leaves the disk out (and says why in `not_judged`) for a
    default cache another user controls."""
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
    cache.mount = path_mount(fs, table if table is not None else read_mount_table(fs), location, shown)
    resolved = fs.resolve(existing) if existing else None
    if existing is None or resolved is None:
        return cache
    cache.disk_not_known = (view or LiveView(fs)).not_measured(existing)
    if cache.disk_not_known is not None:
        cache.disk_not_known = redact_secrets(cache.disk_not_known)
        cache.read_only = cache.mount.read_only if cache.mount is not None else None
    else:
        _measure(cache, resolved, fs.is_live)
    if existing == (location.rstrip("/") or "/"):
        from neurondoctor.host.cache_index import index_cache  # only where a cache exists (check's start-up)

        cache.index = index_cache(fs, location, max_entries=CHECK_MAX_ENTRIES, flag_samples=CHECK_FLAG_SAMPLES)
        cache.index.host_path = cache.index.host_path and redact_secrets(cache.index.host_path)
        if cache.mount is not None:
            cache.index.filesystem = cache.mount.filesystem
    return cache


def _measure(cache: CompileCache, resolved: Path, live: bool) -> None:
    """Free and total disk from this machine's `statvfs`, which measures the host's own filesystem here (the
    caller has judged so); on the live host its read-only flag and this user's access too."""
    try:
        usage = os.statvfs(resolved)
    except OSError:
        return
    cache.free_bytes = usage.f_bavail * usage.f_frsize
    cache.total_bytes = usage.f_blocks * usage.f_frsize
    # The read-only flag is the mount's the path is seen through: under a live view that is the view's own
    # (the node-problem-detector DaemonSet mounts the node's / read-only at /host), so it comes from the host's table.
    if live:
        cache.read_only = bool(usage.f_flag & os.ST_RDONLY)
    else:
        cache.read_only = cache.mount.read_only if cache.mount is not None else None
    # Whether this user can write the cache, or create it where its nearest existing parent is (live host only:
    # under --root the user who will compile is not this one).
    cache.writable = os.access(resolved, os.W_OK | os.X_OK) if live else None
