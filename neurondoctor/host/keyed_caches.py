"""Counts a framework's keyed compile cache (facts/cache_index.KeyedCache has the layouts), bounded by entries and
without following links: a folder is listed with `scandir`, a size is an `lstat`, no file is opened.

- vLLM Neuron: `<32 hex digits>/` per graph (the compilation-cache design page: a 32-character md5 key, one lock
  file per key). The files inside an entry are not published: they are counted and sized, never judged.
- TorchNeuron: `ab/cd/<key>.neff` (its persistent NEFF cache: two levels of two-character shards, each NEFF written
  to a temporary file, then renamed): a `.neff` is whole, a `.tmp` a write under way or cut off.
"""

from __future__ import annotations

import os
import stat
from typing import Optional

from neurondoctor.facts.cache_index import LAYOUT_TORCHNEURON, LAYOUT_VLLM, KeyedCache

_HEX = frozenset("0123456789abcdef")
NAMES_PER_ENTRY = 256  # files sized in one vLLM entry


def _is_key(name: str, length: int) -> bool:
    return len(name) == length and _HEX.issuperset(name)


def _size(entry: os.DirEntry[str]) -> Optional[int]:
    try:
        found = entry.stat(follow_symlinks=False)
    except OSError:
        return None
    return found.st_size if stat.S_ISREG(found.st_mode) else None


def _listing(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as listing:
            return list(listing)
    except OSError:
        return []


def _count_vllm(top: list[os.DirEntry[str]], max_entries: Optional[int]) -> tuple[KeyedCache, bool]:
    keyed = KeyedCache(LAYOUT_VLLM)
    keyed.lock_files = sum(1 for item in top if item.name.endswith(".lock"))
    for item in top:
        if not (_is_key(item.name, 32) and item.is_dir(follow_symlinks=False)):
            continue
        if max_entries is not None and keyed.entries >= max_entries:
            return keyed, True
        keyed.entries += 1
        for inner in _listing(item.path)[:NAMES_PER_ENTRY]:
            keyed.lock_files += inner.name.endswith(".lock")
            keyed.bytes += _size(inner) or 0
    return keyed, False


def _count_torchneuron(top: list[os.DirEntry[str]], max_entries: Optional[int]) -> tuple[KeyedCache, bool]:
    keyed = KeyedCache(LAYOUT_TORCHNEURON, done=0, incomplete=0)
    for first in top:
        if not (_is_key(first.name, 2) and first.is_dir(follow_symlinks=False)):
            continue
        for second in _listing(first.path):
            if not (_is_key(second.name, 2) and second.is_dir(follow_symlinks=False)):
                continue
            for item in _listing(second.path):
                finished = item.name.endswith(".neff")
                if not finished and not item.name.endswith(".tmp"):
                    continue
                size = _size(item)
                if size is None:
                    continue
                if max_entries is not None and keyed.entries >= max_entries:
                    return keyed, True
                keyed.entries += 1
                keyed.bytes += size
                if finished:
                    keyed.done = (keyed.done or 0) + 1
                else:
                    keyed.incomplete = (keyed.incomplete or 0) + 1
    return keyed, False


def count_keyed(top: list[os.DirEntry[str]], max_entries: Optional[int]) -> tuple[Optional[KeyedCache], int, bool]:
    """(the keyed cache these top-level names make, how many of them it accounts for, whether the count was cut);
    None where the names make neither layout."""
    if any(_is_key(item.name, 32) for item in top):
        keyed, cut = _count_vllm(top, max_entries)
        known = sum(1 for item in top if _is_key(item.name, 32) or item.name.endswith(".lock"))
        return keyed, known, cut
    if any(_is_key(item.name, 2) for item in top):
        keyed, cut = _count_torchneuron(top, max_entries)
        return keyed, sum(1 for item in top if _is_key(item.name, 2)), cut
    return None, 0, False
