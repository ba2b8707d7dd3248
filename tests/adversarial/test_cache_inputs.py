"""Attack class: a hostile compile cache. The default cache is under /var/tmp, where anyone may create
names, and the doctor runs as root: a link never leads the walk out of the cache or the root, a FIFO or a device
where a file belongs never blocks it, a log linked to a secret is never read, and names are data."""

from __future__ import annotations

import os
import time
from pathlib import Path

from neurondoctor.facts.cache_index import ENTRY_FAILED
from neurondoctor.host.cache_index import index_cache
from neurondoctor.host.rootfs import RootFS
from tests.cache_fixture import entry

COMPILER = "neuronxcc-2.15.141.0+d3cfc8ca"


def test_links_are_never_followed_out_of_the_cache_or_the_root(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = tmp_path / "outside" / COMPILER
    entry(outside, "MODULE_aaaaaaaaaaaaaaaaaaaa+39f12043", "done")
    cache = root / "var/tmp/neuron-compile-cache"
    entry(cache / COMPILER, "MODULE_bbbbbbbbbbbbbbbbbbbb+39f12043", "done")
    (cache / COMPILER / "MODULE_cccccccccccccccccccc+39f12043").symlink_to(outside / "MODULE_aaaaaaaaaaaaaaaaaaaa"
                                                                          "+39f12043")
    (cache / "neuronxcc-2.19.8089.0+8ab9f450").symlink_to(outside)  # a whole compiler directory elsewhere
    index = index_cache(RootFS(root), "/var/tmp/neuron-compile-cache")
    assert [compiler.name for compiler in index.compilers] == [COMPILER]
    compiler = index.compilers[0]
    assert compiler.links == 1 and compiler.states["done"] == 1 and compiler.entries == 2
    assert index.other_names == 1

    escaping = tmp_path / "root2"
    (escaping / "var/tmp").mkdir(parents=True)
    (escaping / "var/tmp/neuron-compile-cache").symlink_to("/../../../../" + str(tmp_path / "outside"))
    escaped = index_cache(RootFS(escaping), "/var/tmp/neuron-compile-cache")
    # The link resolves inside the root (an absolute target is the root's own path), where nothing is found.
    assert escaped.compilers == [] and not escaped.exists


def test_a_fifo_or_a_device_where_a_file_belongs_never_blocks(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    failed = entry(cache / COMPILER, "MODULE_dddddddddddddddddddd+39f12043", "incomplete")
    os.mkfifo(failed / "model.log")  # a reader would block on open without a writer
    fifo_neff = entry(cache / COMPILER, "MODULE_eeeeeeeeeeeeeeeeeeee+39f12043", "incomplete")
    os.mkfifo(fifo_neff / "model.neff")
    started = time.monotonic()
    index = index_cache(RootFS("/"), str(cache))
    assert time.monotonic() - started < 5
    compiler = index.compilers[0]
    assert compiler.states[ENTRY_FAILED] == 1
    assert compiler.failed_errors["MODULE_dddddddddddddddddddd+39f12043"].startswith("(log unreadable: ")


def test_a_log_linked_to_a_secret_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "shadow"
    secret.write_text("root:$6$ERROR-hash-that-must-not-leak:19000:0:99999:7:::\n")
    cache = tmp_path / "cache"
    planted = entry(cache / COMPILER, "MODULE_ffffffffffffffffffff+39f12043", "incomplete")
    (planted / "model.log").symlink_to(secret)
    index = index_cache(RootFS("/"), str(cache))
    error = index.compilers[0].failed_errors["MODULE_ffffffffffffffffffff+39f12043"]
    assert "must-not-leak" not in error and error.startswith("(log unreadable: ")


def test_names_with_control_characters_stay_data(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    name = "MODULE_\x1b[31mred\nsecond line+39f12043"
    entry(cache / COMPILER, name, "failed", log_text="\x1b]0;title\x07ERROR: forged\rline\n")
    index = index_cache(RootFS("/"), str(cache))
    compiler = index.compilers[0]
    assert compiler.failed_entries == [name]  # kept as it is: every renderer escapes it (output_text)
    assert compiler.failed_errors[name].startswith("\x1b]0;title\x07ERROR: forged")


def test_prune_never_moves_what_a_swapped_link_points_at(tmp_path: Path) -> None:
    """Between the scan and the question, a compiler directory is swapped for a link to a directory elsewhere holding
    an entry of the same name: it is held through a descriptor opened without following links (refused), so the entry
    elsewhere stays where it is and the move is reported as not done."""
    from neurondoctor.actions.cache.prune import PruneCriteria, apply_moves, hold_cache, plan_moves

    cache = tmp_path / "cache"
    entry(cache / COMPILER, "MODULE_e358924ac4ea2b2bb562+39f12043", "failed")
    index = index_cache(RootFS("/"), str(cache), keep_entries=True)
    moves = plan_moves(index, PruneCriteria(failed=True), [], time.time())
    assert [move.path for move in moves] == [f"{COMPILER}/MODULE_e358924ac4ea2b2bb562+39f12043"]
    elsewhere = tmp_path / "elsewhere"
    victim = entry(elsewhere, "MODULE_e358924ac4ea2b2bb562+39f12043", "done")
    (cache / COMPILER).rename(tmp_path / "moved-away")
    (cache / COMPILER).symlink_to(elsewhere)
    with hold_cache(index, "/", moves) as held:
        result = apply_moves(held, moves, time.time())
    assert result.moved == [] and len(result.failed) == 1 and result.failed[0].startswith(moves[0].path)
    assert (victim / "model.neff").is_file()  # untouched
    assert not any(Path(result.backup).rglob("model.neff"))


def test_prune_moves_a_link_entry_never(tmp_path: Path) -> None:
    """An entry that is a link (to a secret directory, say) is counted, never chosen, so never renamed."""
    from neurondoctor.actions.cache.prune import PruneCriteria, plan_moves

    cache = tmp_path / "cache"
    entry(cache / COMPILER, "MODULE_aaaaaaaaaaaaaaaaaaaa+39f12043", "failed")
    (cache / COMPILER / "MODULE_bbbbbbbbbbbbbbbbbbbb+39f12043").symlink_to("/etc")
    index = index_cache(RootFS("/"), str(cache), keep_entries=True)
    moves = plan_moves(index, PruneCriteria(failed=True, older_than_days=0), [], time.time() + 10)
    assert [move.path for move in moves] == [f"{COMPILER}/MODULE_aaaaaaaaaaaaaaaaaaaa+39f12043"]


def test_a_neff_that_is_a_device_is_reported_never_opened(tmp_path: Path) -> None:
    """A character device (here /dev/null's numbers) where a NEFF belongs: `cache verify` says it is not a regular
    file; opening it could trigger a device's side effects."""
    import stat

    import pytest

    from neurondoctor.actions.cache.verify import neff_problem

    planted = entry(tmp_path / "cache" / COMPILER, "MODULE_aaaaaaaaaaaaaaaaaaaa+39f12043", "done")
    (planted / "model.neff").unlink()
    try:
        os.mknod(planted / "model.neff", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("mknod needs root (CI runs the tests as root)")
    assert neff_problem(str(planted / "model.neff")) == "model.neff is not a regular file"
    index = index_cache(RootFS("/"), str(tmp_path / "cache"))
    assert index.compilers[0].bytes < 4096  # the device's size is not counted as the NEFF's


def test_control_characters_in_names_are_escaped_in_the_text(tmp_path: Path) -> None:
    from tests.conftest import cli_env, run_cli

    cache = tmp_path / "cache"
    entry(cache / COMPILER, "MODULE_\x1b[2J\x1b]0;owned\x07+39f12043", "failed",
          log_text="ERROR: \x1b[31mred\x1b[0m and a\rcarriage return\n")
    result = run_cli(["cache", "status", str(cache)], env=cli_env())
    assert result.returncode == 0
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout and "\r" not in result.stdout
    assert "MODULE_" in result.stdout and "ERROR: " in result.stdout


def test_a_framework_cache_counts_no_link_and_opens_no_fifo(tmp_path: Path) -> None:
    """vLLM Neuron's and TorchNeuron's keyed layouts under /tmp, where anyone may create names: a key that is a link
    to a big folder elsewhere is not counted, a NEFF that is a link is not sized, a FIFO named like a NEFF is never
    opened (the count would block on it), and a bounded count says where it stopped."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "huge.bin").write_bytes(b"\0" * 65536)
    vllm = tmp_path / "vllm"
    (vllm / ("a" * 32)).mkdir(parents=True)
    (vllm / ("a" * 32) / "model.neff").write_bytes(b"\0" * 1000)
    (vllm / ("a" * 32) / "linked.neff").symlink_to(outside / "huge.bin")
    (vllm / ("b" * 32)).symlink_to(outside)
    index = index_cache(RootFS("/"), str(vllm))
    assert index.keyed is not None and index.keyed.entries == 1 and index.keyed.bytes == 1000

    neff = tmp_path / "neff"
    shard = neff / "ab/cd"
    shard.mkdir(parents=True)
    os.mkfifo(shard / "abcd0001.neff")
    (shard / "abcd0002.neff").symlink_to(outside / "huge.bin")
    for number in range(3, 8):
        (shard / f"abcd{number:04d}.neff").write_bytes(b"\0" * 10)
    (neff / "ef").symlink_to(outside)
    started = time.monotonic()
    counted = index_cache(RootFS("/"), str(neff))
    assert time.monotonic() - started < 5
    assert counted.keyed is not None and counted.keyed.done == 5 and counted.keyed.bytes == 50
    bounded = index_cache(RootFS("/"), str(neff), max_entries=2)
    assert bounded.counted == 2 and bounded.cut == "counted up to 2 entries"
