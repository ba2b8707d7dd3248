"""Counts a local Neuron compile cache (facts/cache_index.py has the layout): bounded, and without following links.

The cache is usually under /var/tmp, where anyone may create names: the directory is resolved inside the root once,
then walked with `scandir` and no link is followed; a file is opened only to read a failed entry's first error line
or an entry's flags, with regular_files' `read_untrusted_file` (a `model.log` that is a link, or a hard link, to
/etc/shadow is not read). Entries are judged from their names; sizes come
from `lstat` of the NEFF and the graph, the files that hold the room. `max_entries` and `deadline_s` bound the walk
(`check` counts at most 1,000 entries, shared among the compilers' folders; `cache status` counts all; the bundle
has its time budget),
and `cut` says where it stopped.
Lock holders come from /proc/locks (an flock file holds no pid): inode to pid, then `/proc/<pid>/comm`.
What the index shows is redacted as it is built (its path, a log's error line, an entry's flags: a cache named by
a URL with credentials, a token in a log); `host_path` stays the path found, which `cache prune` and `cache verify`
act on, and is redacted where the index becomes a report.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Iterable
from typing import Optional

from neurondoctor import json_data
from neurondoctor.facts.cache_index import (
    ENTRY_DONE,
    ENTRY_FAILED,
    ENTRY_INCOMPLETE,
    ENTRY_LOCKED,
    CacheEntry,
    CacheIndex,
    CacheLock,
    CompilerCache,
)
from neurondoctor.facts.cache_states import writes_done_marker
from neurondoctor.host.live_view import LiveView
from neurondoctor.host.mount_table import path_mount
from neurondoctor.host.rootfs import RootFS
from neurondoctor.redaction import redact_secrets
from neurondoctor.regular_files import read_untrusted_file
from neurondoctor.strict_numbers import parse_count

NEFF_HEADER_BYTES = 1024  # a NEFF starts with a 1024-byte header (neuron-packager user guide)
REGISTRY = "0_REGISTRY"
MODULE_PREFIX = "MODULE_"
FAILED_SAMPLES = 5
LOCKS_LISTED = 50
LOG_READ_BYTES = 64 * 1024
FLAGS_READ_BYTES = 64 * 1024
_ERROR_LINE = re.compile(r"\bERROR\b|\bError\b|error:")
# A compiler's own code on a line: the documented `NCC_EOOM001` (bare or in brackets), or an older bracketed code
# such as `[XCG815]` (aws-neuron-sdk's report of a Llama 3 70B compile: `[XCG815]  Estimated peak HBM usage
# (22.839451) exceeds 16GB`) or `[F134]`.
_CODE_LINE = re.compile(r"(?<![A-Za-z0-9_])NCC_[A-Z]{4}[0-9]{3}(?![A-Za-z0-9_])|\[[A-Z]{1,4}[0-9]{3}\]")
# The compile wrapper's own summary lines, which say that the compile failed, never why.
_WRAPPER_LINE = re.compile(r"Subcommand returned with exitcode|Compiler status (?:ERROR|FAIL)")
# `\Z`, not `$`: `$` also matches before a final newline, and a folder named `neuronxcc-2.15.0\n` is no compiler's.
_COMPILER_DIR = re.compile(r"^neuronxcc-(\d+(?:\.\d+)+)(?:\+[0-9A-Za-z]+)?\Z")
# The files whose size an entry counts: the NEFF and the graph (2.15 on, then before), in every path of the count.
_SIZED = ("model.neff", "model.hlo_module.pb", "model.hlo.pb")
# `1: FLOCK  ADVISORY  WRITE 12345 103:01:524295 0 EOF`; a waiter's line has `->` after the id.
# Fields as the kernel writes them, bounded: a longer digit run (a crafted --root) is no lock, not an int() error.
_PROC_LOCK = re.compile(r"^[0-9]+:\s+(?:->\s+)?\S+\s+\S+\s+\S+\s+(-?[0-9]{1,10})\s+([0-9a-f]{1,8}):([0-9a-f]{1,8}):"
                        r"([0-9]{1,20})\s")


def entry_state(names: frozenset[str], neff_bytes: Optional[int], done_marker: bool = True) -> str:
    """The one state of an entry (done, failed, locked or incomplete) from its file names, the NEFF's size and its
    compiler's era (`done_marker`: neuronx-cc 2.15 or later, facts/cache_states.writes_done_marker).

    From 2.15 a finished entry has `model.done`, and a NEFF without it is still being written; up to 2.14 no entry
    has the marker (whatever its graph and flags files are called: the 2.14 copy has `model.hlo_module.pb` and
    `compile_flags.txt`), and a NEFF at least as long as a NEFF's header is the result. A failure keeps `model.log`
    and no usable NEFF (2.12 kept a 5-byte NEFF beside it). An entry with neither result that holds a `*.lock` is
    locked, only that: its lock is what a later run meets."""
    usable_neff = "model.neff" in names and not (neff_bytes is not None and neff_bytes < NEFF_HEADER_BYTES)
    if usable_neff and ("model.done" in names or not done_marker):
        return ENTRY_DONE
    if not usable_neff and "model.log" in names:
        return ENTRY_FAILED
    if any(name.endswith(".lock") for name in names):
        return ENTRY_LOCKED
    return ENTRY_INCOMPLETE


def failure_line(text: str) -> str:
    """The failure in the compiler's own words: the first line that carries a compiler code (`[XCG815] Estimated
    peak HBM usage …`, `[NCC_EOOM001] …`), else the first that says ERROR, else the last line; the wrapper's summary
    (`Subcommand returned with exitcode=70`, `Compiler status ERROR`) only when the log has nothing else."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    own = [line for line in lines if not _WRAPPER_LINE.search(line)]
    found = (next((line for line in own if _CODE_LINE.search(line)), None)
             or next((line for line in own if _ERROR_LINE.search(line)), None)
             or next((line for line in lines if _ERROR_LINE.search(line)), None)
             or (lines[-1] if lines else ""))
    return found[:300]


def first_error_line(path: str) -> str:
    """`failure_line` of a compile log, read without following a link."""
    try:
        text = read_untrusted_file(path, LOG_READ_BYTES).decode("utf-8", errors="replace")
    except OSError as error:
        return f"(log unreadable: {error.strerror or error})"
    return failure_line(text)


def read_compile_flags(folder: str, names: frozenset[str]) -> Optional[list[str]]:
    """An entry's compiler flags: `compile_flags.json`, a JSON list of strings (`[]` in the public copies; ASSUMED
    that the list holds the flags as passed), else the older `compile_flags.txt`, the flags as text. None when
    neither reads as that."""
    name = "compile_flags.json" if "compile_flags.json" in names else "compile_flags.txt"
    if name not in names:
        return None
    try:
        text = read_untrusted_file(f"{folder}/{name}", FLAGS_READ_BYTES).decode("utf-8", "replace")
    except OSError:
        return None
    if name == "compile_flags.txt":
        return text.split()
    try:
        flags = json_data.loads(text)
    except (ValueError, RecursionError):
        return None
    return flags if isinstance(flags, list) and all(isinstance(flag, str) for flag in flags) else None


def _redact_what_it_shows(index: CacheIndex) -> None:
    """The log lines and flags the count read, as a report shows them: a secret among them redacted (`--token X`, a
    URL's credentials), as it is in the NEURON_CC_FLAGS they are compared with. Done once the count is over: the
    first redaction compiles its patterns, which inside the bounded walk would cost it entries. Flags are redacted
    one per line, so an option and its value are seen together."""
    for compiler in index.compilers:
        compiler.failed_errors = {name: redact_secrets(line) for name, line in compiler.failed_errors.items()}
        compiler.flag_samples = [redact_secrets("\n".join(flags)).split("\n") if flags else []
                                 for flags in compiler.flag_samples]


def lock_holders(fs: RootFS) -> dict[tuple[int, int, int], int]:
    """(device major, minor, inode) → pid of the process holding a lock on it, from /proc/locks."""
    holders: dict[tuple[int, int, int], int] = {}
    for line in (fs.try_read_text("/proc/locks", limit=1 << 20) or "").splitlines():
        match = _PROC_LOCK.match(line)
        waiting = line.split()[1:2] == ["->"]  # a process waiting for the lock, not holding it
        if match and not waiting and int(match.group(1)) > 0:
            key = (int(match.group(2), 16), int(match.group(3), 16), int(match.group(4)))
            holders.setdefault(key, int(match.group(1)))
    return holders


def _lstat(path: str) -> Optional[os.stat_result]:
    try:
        return os.lstat(path)
    except OSError:
        return None


_Scanned = tuple[str, int, tuple[CacheLock, ...]]


# What a compile runs as: neuronx-cc (a script: its comm is its name) and its backend (users' notes wait for both).
COMPILER_COMMANDS = frozenset({"neuronx-cc", "walrus_driver"})


def compilers_running(fs: RootFS) -> list[str]:
    """`PID COMM` of every neuronx-cc process this host (this PID namespace) shows."""
    return [f"{pid} {command}" for pid, command, _ in compiles_running(fs)]


def boot_time(fs: RootFS) -> Optional[int]:
    """When the host booted, seconds since the epoch: `btime` in /proc/stat."""
    for line in (fs.try_read_text("/proc/stat", limit=1 << 20) or "").splitlines():
        if line.startswith("btime "):
            return parse_count(line[6:].strip())
    return None


def process_start(fs: RootFS, pid: str, booted: Optional[int]) -> Optional[float]:
    """When process `pid` started, seconds since the epoch: field 22 of /proc/<pid>/stat (clock ticks after boot),
    read after the last `)`, since the command name in parentheses may hold spaces and parentheses itself."""
    text = fs.try_read_text(f"/proc/{pid}/stat", limit=4096) or ""
    fields = text[text.rfind(")") + 1:].split() if ")" in text else []
    ticks = parse_count(fields[19]) if len(fields) > 19 else None  # fields[0] is field 3 (state)
    if booted is None or ticks is None:
        return None
    return booted + ticks / os.sysconf("SC_CLK_TCK")


def compiles_running(fs: RootFS) -> list[tuple[str, str, Optional[float]]]:
    """(pid, command, start) of every neuronx-cc process this host (this PID namespace) shows; start is None where
    /proc does not say it."""
    try:
        pids = [name for name in fs.listdir("/proc") if parse_count(name) is not None]
    except OSError:
        return []
    found = []
    booted: Optional[int] = None
    for pid in pids:
        command = (fs.try_read_text(f"/proc/{pid}/comm", limit=64) or "").strip()
        if command in COMPILER_COMMANDS:
            if booted is None:
                booted = boot_time(fs)
            found.append((pid, command, process_start(fs, pid, booted)))
    return found


class _LockHolders:
    """What a lock needs looked at, read when the first lock file is found (most caches have none): /proc/locks,
    and whether a lock could be a live compile's that /proc/locks does not show (the mount's type, the compiles
    running here)."""

    def __init__(self, fs: RootFS, mount_path: str) -> None:
        self.fs = fs
        self.mount_path = mount_path  # the cache's in-root path: its links are followed inside the root
        self._holders: Optional[dict[tuple[int, int, int], int]] = None
        self._looked_around = False

    def pid(self, found: os.stat_result) -> Optional[int]:
        if self._holders is None:
            self._holders = lock_holders(self.fs)
        return self._holders.get((os.major(found.st_dev), os.minor(found.st_dev), found.st_ino))

    def look_around(self, index: CacheIndex, now: float) -> None:
        if not self._looked_around:
            self._looked_around = True
            if index.filesystem is None:  # check sets it from the table it read; `cache status` reads it here
                found = path_mount(self.fs, LiveView(self.fs).mount_table(), self.mount_path)
                index.filesystem = found.filesystem if found is not None else None
            running = compiles_running(self.fs)
            index.compilers_running = [f"{pid} {command}" for pid, command, _ in running]
            index.compiles_age_s = [None if started is None else max(0.0, now - started) for _, _, started in running]


def _entry_locks(path: str, entry: str, names: frozenset[str], now: float,
                 holders: _LockHolders, fs: RootFS, state: str) -> tuple[CacheLock, ...]:
    locks = []
    for name in sorted(name for name in names if name.endswith(".lock")):
        found = _lstat(f"{path}/{name}")
        if found is None or not stat.S_ISREG(found.st_mode):
            continue
        pid = holders.pid(found)
        command = None
        if pid is not None:
            command = (fs.try_read_text(f"/proc/{pid}/comm", limit=256) or "").strip() or None
        locks.append(CacheLock(entry, name, max(0.0, now - found.st_mtime), pid, command, state))
    return tuple(locks)


UNREADABLE_LISTED = 50


def _unreadable(index: CacheIndex, line: str) -> None:
    """The first UNREADABLE_LISTED folders that could not be listed, then one line counting the rest."""
    if len(index.unreadable) < UNREADABLE_LISTED:
        index.unreadable.append(line)
    elif len(index.unreadable) == UNREADABLE_LISTED:
        index.unreadable.append("1 more folder could not be listed")
    else:
        more = int(index.unreadable[-1].split()[0]) + 1
        index.unreadable[-1] = f"{more:d} more folders could not be listed"


def _scan_entry(path: str, entry: str, compiler: CompilerCache, index: CacheIndex, now: float,
                holders: _LockHolders, fs: RootFS, flag_samples: int) -> Optional[_Scanned]:
    """(state, bytes, locks) of one entry directory, counted into `compiler`; None when it cannot be listed."""
    try:
        names = frozenset(os.listdir(path))
    except OSError as error:
        _unreadable(index, f"{entry}: {error.strerror or error}")
        return None
    sizes = {name: found for name in _SIZED if name in names for found in [_lstat(f"{path}/{name}")]
             if found is not None and stat.S_ISREG(found.st_mode)}
    neff = sizes.get("model.neff")
    neff_size = neff.st_size if neff is not None else None
    state = entry_state(names, neff_size, writes_done_marker(compiler.compiler_version))
    size = sum(found.st_size for found in sizes.values())
    compiler.states[state] += 1
    compiler.bytes += size
    if state == ENTRY_DONE and len(compiler.flag_samples) < flag_samples:
        flags = read_compile_flags(path, names)
        if flags is not None:
            compiler.flag_samples.append(flags)
    if state == ENTRY_FAILED and len(compiler.failed_entries) < FAILED_SAMPLES:
        name = entry.rsplit("/", 1)[-1]
        compiler.failed_entries.append(name)
        compiler.failed_errors[name] = first_error_line(f"{path}/model.log")
    has_locks = any(name.endswith(".lock") for name in names)
    locks = _entry_locks(path, entry, names, now, holders, fs, state) if has_locks else ()
    if state == ENTRY_LOCKED:
        compiler.locked += 1
    if locks:
        holders.look_around(index, now)
        index.locks.extend(locks[:max(0, LOCKS_LISTED - len(index.locks))])
    return state, size, locks


_FLAG_FILES = frozenset({"compile_flags.json"})
FLAG_KEYS_KEPT = 256
_HEX = frozenset("0123456789abcdef")


def _record_flag_key(compiler: CompilerCache, name: str) -> None:
    """A finished entry's `+<flags>` key counted (names are `MODULE_<graph>+<8 hex digits>`)."""
    key = name.rpartition("+")[2]
    if len(key) == 8 and _HEX.issuperset(key) and (key in compiler.flag_keys
                                                   or len(compiler.flag_keys) < FLAG_KEYS_KEPT):
        compiler.flag_keys[key] = compiler.flag_keys.get(key, 0) + 1


def _finished(path: str) -> Optional[tuple[float, int]]:
    """(mtime, bytes) of an entry neuronx-cc 2.15 or later finished — its `model.done` beside a NEFF at least as
    long as a NEFF's header — from lstat alone; None sends the entry to the full look (listing, logs, locks). A
    finished entry's leftover lock is waited on by nobody, so it is not looked for. (Written for speed: it runs
    once per entry, 100,000 times in a large cache.)"""
    lstat = os.lstat
    try:
        lstat(path + "/model.done")
        neff = lstat(path + "/model.neff")
    except OSError:
        return None
    if neff.st_size < NEFF_HEADER_BYTES or not stat.S_ISREG(neff.st_mode):
        return None
    try:
        graph = lstat(path + "/model.hlo_module.pb")
    except OSError:
        return neff.st_mtime, neff.st_size
    return neff.st_mtime, neff.st_size + (graph.st_size if stat.S_ISREG(graph.st_mode) else 0)


def _age(compiler: CompilerCache, mtime: Optional[float]) -> None:
    if mtime is not None:
        compiler.oldest = mtime if compiler.oldest is None else min(compiler.oldest, mtime)
        compiler.newest = mtime if compiler.newest is None else max(compiler.newest, mtime)


def _count_entry(entry: os.DirEntry[str], compiler_name: str, compiler: CompilerCache, index: CacheIndex,
                 now: float, holders: _LockHolders, fs: RootFS, flag_samples: int, keep_entries: bool) -> None:
    """One MODULE_ entry counted into its compiler (and kept, with `keep_entries`)."""
    if entry.is_symlink():
        compiler.links += 1
        if keep_entries:
            index.entries.append(CacheEntry(compiler_name, entry.name, ENTRY_INCOMPLETE, None, 0, link=True))
        return
    finished = _finished(entry.path) if entry.is_dir(follow_symlinks=False) else None
    if finished is not None:  # the common case, in two or three lstat calls
        finished_at, size = finished
        _age(compiler, finished_at)
        compiler.states[ENTRY_DONE] += 1
        compiler.bytes += size
        _record_flag_key(compiler, entry.name)
        if len(compiler.flag_samples) < flag_samples:
            flags = read_compile_flags(entry.path, _FLAG_FILES)
            if flags is not None:
                compiler.flag_samples.append(flags)
        if keep_entries:
            index.entries.append(CacheEntry(compiler_name, entry.name, ENTRY_DONE, finished_at, size))
        return
    try:
        mtime: Optional[float] = entry.stat(follow_symlinks=False).st_mtime
    except OSError:
        mtime = None
    _age(compiler, mtime)
    scanned: Optional[_Scanned]
    if entry.is_dir(follow_symlinks=False):
        scanned = _scan_entry(entry.path, f"{compiler_name}/{entry.name}", compiler, index, now, holders, fs,
                              flag_samples)
    else:  # a file (or a FIFO) where an entry belongs: nothing a compile can use
        compiler.states[ENTRY_INCOMPLETE] += 1
        scanned = (ENTRY_INCOMPLETE, 0, ())
    if scanned is not None and scanned[0] == ENTRY_DONE:
        _record_flag_key(compiler, entry.name)
    if keep_entries and scanned is not None:
        state, size, locks = scanned
        index.entries.append(CacheEntry(compiler_name, entry.name, state, mtime, size, locks))


def index_cache(fs: RootFS, inner: str, max_entries: Optional[int] = None,
                deadline_s: Optional[float] = None, keep_entries: bool = False, flag_samples: int = 0) -> CacheIndex:
    """Count the cache at `inner` (a path inside the root); every problem is recorded, never raised. With
    `keep_entries`, every entry is kept in `index.entries` too (`cache prune` chooses from them); with
    `flag_samples`, the flags of that many finished entries per compiler are read (`check` compares them)."""
    index = CacheIndex(path=redact_secrets(fs.shown_path(inner)))
    resolved = fs.resolve(inner)
    if resolved is None:
        index.problem = "a link loop or a link out of the root"
        return index
    base = str(resolved)
    found = _lstat(base)
    if found is None:
        return index
    if not stat.S_ISDIR(found.st_mode):
        index.problem = "not a directory"
        return index
    index.exists, index.host_path, index._identity = True, base, (found.st_dev, found.st_ino)
    started, now = time.monotonic(), time.time()
    holders = _LockHolders(fs, inner)
    try:
        top = sorted(os.scandir(base), key=lambda item: item.name)
    except OSError as error:
        index.problem = f"unreadable: {error.strerror or error}"
        return index
    compiler_folders = [(item, match.group(1)) for item in top for match in [_COMPILER_DIR.match(item.name)]
                        if match is not None and item.is_dir(follow_symlinks=False)]
    index.other_names = len(top) - len(compiler_folders)
    if not compiler_folders:
        from neurondoctor.host.keyed_caches import count_keyed  # a framework's layout (check's start-up)

        keyed, known, keyed_cut = count_keyed(top, max_entries)
        if keyed is not None:
            index.keyed, index.counted = keyed, keyed.entries
            index.other_names -= known
            index.cut = f"counted up to {index.counted:,} entries" if keyed_cut else None
            return index
    bounded = max_entries is not None or deadline_s is not None
    cut = False
    for position, (item, version) in enumerate(compiler_folders):
        compiler = CompilerCache(item.name, version)
        index.compilers.append(compiler)
        # A bounded count shares its bound among the compilers' folders, what one leaves passing to the next:
        # a cut in the first folder must not hide the installed compiler's entries (ND-CACHE-003 would then say
        # there are none).
        share = (position + 1) / len(compiler_folders)
        entries_until = None if max_entries is None else int(max_entries * share)
        time_until = None if deadline_s is None else started + deadline_s * share
        try:
            listing = os.scandir(item.path)
        except OSError as error:
            _unreadable(index, f"{item.name}: {error.strerror or error}")
            continue
        with listing:
            # A whole count goes in name order; a bounded one (check) reads the folder as it comes, so a folder of
            # 100,000 entries costs what is counted of it, not a sorted listing first.
            entries: Iterable[os.DirEntry[str]] = listing if bounded else sorted(listing, key=lambda e: e.name)
            for entry in entries:
                if entry.name == REGISTRY:
                    compiler.registry = True
                    continue
                if not entry.name.startswith(MODULE_PREFIX):
                    continue
                full = entries_until is not None and index.counted >= entries_until
                if full or (time_until is not None and time.monotonic() > time_until):
                    cut = True
                    break
                index.counted += 1
                compiler.entries += 1
                _count_entry(entry, item.name, compiler, index, now, holders, fs, flag_samples, keep_entries)
    if cut:
        index.cut = f"counted up to {index.counted:,} entries"
    _redact_what_it_shows(index)
    return index
