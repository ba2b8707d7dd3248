"""`explain` of a compile-cache wait or skip, on this host: the entry the message names (rules/explain_readers/
cache_entries.py), found in this host's caches, its state, and the `cache prune` line that clears it here.

The caches looked in are the one the message names (a skip names it), else every local cache the environment
configures (`cache status`'s list). Each is counted as `cache prune` counts it (host/cache_index.py: no link
followed), and an entry is judged by the rules `check` and `cache prune` use: failed → `--failed`; locked with a lock
no process holds, old enough and older than every running compile → `--stale-locks`; a lock a process holds, or one
a running compile may have made → wait, no line. Read-only: nothing is moved here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

from neurondoctor.facts.cache_index import ENTRY_DONE, ENTRY_FAILED, ENTRY_LOCKED, CacheEntry, CacheIndex
from neurondoctor.rules.explain_readers.cache_entries import NamedEntry, named_entries
from neurondoctor.rules.fix import Fix, command

MAX_CACHES = 4


@dataclass
class EntryAnswer:
    """One named entry as found here: where, its state, what it means now, and the line that clears it (if any)."""

    module: str
    cache: Optional[str]  # the cache it was found in (as named inside the root), None when not found
    entry: Optional[str]  # `neuronxcc-…/MODULE_…`
    state: Optional[str]
    means: str
    fix: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"module": self.module, "cache": self.cache, "entry": self.entry, "state": self.state,
                "means": self.means, "fix": list(self.fix)}


def _prune_line(cache: str, option: str, root: str) -> list[str]:
    words = ["neurondoctor", "cache", "prune", cache, option] + (["--root", root] if root not in ("/", "") else [])
    return Fix([command(*words, "--yes", note="moves it into a folder beside the cache; deletes nothing")]).lines()


def _judge(index: CacheIndex, found: CacheEntry, cache: str, root: str, container: bool) -> tuple[str, list[str]]:
    from neurondoctor.rules.host_stack.compile_cache import locks_may_be_live, stale, stale_after_s

    if found.state == ENTRY_FAILED:
        return ("a failed compile, cached: runs skip this graph until it moves or --retry_failed_compilation is set",
                _prune_line(cache, "--failed", root))
    if found.state == ENTRY_DONE:
        return "finished now: the next run loads it (nothing to clear)", []
    if found.state != ENTRY_LOCKED:
        return "no result and no lock: the next run compiles it (nothing to clear)", []
    held = next((lock for lock in found.locks if lock.holder_pid is not None), None)
    if held is not None:
        return (f"a compile is under way: process {held.holder_pid} ({held.holder_command or 'unknown'}) holds its "
                "lock; the wait ends when it finishes", [])
    older_than = stale_after_s(container)
    if not stale(found.locks, older_than):
        return (f"locked, by no process here, for less than {older_than / 60:.0f} minutes: a compile may still be "
                "starting; look again later", [])
    live = locks_may_be_live(index, found.locks)
    if live:
        return f"locked by no process here, but {live}: wait for it, then look again", []
    return ("a stale lock, left by a compile that was stopped: every run that needs this graph waits on it",
            _prune_line(cache, "--stale-locks", root))


def _caches(named: NamedEntry, environ: Mapping[str, str]) -> list[str]:
    from neurondoctor.host.compile_cache import cache_locations

    if named.cache:
        return [named.cache]
    local = [path for path, _ in cache_locations(environ, environ.get("HOME")) if "://" not in path]
    return list(dict.fromkeys(os.path.abspath(path) for path in local))[:MAX_CACHES]


def answer_cache_entries(text: str, root: str, environ: Mapping[str, str]) -> list[EntryAnswer]:
    """Each entry the text's waits and skips name, as this host's caches hold it."""
    from neurondoctor.host.cache_index import index_cache
    from neurondoctor.host.os_release import is_container
    from neurondoctor.host.rootfs import RootFS

    named_list = named_entries(text)
    if not named_list:
        return []
    fs = RootFS(root)
    container = is_container(fs)
    indexes: dict[str, CacheIndex] = {}
    answers = []
    for named in named_list:
        answer = None
        for cache in _caches(named, environ):
            if cache not in indexes:
                indexes[cache] = index_cache(fs, cache, keep_entries=True)
            index = indexes[cache]
            matches: Sequence[CacheEntry] = [entry for entry in index.entries if entry.name == named.module
                                             and not entry.link and named.compiler in (None, entry.compiler)]
            if matches:
                found = matches[0]
                means, fix = _judge(index, found, cache, root, container)
                answer = EntryAnswer(named.module, cache, f"{found.compiler}/{found.name}", found.state, means, fix)
                break
        answers.append(answer or EntryAnswer(
            named.module, None, None, None,
            f"not in the compile caches here ({', '.join(_caches(named, environ)) or 'none configured'}): the "
            "message came from another host, container or cache", []))
    return answers
