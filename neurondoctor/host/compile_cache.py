"""Where the Neuron compile cache is and how much disk it has left (neuron-caching.rst: default
`/var/tmp/neuron-compile-cache`; `NEURON_COMPILE_CACHE_URL`; `--cache_dir=` in `NEURON_CC_FLAGS` wins)."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Optional

from neurondoctor.facts.host import CompileCache
from neurondoctor.host.rootfs import RootFS

DEFAULT_CACHE = "/var/tmp/neuron-compile-cache"  # noqa: S108 - the inspected host's path, never written
_CACHE_DIR_FLAG = re.compile(r"--cache_dir[= ](\S+)")


def cache_location(environ: Mapping[str, str]) -> tuple[str, str]:
    """(location, where it was configured)."""
    flag = _CACHE_DIR_FLAG.search(environ.get("NEURON_CC_FLAGS", ""))
    if flag:
        return flag.group(1), "NEURON_CC_FLAGS --cache_dir"
    if environ.get("NEURON_COMPILE_CACHE_URL"):
        return environ["NEURON_COMPILE_CACHE_URL"], "NEURON_COMPILE_CACHE_URL"
    return DEFAULT_CACHE, "default"


def _nearest_existing(fs: RootFS, inner: str) -> Optional[str]:
    path = inner.rstrip("/") or "/"
    while True:
        if fs.exists(path):
            return path
        if path == "/":
            return None
        path = path.rsplit("/", 1)[0] or "/"


def read_compile_cache(fs: RootFS, environ: Mapping[str, str]) -> CompileCache:
    """Disk figures come from `statvfs` on the cache directory or its nearest existing parent."""
    location, source = cache_location(environ)
    cache = CompileCache(path=location, source=source, remote="://" in location)
    if cache.remote:
        return cache
    existing = _nearest_existing(fs, location)
    resolved = fs.resolve(existing) if existing else None
    if resolved is None:
        return cache
    try:
        usage = os.statvfs(resolved)
    except OSError:
        return cache
    cache.free_bytes = usage.f_bavail * usage.f_frsize
    cache.total_bytes = usage.f_blocks * usage.f_frsize
    return cache
