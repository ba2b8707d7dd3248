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
is refused in one line. The cache and the compiler directories are held open from before the question to the last
move, opened without following links and checked to be the directory counted (actions/held_directories.py); the
renames go through those descriptors, so a folder swapped for a link while the question waits moves nothing else.
An entry whose lock a live process holds is never moved: the run is refused, naming it. `--dry-run` prints the moves
and touches nothing.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Optional

from neurondoctor import exit_codes
from neurondoctor.actions.cache.verify import neff_problem
from neurondoctor.actions.held_directories import (
    FILESYSTEM_ERRORS,
    HeldDirectory,
    hold_directory,
    make_backup_folder,
    make_folder_in,
    move_into,
)
from neurondoctor.facts.cache_index import ENTRY_DONE, ENTRY_FAILED, CacheEntry, CacheIndex
from neurondoctor.neuron_version import normalize_neuron_version
from neurondoctor.rules.fix import aside_stamp
from neurondoctor.rules.host_stack.compile_cache import STALE_LOCK_S, locks_may_be_live, stale


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
    # The finding's rule: an entry whose locks look stale moves only when no running compile can have made them.
    candidates = [entry for entry in index.entries if criteria.stale_locks and stale(entry.locks, stale_after)]
    held_back = {id(entry) for entry in candidates if locks_may_be_live(index, entry.locks)}
    if candidates and len(held_back) == len(candidates):
        live = locks_may_be_live(index, candidates[0].locks)
        raise exit_codes.UserError(f"{live}; nothing was moved (run again when no compile runs)")
    cutoff = None if criteria.older_than_days is None else now - criteria.older_than_days * 86400
    for entry in index.entries:
        if entry.compiler in moved_compilers or entry.link:
            continue
        reasons = []
        if criteria.failed and entry.state == ENTRY_FAILED:
            reasons.append("failed: later runs skip it until --retry_failed_compilation")
        if criteria.stale_locks and stale(entry.locks, stale_after) and id(entry) not in held_back:
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
    return f"{os.path.basename(cache_dir.rstrip('/'))}.neurondoctor-{aside_stamp(now)}"


class HeldCache:
    """The cache directory and the compiler directories the moves come from, held open from before the prompt to
    the last move (actions/held_directories.py)."""

    def __init__(self, cache: HeldDirectory) -> None:
        self.cache = cache
        self.compilers: dict[str, HeldDirectory] = {}
        self.unheld: dict[str, str] = {}  # compiler directory -> why it could not be held (its moves fail with it)

    def close(self) -> None:
        for held in (*self.compilers.values(), self.cache):
            held.close()

    def __enter__(self) -> HeldCache:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def hold_cache(index: CacheIndex, trusted: str, moves: Sequence[Move]) -> HeldCache:
    """The scanned cache held for `moves`, before any question is asked: opened component by component below
    `trusted` (the root) without following a link, and the very directory the scan counted (device and inode). A
    cache that is a mount point is refused: a backup beside it would be on another filesystem."""
    shown = index.path
    try:
        cache = hold_directory(index.host_path or "", trusted)
    except OSError as error:
        raise exit_codes.UserError(f"{shown} could not be opened as counted, without following a link "
                                   f"({error.strerror or error}); nothing was moved") from None
    held = HeldCache(cache)
    try:
        if cache.identity != index._identity:
            raise exit_codes.UserError(f"{shown} changed after it was counted (another directory stands there now); "
                                       "nothing was moved")
        if cache.is_mount_point():
            raise exit_codes.UserError(f"{shown} is a mount point: a backup beside it would be on another "
                                       "filesystem, and a move would be a copy; nothing was moved")
        for compiler in dict.fromkeys(move.path.split("/", 1)[0] for move in moves if "/" in move.path):
            try:
                held.compilers[compiler] = cache.child(compiler)  # a compiler directory that is a link now: ENOTDIR
            except OSError as error:
                held.unheld[compiler] = error.strerror or str(error)
    except BaseException:
        held.close()
        raise
    return held


@dataclass
class PruneResult:
    backup: str
    moved: list[Move]
    failed: list[str]  # `path: why`, one line each
    stopped: Optional[str] = None  # the filesystem refused every further move (full, read-only): why, in one line


def apply_moves(held: HeldCache, moves: Sequence[Move], now: float) -> PruneResult:
    """Rename every move into a new backup folder beside the held cache, through the held descriptors only. A move
    that fails (the entry went away, a compiler directory was swapped for a link) is recorded and the rest go on; a
    filesystem that is full or read-only stops the moves. A backup folder that cannot be made is one UserError."""
    try:
        backup = make_backup_folder(held.cache, aside_stamp(now))
    except OSError as error:
        raise exit_codes.UserError(f"could not create a backup folder beside {held.cache.path}: "
                                   f"{error.strerror or error}; nothing was moved") from None
    with backup:
        result = PruneResult(backup.path, [], [])
        for move in moves:
            try:
                _move(held, backup, move.path)
                result.moved.append(move)
            except OSError as error:
                why = error.strerror or str(error)
                if error.errno in FILESYSTEM_ERRORS:
                    result.stopped = (f"could not move {move.path} into {backup.path}: {why}; {len(result.moved)} "
                                      f"of {len(moves)} moved, the other {len(moves) - len(result.moved)} stay in "
                                      "the cache")
                    break
                result.failed.append(f"{move.path}: {why}")
    return result


def _move(held: HeldCache, backup: HeldDirectory, relative: str) -> None:
    if "/" not in relative:
        move_into(held.cache, relative, backup)
        return
    compiler, name = relative.split("/", 1)
    if compiler in held.unheld:
        raise OSError(errno.ENOTDIR, held.unheld[compiler])
    with make_folder_in(backup, compiler) as target:
        move_into(held.compilers[compiler], name, target)
