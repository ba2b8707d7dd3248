"""Attack class: scan, then act on something else. `cache prune` and `check --fix` ask before they move anything,
and the answer may take an hour: a user who owns a folder on the way swaps it for a link while root reads the
question, so that the moves land on another user's files. What was scanned is held open by descriptor from before the
question (never resolved again after it), so the swap moves nothing anywhere and the run ends in one line. A full or
read-only filesystem, or a folder root may not write, is one `error:` line, never a traceback."""

from __future__ import annotations

import contextlib
import json
import os
import select
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neurondoctor import exit_codes
from neurondoctor.actions.cache.prune import PruneCriteria
from neurondoctor.actions.cache.prune_run import PruneOptions, run_prune
from tests.cache_fixture import entry
from tests.conftest import REPO, cli_env, run_cli
from tests.small_filesystem import small_filesystem

COMPILER = "neuronxcc-2.15.141.0+d3cfc8ca"
FAILED = ("MODULE_e358924ac4ea2b2bb562+39f12043", "MODULE_159a076e8438a4c04d96+39f12043")
NOBODY = 65534


def _tree(path: Path) -> dict[str, bytes]:
    """Every file under `path` with its content, and every folder (links not followed)."""
    found: dict[str, bytes] = {}
    for item in sorted(path.rglob("*")):
        key = str(item.relative_to(path))
        found[key] = b"<dir>" if item.is_dir() and not item.is_symlink() else \
            os.readlink(item).encode() if item.is_symlink() else item.read_bytes()
    return found


def _caches(tmp_path: Path) -> tuple[Path, Path]:
    """A user's cache at `alice/cache` with two failed entries, and another user's cache (the victim) with entries of
    the same names, which a move through a swapped path would take."""
    alice = tmp_path / "alice"
    victim = tmp_path / "bob"
    for name in FAILED:
        entry(alice / "cache" / COMPILER, name, "failed")
        entry(victim / "cache" / COMPILER, name, "failed", log_text="bob's own compile\n")
    if os.geteuid() == 0:  # the attacker owns her folder, as on a real host
        for path in (alice, *alice.rglob("*")):
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
    return alice / "cache", victim


def _swap(cache: Path, victim: Path, what: str) -> None:
    """What the owner of `alice/` does while the question waits: her folder (or the cache itself) is moved away and
    a link to the victim's takes its place."""
    if what == "folder":
        cache.parent.rename(cache.parent.with_name("alice.moved"))
        cache.parent.symlink_to(victim)
    else:
        cache.rename(cache.with_name("cache.moved"))
        cache.symlink_to(victim / "cache")


@pytest.mark.parametrize("what", ["folder", "cache"])
def test_a_swap_while_the_question_waits_moves_nothing(tmp_path: Path, what: str) -> None:
    cache, victim = _caches(tmp_path)
    victim_before = _tree(victim)
    asked: list[str] = []

    def answer_after_the_swap(question: str) -> bool:
        asked.append(question)
        _swap(cache, victim, what)
        return True

    with pytest.raises(exit_codes.UserError) as refused:
        run_prune(PruneOptions(PruneCriteria(failed=True), cache=str(cache)), cli_env(), answer_after_the_swap)
    assert len(asked) == 1 and refused.value.exit_code == exit_codes.BAD_INPUT
    assert refused.value.message == f"{cache} was moved or replaced while the question waited; nothing was moved"
    assert _tree(victim) == victim_before  # nothing of the victim's moved, no backup folder beside it
    moved_away = tmp_path / "alice.moved" / "cache" if what == "folder" else tmp_path / "alice" / "cache.moved"
    assert sorted(path.name for path in (moved_away / COMPILER).iterdir()) == sorted(FAILED)
    assert not list(tmp_path.rglob("*.neurondoctor-*"))


def _prune_at_a_terminal(cache: Path, victim: Path) -> tuple[int, str]:
    """`cache prune --failed` with a pseudo-terminal as stdin: the swap is made once the question is on stderr, then
    the answer `y` is typed."""
    controller, terminal = os.openpty()
    try:
        process = subprocess.Popen([sys.executable, "-m", "neurondoctor", "cache", "prune", str(cache), "--failed"],
                                   stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=cli_env(),
                                   cwd=str(REPO))
        assert process.stderr is not None
        said = b""
        while not said.endswith(b"[y/N] "):
            ready, _, _ = select.select([process.stderr], [], [], 60)
            assert ready, f"no question on stderr: {said!r}"
            chunk = os.read(process.stderr.fileno(), 4096)
            assert chunk, f"the run ended before asking: {said!r}"
            said += chunk
        _swap(cache, victim, "folder")
        os.write(controller, b"y\n")
        out, rest = process.communicate(timeout=60)
        assert out == b""
        return process.returncode, (said + rest).decode()
    finally:
        os.close(terminal)
        os.close(controller)


def test_the_same_swap_at_a_terminal_ends_in_one_line(tmp_path: Path) -> None:
    cache, victim = _caches(tmp_path)
    victim_before = _tree(victim)
    code, stderr = _prune_at_a_terminal(cache, victim)
    question, _, after = stderr.partition("[y/N] ")
    assert question.startswith("Move 2 cache item(s)") and "Traceback" not in stderr
    assert code == 2 and after.splitlines() == [
        f"error: {cache} was moved or replaced while the question waited; nothing was moved"]
    assert _tree(victim) == victim_before and not list(tmp_path.rglob("*.neurondoctor-*"))


def test_a_fix_that_moves_files_moves_nothing_else_after_a_swap(tmp_path: Path) -> None:
    """`check --fix` moves what a plan removes into a backup folder: its folder is held before the question, so a
    site-packages swapped for a link meanwhile moves nothing of what the link points at."""
    from neurondoctor.actions.check.fix_apply import MOVE, apply_step, classify, hold_step, release_step
    from neurondoctor.facts.python_env import PythonEnvironment, SiteDir
    from neurondoctor.rules.fix import command

    venv = tmp_path / "venv"
    site = venv / "lib/python3.11/site-packages"
    (site / "torch_neuronx").mkdir(parents=True)
    (site / "torch_neuronx/__init__.py").write_text("raise ImportError('WRONG PACKAGE')\n")
    env = PythonEnvironment(path=str(venv), mode="static", interpreter=str(venv / "bin/python"),
                            site_dirs=[SiteDir(str(site), "venv")])
    victim = tmp_path / "other/site-packages"
    (victim / "torch_neuronx").mkdir(parents=True)
    (victim / "torch_neuronx/__init__.py").write_text("someone else's\n")
    victim_before = _tree(victim.parent)
    step = classify(command(*shlex.split(f"rm -rf {site / 'torch_neuronx'}")), env, {})
    assert step.action == MOVE
    hold_step(step)  # before the question
    try:
        site.rename(site.with_name("site-packages.moved"))  # while the question waits
        site.symlink_to(victim)
        result = apply_step(step, "20261201T120000Z", {})
    finally:
        release_step(step)
    assert result.ok, result.message
    assert _tree(victim.parent) == victim_before  # the victim's package stays, and no backup folder is beside it
    moved = site.parent / "site-packages.neurondoctor-20261201T120000Z/torch_neuronx/__init__.py"
    assert moved.read_text() == "raise ImportError('WRONG PACKAGE')\n"  # what was planned is what moved


def _fill_inodes(folder: Path, leave: int) -> None:
    """Make files until `leave` inodes are free on the filesystem of `folder`."""
    number = 0
    while os.statvfs(folder).f_ffree > leave:
        (folder / f"filler-{number}").touch()
        number += 1


def _prune_json(cache: Path) -> subprocess.CompletedProcess[str]:
    return run_cli(["cache", "prune", str(cache), "--failed", "--yes", "--json"])


@pytest.mark.parametrize("how", ["full", "read-only", "immutable"])
def test_a_backup_folder_that_cannot_be_made_is_one_line(tmp_path: Path, how: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root: mounts a tmpfs, or makes a folder immutable")
    with contextlib.ExitStack() as stack:
        base = tmp_path / "base" if how == "immutable" else stack.enter_context(
            small_filesystem(tmp_path / "fs", "size=4m,nr_inodes=64"))
        cache = base / "cache"
        for name in FAILED:
            entry(cache / COMPILER, name, "failed")
        before = _tree(cache)
        if how == "full":
            _fill_inodes(base, 0)
        elif how == "read-only":
            subprocess.run(["mount", "-o", "remount,ro", str(base)], check=True)
        else:
            made = subprocess.run(["chattr", "+i", str(base)], capture_output=True)
            if made.returncode != 0:
                pytest.skip(f"chattr +i is not supported here: {made.stderr.decode().strip()}")
            stack.callback(subprocess.run, ["chattr", "-i", str(base)], check=False)
        result = _prune_json(cache)
        assert _tree(cache) == before
    reason = {"full": "No space left on device", "read-only": "Read-only file system",
              "immutable": "Operation not permitted"}[how]
    assert result.returncode == 2 and result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr.splitlines() == [
        f"error: could not create a backup folder beside {cache}: {reason}; nothing was moved"]


def test_a_filesystem_that_fills_while_moving_stops_in_one_line(tmp_path: Path) -> None:
    """The backup folder is made, then the filesystem has no inode left for the compiler's folder in it: what moved
    (nothing) is reported, and why the rest stayed is one `error:` line, exit 1."""
    if os.geteuid() != 0:
        pytest.skip("needs root: mounts a tmpfs")
    with small_filesystem(tmp_path / "fs", "size=4m,nr_inodes=64") as base:
        cache = base / "cache"
        for name in FAILED:
            entry(cache / COMPILER, name, "failed")
        before = _tree(cache)
        _fill_inodes(base, 1)  # room for the backup folder, none for what goes in it
        result = _prune_json(cache)
        assert _tree(cache) == before
        [backup] = [path.name for path in base.iterdir() if ".neurondoctor-" in path.name]
    assert result.returncode == 1 and "Traceback" not in result.stderr
    document = json.loads(result.stdout)["prune"]
    assert document["moved"] == [] and document["failed"] == []
    first = f"{COMPILER}/{FAILED[1]}"  # moves go in name order
    assert document["stopped"] == result.stderr.removeprefix("error: ").rstrip("\n")
    assert result.stderr.splitlines() == [
        f"error: could not move {first} into {base / backup}: No space left on device; 0 of 2 moved, the other 2 "
        "stay in the cache"]


def test_a_normal_prune_still_moves_and_says_where(tmp_path: Path) -> None:
    """Near miss: with nothing swapped, the held cache's entries move into the new folder beside it."""
    cache, _ = _caches(tmp_path)
    started = time.time()
    result = _prune_json(cache)
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)["prune"]
    backup = Path(document["backup"])
    assert backup.parent == cache.parent and backup.name.startswith("cache.neurondoctor-")
    assert sorted(document["moved"]) == sorted(f"{COMPILER}/{name}" for name in FAILED)
    assert sorted(path.name for path in (backup / COMPILER).iterdir()) == sorted(FAILED)
    assert backup.stat().st_uid == os.geteuid() and backup.stat().st_mode & 0o777 == 0o700
    assert backup.stat().st_mtime >= started - 1
