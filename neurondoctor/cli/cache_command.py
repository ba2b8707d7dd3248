"""`neurondoctor cache status|verify|prune` (docs/cache.md): an argparse front end, like `check`'s, so that counting
a cache of 100,000 entries does not first pay for typer's import (cli dispatches here before typer is loaded)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence

from neurondoctor import exit_codes
from neurondoctor.cli.output_format import FORMAT_HELP, chosen_format
from neurondoctor.output_text import write_text

DEFAULT_CACHE_HELP = "the cache (default: the one neuronx-cc uses here: --cache_dir, NEURON_COMPILE_CACHE_URL, or " \
                     "/var/tmp/neuron-compile-cache)"


def _output_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", default="/", metavar="DIR", help="work on the tree under DIR (the paths are in it)")
    parser.add_argument("--json", dest="as_json", action="store_true",
                        help="one JSON document (neurondoctor.cache/1) on stdout")
    parser.add_argument("--format", dest="output_format", default="text", metavar="FORMAT", help=FORMAT_HELP)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="neurondoctor cache", description="The Neuron compile caches of this host.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    def command(name: str, summary: str, description: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=summary, description=description)

    status = command("status", "every cache, counted", "Every compile cache neuronx-cc and vLLM would use here: per "
                     "compiler directory, its entries (done, failed, incomplete), locks and their holders, size and "
                     "age. Remote caches are named, never contacted. Writes nothing.")
    status.add_argument("paths", nargs="*", metavar="DIR", help="count these caches instead of the configured ones")
    _output_arguments(status)
    verify = command("verify", "is each finished entry whole", "Check that each finished entry is whole: its NEFF's "
                     "header and size, its done marker. Reads 1 KiB of each NEFF; writes nothing. Exit 1 when an "
                     "entry is not whole.")
    verify.add_argument("cache", nargs="?", metavar="DIR", help=DEFAULT_CACHE_HELP)
    _output_arguments(verify)
    prune = command("prune", "move entries out of the way", "Move failed entries, stale locks, other compilers' "
                    "entries, broken or old entries out of the cache, into <cache>.neurondoctor-<UTC> beside it: "
                    "never deletes, refuses while a live process holds a lock.")
    prune.add_argument("cache", nargs="?", metavar="DIR", help=DEFAULT_CACHE_HELP)
    prune.add_argument("--failed", action="store_true", help="failed entries, which later runs skip")
    prune.add_argument("--stale-locks", action="store_true", help="unfinished entries with a lock no process holds, "
                       "older than 10 minutes (3 hours in a container): later runs wait on them")
    prune.add_argument("--other-compilers", action="store_true", help="whole directories of neuronx-cc versions no "
                       "environment here has installed")
    prune.add_argument("--older-than", type=float, metavar="DAYS", help="entries unchanged for DAYS days")
    prune.add_argument("--broken", action="store_true", help="finished entries whose NEFF is not whole (verify)")
    prune.add_argument("--venv", action="append", default=[], metavar="DIR",
                       help="the environment whose neuronx-cc counts (--other-compilers; default: every one check "
                            "finds; repeatable)")
    prune.add_argument("--python", action="append", default=[], metavar="EXE", help="the same, by interpreter")
    prune.add_argument("--dry-run", action="store_true", help="print what would move; move nothing")
    prune.add_argument("--yes", action="store_true", help="do not ask (needed without a terminal)")
    _output_arguments(prune)
    return parser


def run(argv: Sequence[str]) -> int:
    args = build_parser().parse_args(list(argv))
    as_json = chosen_format(args.as_json, args.output_format) == "json"
    if args.command == "status":
        return _status(args, as_json)
    if args.command == "verify":
        return _verify(args, as_json)
    return _prune(args, as_json)


def _emit(document: dict[str, object], text: str, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(document) + "\n")
    else:
        write_text(text)


def _status(args: argparse.Namespace, as_json: bool) -> int:
    from neurondoctor.actions.cache.status import cache_status, render_status_text, status_document
    from neurondoctor.host.rootfs import RootFS

    fs = RootFS(args.root)
    for path in args.paths:
        if "://" not in path and not fs.is_dir(os.path.abspath(path)):
            raise exit_codes.UserError(f"{path}: no such directory" + (f" under {args.root}" if args.root != "/"
                                                                      else ""))
    locations = cache_status(args.root, os.environ, args.paths)
    _emit(status_document(args.root, locations), render_status_text(locations), as_json)
    return exit_codes.OK


def _verify(args: argparse.Namespace, as_json: bool) -> int:
    from neurondoctor.actions.cache.status import local_cache
    from neurondoctor.actions.cache.verify import render_verify_text, verify_document, verify_entries
    from neurondoctor.host.cache_index import index_cache
    from neurondoctor.host.rootfs import RootFS

    path = local_cache(args.cache, os.environ, "verify")
    index = index_cache(RootFS(args.root), os.path.abspath(path), keep_entries=True)
    if index.problem or (args.cache and not index.exists):
        raise exit_codes.UserError(f"{path}: {index.problem or 'no such directory'}")
    checked, problems = verify_entries(index)
    _emit(verify_document(args.root, path, checked, problems), render_verify_text(path, checked, problems), as_json)
    return exit_codes.FINDINGS if problems else exit_codes.OK


def _confirm(question: str) -> bool:
    from neurondoctor.cli.fix_command import ask

    if not sys.stdin.isatty():
        raise exit_codes.UserError("prune without a terminal needs --yes (it would move entries unasked)")
    return ask(sys.stderr, f"{question} [y/N] ", input)


def _prune(args: argparse.Namespace, as_json: bool) -> int:
    from neurondoctor.actions.cache.prune import PruneCriteria
    from neurondoctor.actions.cache.prune_run import PruneOptions, prune_document, render_prune_text, run_prune
    from neurondoctor.typed_paths import check_directories, check_interpreters

    if args.older_than is not None and args.older_than < 0:
        raise exit_codes.UserError(f"--older-than {args.older_than:g}: expected 0 days or more")
    check_directories("--venv", args.venv)
    check_interpreters("--python", args.python, os.environ)
    criteria = PruneCriteria(args.failed, args.stale_locks, args.other_compilers, args.older_than, args.broken)
    options = PruneOptions(criteria, root=args.root, cache=args.cache, venvs=args.venv, pythons=args.python,
                           dry_run=args.dry_run, yes=args.yes)
    outcome = run_prune(options, os.environ, _confirm)
    _emit(prune_document(options, outcome), render_prune_text(outcome), as_json)
    return outcome.exit_code
