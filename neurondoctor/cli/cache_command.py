"""`neurondoctor cache status|verify|prune` (docs/cache.md): the compile caches of this host. What a command needs
beyond the command line is imported inside it, so counting a cache of 100,000 entries pays for nothing else."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Optional

import typer

from neurondoctor import exit_codes, json_data
from neurondoctor.cli.output_format import FormatOption, JsonOption, chosen_format
from neurondoctor.cli.typer_apps import command_group
from neurondoctor.output_text import write_text

app = command_group("The Neuron compile caches of this host: status, verify, prune.")

def _existing_root(root: str) -> str:
    """`--root` names a directory that exists, as every command's `--root` must (one `error:` line, exit 2): a cache
    looked for under a tree that is not there would read as "not present"."""
    from neurondoctor.typed_paths import check_directories

    check_directories("--root", [root])
    return root


CacheRoot = Annotated[str, typer.Option("--root", metavar="DIR", callback=_existing_root,
                                        help="Work on the tree under DIR (the paths are in it).")]
DefaultCache = Annotated[Optional[str], typer.Argument(
    metavar="[DIR]", help="The cache (default: the one neuronx-cc uses here: --cache_dir, NEURON_COMPILE_CACHE_URL, "
                          "or /var/tmp/neuron-compile-cache).", show_default=False)]


def _emit(document: dict[str, object], text: str, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json_data.dumps(document) + "\n")
    else:
        write_text(text)


@app.command("status")
def status(
    paths: Annotated[Optional[list[str]], typer.Argument(
        metavar="[DIR]...", help="Count these caches instead of the configured ones.", show_default=False)] = None,
    root: CacheRoot = "/",
    as_json: JsonOption = False,
    output_format: FormatOption = "text",
) -> None:
    """Every compile cache neuronx-cc and vLLM would use here: per compiler directory, its entries (done, failed,
    incomplete), locks and their holders, size and age. Remote caches are named, never contacted. Writes nothing."""
    from neurondoctor.actions.cache.status import cache_status, render_status_text, status_document
    from neurondoctor.host.rootfs import RootFS

    json_out = chosen_format(as_json, output_format) == "json"
    fs = RootFS(root)
    for path in paths or []:
        if "://" not in path and not fs.is_dir(os.path.abspath(path)):
            raise exit_codes.UserError(f"{path}: no such directory" + (f" under {root}" if root != "/" else ""))
    locations = cache_status(root, os.environ, paths or [])
    _emit(status_document(root, locations), render_status_text(locations), json_out)


@app.command("verify")
def verify(
    cache: DefaultCache = None,
    root: CacheRoot = "/",
    as_json: JsonOption = False,
    output_format: FormatOption = "text",
) -> None:
    """Check that each finished entry is whole: its NEFF's header and size, its done marker. Reads 1 KiB of each
    NEFF; writes nothing. Exit 1 when an entry is not whole."""
    from neurondoctor.actions.cache.status import local_cache
    from neurondoctor.actions.cache.verify import render_verify_text, verify_document, verify_entries
    from neurondoctor.host.cache_index import index_cache
    from neurondoctor.host.rootfs import RootFS

    json_out = chosen_format(as_json, output_format) == "json"
    path = local_cache(cache, os.environ, "verify")
    index = index_cache(RootFS(root), os.path.abspath(path), keep_entries=True)
    if index.problem or (cache and not index.exists):
        raise exit_codes.UserError(f"{path}: {index.problem or 'no such directory'}")
    checked, problems = verify_entries(index)
    _emit(verify_document(root, path, checked, problems, index.exists),
          render_verify_text(path, checked, problems, index.exists), json_out)
    raise typer.Exit(exit_codes.FINDINGS if problems else exit_codes.OK)


def _confirm(question: str) -> bool:
    from neurondoctor.cli.fix_command import ask

    if not sys.stdin.isatty():
        raise exit_codes.UserError("prune without a terminal needs --yes (it would move entries unasked)")
    return ask(sys.stderr, f"{question} [y/N] ", input)


@app.command("prune")
def prune(
    cache: DefaultCache = None,
    failed: Annotated[bool, typer.Option("--failed", help="Failed entries, which later runs skip.")] = False,
    stale_locks: Annotated[bool, typer.Option(
        "--stale-locks", help="Unfinished entries with a lock no process holds, older than 10 minutes (3 hours in a "
                              "container): later runs wait on them.")] = False,
    other_compilers: Annotated[bool, typer.Option(
        "--other-compilers", help="Whole directories of neuronx-cc versions no environment here has installed.")
    ] = False,
    older_than: Annotated[Optional[float], typer.Option(
        "--older-than", metavar="DAYS", help="Entries unchanged for DAYS days.")] = None,
    broken: Annotated[bool, typer.Option("--broken", help="Finished entries whose NEFF is not whole (verify).")
                      ] = False,
    venv: Annotated[Optional[list[str]], typer.Option(
        "--venv", metavar="DIR", help="The environment whose neuronx-cc counts (--other-compilers; default: every "
                                      "one check finds; repeatable).")] = None,
    python: Annotated[Optional[list[str]], typer.Option(
        "--python", metavar="EXE", help="The same, by interpreter.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print what would move; move nothing.")] = False,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask (needed without a terminal).")] = False,
    root: CacheRoot = "/",
    as_json: JsonOption = False,
    output_format: FormatOption = "text",
) -> None:
    """Move failed entries, stale locks, other compilers' entries, broken or old entries out of the cache, into
    <cache>.neurondoctor-<UTC> beside it: never deletes, refuses while a live process holds a lock."""
    from neurondoctor.actions.cache.prune import PruneCriteria
    from neurondoctor.actions.cache.prune_run import PruneOptions, prune_document, render_prune_text, run_prune
    from neurondoctor.typed_paths import check_directories, check_interpreters

    json_out = chosen_format(as_json, output_format) == "json"
    if older_than is not None and older_than < 0:
        raise exit_codes.UserError(f"--older-than {older_than:g}: expected 0 days or more")
    check_directories("--venv", venv or [])
    check_interpreters("--python", python or [], os.environ)
    criteria = PruneCriteria(failed, stale_locks, other_compilers, older_than, broken)
    options = PruneOptions(criteria, root=root, cache=cache, venvs=venv or [], pythons=python or [],
                           dry_run=dry_run, yes=yes)
    outcome = run_prune(options, os.environ, _confirm)
    _emit(prune_document(options, outcome), render_prune_text(outcome), json_out)
    if outcome.result is not None and outcome.result.stopped:  # what moved is said above; why the rest did not
        from neurondoctor.cli.invocation import print_user_error

        print_user_error(outcome.result.stopped)
    raise typer.Exit(outcome.exit_code)
