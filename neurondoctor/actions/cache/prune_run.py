"""`cache prune` from options to outcome: which cache, what moves, the confirmation, the moves (actions/cache/prune.py
says what moves and how)."""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Callable, Optional

from neurondoctor import exit_codes
from neurondoctor.actions.cache.prune import (
    Move,
    PruneCriteria,
    PruneResult,
    apply_moves,
    backup_name,
    hold_cache,
    plan_moves,
)
from neurondoctor.actions.cache.status import SCHEMA, local_cache, size_text
from neurondoctor.actions.held_directories import still_there
from neurondoctor.host.cache_index import index_cache
from neurondoctor.host.os_release import is_container
from neurondoctor.host.rootfs import RootFS
from neurondoctor.output_text import field_text
from neurondoctor.rules.host_stack.compile_cache import stale_after_s
from neurondoctor.rules.host_stack.compiler_installs import compiler_environments


@dataclass
class PruneOptions:
    criteria: PruneCriteria
    root: str = "/"
    cache: Optional[str] = None  # the cache named on the command line, else the one neuronx-cc uses
    venvs: Sequence[str] = ()
    pythons: Sequence[str] = ()
    dry_run: bool = False
    yes: bool = False


@dataclass
class PruneOutcome:
    cache: str
    moves: list[Move]
    backup: Optional[str] = None  # where they went (None: a dry run, or nothing to move)
    result: Optional[PruneResult] = None
    dry_run: bool = False
    installed_compilers: Sequence[str] = ()

    @property
    def exit_code(self) -> int:
        failed = self.result is not None and (self.result.failed or self.result.stopped)
        return exit_codes.FINDINGS if failed else exit_codes.OK


def installed_compilers(root: str, venvs: Sequence[str], pythons: Sequence[str],
                        environ: Mapping[str, str]) -> list[str]:
    """Every neuronx-cc version installed in the environments `check` would judge here (or the ones named)."""
    from neurondoctor.actions.check.check_run import CheckOptions, collect_environments
    from neurondoctor.release_data.catalog import load_catalog

    options = CheckOptions(root=root, venvs=venvs, pythons=pythons, environ=environ)
    environments, _ = collect_environments(RootFS(root), options, {}, [], load_catalog(), [])
    return sorted({version for _, version in compiler_environments(environments)})


def run_prune(options: PruneOptions, environ: Mapping[str, str], confirm: Callable[[str], bool]) -> PruneOutcome:
    criteria = options.criteria
    if not criteria.any:
        raise exit_codes.UserError("name what to prune: --failed, --stale-locks, --other-compilers, --broken or "
                                   "--older-than DAYS")
    path = local_cache(options.cache, environ, "prune")
    fs = RootFS(options.root)
    index = index_cache(fs, os.path.abspath(path), keep_entries=True)
    if index.problem:
        raise exit_codes.UserError(f"{path}: {index.problem}")
    if not index.exists or index.host_path is None:
        if options.cache:
            raise exit_codes.UserError(f"{path}: no such directory")
        return PruneOutcome(path, [], dry_run=options.dry_run)
    compilers: list[str] = []
    if criteria.other_compilers:
        compilers = installed_compilers(options.root, options.venvs, options.pythons, environ)
        if not compilers:
            raise exit_codes.UserError("no environment here has neuronx-cc installed, so every compiler's entries "
                                       "would count as another's: name the one you use with --venv or --python")
    now = time.time()
    moves = plan_moves(index, criteria, compilers, now, stale_after_s(is_container(fs)))
    outcome = PruneOutcome(path, moves, dry_run=options.dry_run, installed_compilers=compilers)
    if not moves or options.dry_run:
        return outcome
    total = sum(move.bytes for move in moves)
    trusted = str(fs.root)
    with hold_cache(index, trusted, moves) as held:  # from here on, nothing is opened through the path
        question = (f"Move {len(moves)} cache item(s) ({size_text(total)}) into "
                    f"{field_text(os.path.join(os.path.dirname(index.host_path), backup_name(index.host_path, now)))}?")
        if not options.yes and not confirm(question):
            raise exit_codes.UserError("nothing was moved (not confirmed)", exit_codes.FINDINGS)
        if not still_there(held.cache, trusted):
            raise exit_codes.UserError(f"{path} was moved or replaced while the question waited; nothing was moved")
        outcome.result = apply_moves(held, moves, now)
    outcome.backup = outcome.result.backup
    return outcome


def prune_document(options: PruneOptions, outcome: PruneOutcome) -> dict[str, Any]:
    """`neurondoctor.cache/1` with a `prune` object (docs/cache.md)."""
    moved = outcome.result.moved if outcome.result else []
    return {"schema": SCHEMA, "root": options.root,
            "prune": {"cache": outcome.cache, "dry_run": outcome.dry_run, "backup": outcome.backup,
                      "installed_compilers": list(outcome.installed_compilers),
                      "moves": [{"path": move.path, "reason": move.reason, "bytes": move.bytes}
                                for move in outcome.moves],
                      "moved": [move.path for move in moved], "moved_bytes": sum(move.bytes for move in moved),
                      "failed": outcome.result.failed if outcome.result else [],
                      "stopped": outcome.result.stopped if outcome.result else None}}


def render_prune_text(outcome: PruneOutcome) -> str:
    """Every path in it names what the cache holds, a name anyone may have made: each is one field (`field_text`)."""
    cache = field_text(outcome.cache)
    if not outcome.moves:
        return f"{cache}: nothing to prune.\n"
    total = sum(move.bytes for move in outcome.moves)
    lines = [f"{cache}: {len(outcome.moves)} item(s), {size_text(total)}"]
    lines += [f"  {field_text(move.path)}  ({field_text(move.reason)})" for move in outcome.moves]
    if outcome.dry_run:
        lines.append("Dry run: nothing was moved. Run again without --dry-run to move them.")
    elif outcome.result is not None:
        moved = sum(move.bytes for move in outcome.result.moved)
        lines.append(f"Moved {len(outcome.result.moved)} item(s) ({size_text(moved)}) into "
                     f"{field_text(outcome.result.backup)}. "
                     "Nothing was deleted: remove that folder once the next runs are good.")
        lines += [f"  not moved: {field_text(failure)}" for failure in outcome.result.failed]
    return "\n".join(lines) + "\n"
