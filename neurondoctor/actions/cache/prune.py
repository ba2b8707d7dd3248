"""`cache prune`: move the entries that keep a compile cache from serving out of its way, never deleting them.

What it moves (docs/cache.md):
- `--failed`: failed entries, which later runs skip without compiling until `--retry_failed_compilation`
  (the neuron-caching page: `Got a cached failed neff at … Will skip compilation`);
- `--stale-locks`: unfinished entries whose lock file no process on this host holds and that are older than
  STALE_LOCK_S: a compile killed mid-way leaves `model.hlo_module.pb.lock`, and every later run that needs the
  graph waits on it ("Another process must be compiling …", with no neuronx-cc alive; users' notes in public
  repositories remove the lock or the entry by hand). Refused while a neuronx-cc runs here or when the cache is on a
  network filesystem (the lock may be a live compile's). The whole entry moves: without a NEFF it holds nothing a
  run can load;
- `--other-compilers`: whole `neuronxcc-<version>` directories of a compiler no environment here has installed;
- `--older-than DAYS`: entries not changed for that many days;
- `--broken`: finished entries whose NEFF is not whole (`cache verify`: a header that is not a NEFF's, a file cut
  short), which a run would fail to load.

Everything moves into `<cache>.neurondoctor-<UTC>/` beside the cache, made by this run (mode 0700; a second run in
the same second gets `-2`), so a move is a rename on the same filesystem: where the cache is a mount point the run
is refused in one line. Renames go through directory descriptors opened without following links, so a directory
swapped for a link after the scan moves nothing else. An entry whose lock a live process holds is never moved: the
run is refused, naming it. `--dry-run` prints the moves and touches nothing.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Optional

from neurondoctor import exit_codes
from neurondoctor.actions.cache.verify import neff_problem
from neurondoctor.facts.cache_index import ENTRY_DONE, ENTRY_FAILED, CacheEntry, CacheIndex
from neurondoctor.neuron_version import normalize_neuron_version
from neurondoctor.rules.host_stack.compile_cache import STALE_LOCK_S, locks_may_be_live, stale

_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class PruneCriteria:
    failed: bool = False
    stale_locks: bool = False
    other_compilers: bool = False
    older_than_days: Optional[float] = None
    broken: bool = False

    @property
    def any(self) -> bool:
        return (self.failed or self.stale_locks or self.other_compilers or self.older_than_days is not None
                or self.broken)


@dataclass(frozen=True)
class Move:
    """One name to move, relative to the cache: `neuronxcc-…/MODULE_…`, or a whole `neuronxcc-…`."""

    path: str
    reason: str
    bytes: int


def _held(entries: Iterable[CacheEntry]) -> Optional[str]:
    """The first entry whose lock a live process holds, said in one line, or None."""
    for entry in entries:
        for lock in entry.locks:
            if lock.holder_pid is not None:
                return (f"{entry.compiler}/{entry.name} is locked by process {lock.holder_pid} "
                        f"({lock.holder_command or 'unknown'}): a compile is under way")
    return None


def plan_moves(index: CacheIndex, criteria: PruneCriteria, installed_compilers: Sequence[str],
               now: float, stale_after: float = STALE_LOCK_S) -> list[Move]:
    """What moves, whole compiler directories first; raises UserError when a live process holds a lock in it."""
    moves: list[Move] = []
    wanted = {normalize_neuron_version(version) for version in installed_compilers}
    moved_compilers: set[str] = set()
    if criteria.other_compilers:
        for compiler in index.compilers:
            if compiler.compiler_version is not None and compiler.compiler_version not in wanted:
                held = _held(entry for entry in index.entries if entry.compiler == compiler.name)
                if held:
                    raise exit_codes.UserError(f"{held}; nothing was moved")
                moved_compilers.add(compiler.name)
                moves.append(Move(compiler.name, f"neuronx-cc {compiler.compiler_version} is not installed here "
                                  f"({', '.join(sorted(wanted))} is)", compiler.bytes))
    if criteria.stale_locks and any(stale(entry.locks, stale_after) for entry in index.entries):
        live = locks_may_be_live(index)
        if live:
            raise exit_codes.UserError(f"{live}; nothing was moved (run again when no compile runs)")
    cutoff = None if criteria.older_than_days is None else now - criteria.older_than_days * 86400
    for entry in index.entries:
        if entry.compiler in moved_compilers or entry.link:
            continue
        reasons = []
        if criteria.failed and entry.state == ENTRY_FAILED:
            reasons.append("failed: later runs skip it until --retry_failed_compilation")
        if criteria.stale_locks and stale(entry.locks, stale_after):
            reasons.append("a lock no process holds, left by a stopped compile: later runs wait on it")
        if cutoff is not None and entry.mtime is not None and entry.mtime < cutoff:
            reasons.append(f"unchanged for {(now - entry.mtime) / 86400:.0f} days")
        if criteria.broken and entry.state == ENTRY_DONE and index.host_path is not None:
            problem = neff_problem(os.path.join(index.host_path, entry.compiler, entry.name, "model.neff"))
            if problem is not None:
                reasons.append(f"not whole: {problem}")
        if reasons:
            held = _held([entry])
            if held:
                raise exit_codes.UserError(f"{held}; nothing was moved")
            moves.append(Move(f"{entry.compiler}/{entry.name}", "; ".join(reasons), entry.bytes))
    return moves


def backup_name(cache_dir: str, now: float) -> str:
    return f"{os.path.basename(cache_dir.rstrip('/'))}.neurondoctor-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(now))}"


def _make_backup(parent_fd: int, name: str) -> str:
    """A directory this run creates beside the cache; an existing name (an earlier run, or a planted link) is never
    reused: the next free `-N` is taken."""
    for attempt in range(1, 100):
        candidate = name if attempt == 1 else f"{name}-{attempt}"
        try:
            os.mkdir(candidate, mode=0o700, dir_fd=parent_fd)
            return candidate
        except FileExistsError:
            continue
    raise exit_codes.UserError(f"could not create a backup folder beside the cache ({name}-2 … -99 all exist)")


@dataclass
class PruneResult:
    backup: str
    moved: list[Move]
    failed: list[str]  # `path: why`, one line each


def apply_moves(cache_dir: str, moves: Sequence[Move], now: float) -> PruneResult:
    """Rename every move into a new backup folder beside `cache_dir` (a directory on this machine, not a link). A
    move that fails (the entry went away, a directory was swapped for a link) is recorded and the rest go on."""
    parent, name = os.path.split(cache_dir.rstrip("/"))
    parent_fd = os.open(parent or "/", _DIRECTORY & ~os.O_NOFOLLOW)
    try:
        cache_fd = os.open(name, _DIRECTORY, dir_fd=parent_fd)
        try:
            if os.fstat(cache_fd).st_dev != os.fstat(parent_fd).st_dev:
                raise exit_codes.UserError(f"{cache_dir} is a mount point: a backup beside it would be on another "
                                           "filesystem, and a move would be a copy; nothing was moved")
            backup = _make_backup(parent_fd, backup_name(cache_dir, now))
            result = PruneResult(os.path.join(parent or "/", backup), [], [])
            backup_fd = os.open(backup, _DIRECTORY, dir_fd=parent_fd)
            try:
                for move in moves:
                    try:
                        _rename(cache_fd, backup_fd, move.path)
                        result.moved.append(move)
                    except OSError as error:
                        result.failed.append(f"{move.path}: {error.strerror or error}")
            finally:
                os.close(backup_fd)
            return result
        finally:
            os.close(cache_fd)
    finally:
        os.close(parent_fd)


def _rename(cache_fd: int, backup_fd: int, relative: str) -> None:
    if "/" not in relative:
        os.rename(relative, relative, src_dir_fd=cache_fd, dst_dir_fd=backup_fd)
        return
    compiler, name = relative.split("/", 1)
    source_fd = os.open(compiler, _DIRECTORY, dir_fd=cache_fd)  # a compiler directory swapped for a link: ELOOP
    try:
        try:
            os.mkdir(compiler, mode=0o700, dir_fd=backup_fd)
        except FileExistsError:
            if not stat.S_ISDIR(os.stat(compiler, dir_fd=backup_fd, follow_symlinks=False).st_mode):
                raise
        target_fd = os.open(compiler, _DIRECTORY, dir_fd=backup_fd)
        try:
            os.rename(name, name, src_dir_fd=source_fd, dst_dir_fd=target_fd)
        finally:
            os.close(target_fd)
    finally:
        os.close(source_fd)
