"""The compile cache index: fixture caches in the public layouts (tests/cache_fixture.py), each state
counted on its plant and not on its near miss; locks with their holder from /proc/locks; the bounds; and hostile
caches (links out of the root, FIFOs, a log linked to a secret, control characters in names)."""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

from neurondoctor.facts.cache_index import ENTRY_DONE, ENTRY_FAILED, ENTRY_INCOMPLETE, ENTRY_LOCKED
from neurondoctor.host.cache_index import entry_state, failure_line, index_cache
from neurondoctor.host.rootfs import RootFS
from tests.cache_fixture import entry, registry

CACHE = "/var/tmp/neuron-compile-cache"  # the default path, inside fixture roots


def test_each_state_in_each_layout(tmp_path: Path) -> None:
    root = tmp_path / "root"
    cache = root / CACHE.lstrip("/")
    old = cache / "neuronxcc-2.12.54.0+f631c2365"
    entry(old, "MODULE_0b0ead5e2dfe538e89a4+2c2d707e", "done", layout="2.12")
    entry(old, "MODULE_159a076e8438a4c04d96+2c2d707e", "failed", layout="2.12")  # a 5-byte NEFF beside the log
    entry(old, "MODULE_81936d6c27c85d22c403+2c2d707e", "incomplete", layout="2.12", lock=True)
    new = cache / "neuronxcc-2.15.141.0+d3cfc8ca"
    entry(new, "MODULE_b41d4f868a9e38641a9e+39f12043", "done")
    entry(new, "MODULE_12221176946427745622+d7517139", "done", flags="[]")
    entry(new, "MODULE_3de39ac50493f469550f+39f12043", "writing")  # a NEFF, no done marker yet
    entry(new, "MODULE_e358924ac4ea2b2bb562+39f12043", "failed")
    registry(new)
    newest = cache / "neuronxcc-2.23.6484.0+3b612583"
    entry(newest, "MODULE_70ee399e6fa6b6235418+39f12043", "done", layout="2.23", lock=True)  # a lock left behind
    (cache / "README.txt").write_text("not a compiler directory")

    index = index_cache(RootFS(root), CACHE)
    assert index.exists and index.problem is None and index.cut is None and index.counted == 8
    by_name = {compiler.name: compiler for compiler in index.compilers}
    assert [name for name in by_name] == ["neuronxcc-2.12.54.0+f631c2365", "neuronxcc-2.15.141.0+d3cfc8ca",
                                          "neuronxcc-2.23.6484.0+3b612583"]
    assert by_name["neuronxcc-2.12.54.0+f631c2365"].compiler_version == "2.12.54.0"
    # One state per entry: the 2.12 entry holding a lock is locked, not also incomplete.
    assert by_name["neuronxcc-2.12.54.0+f631c2365"].states == {ENTRY_DONE: 1, ENTRY_FAILED: 1, ENTRY_LOCKED: 1,
                                                               ENTRY_INCOMPLETE: 0}
    assert by_name["neuronxcc-2.15.141.0+d3cfc8ca"].states == {ENTRY_DONE: 2, ENTRY_FAILED: 1, ENTRY_LOCKED: 0,
                                                               ENTRY_INCOMPLETE: 1}
    assert by_name["neuronxcc-2.23.6484.0+3b612583"].states == {ENTRY_DONE: 1, ENTRY_FAILED: 0, ENTRY_LOCKED: 0,
                                                               ENTRY_INCOMPLETE: 0}
    assert all(sum(compiler.states.values()) == compiler.entries for compiler in index.compilers)
    assert by_name["neuronxcc-2.15.141.0+d3cfc8ca"].registry and not by_name["neuronxcc-2.12.54.0+f631c2365"].registry
    # A finished entry's leftover lock is waited on by nobody: finished entries are judged from lstat alone.
    assert [compiler.locked for compiler in index.compilers] == [1, 0, 0]
    assert index.other_names == 1
    failed = by_name["neuronxcc-2.15.141.0+d3cfc8ca"]
    assert failed.failed_entries == ["MODULE_e358924ac4ea2b2bb562+39f12043"]
    assert failed.failed_errors["MODULE_e358924ac4ea2b2bb562+39f12043"] == \
        "ERROR: Estimated peak HBM usage exceeds 16GB."
    assert failed.bytes > 2 * 5120 and failed.oldest is not None and failed.newest is not None
    assert {(lock.entry.split("/")[0], lock.name) for lock in index.locks} == {
        ("neuronxcc-2.12.54.0+f631c2365", "model.hlo.pb.lock")}
    assert all(lock.holder_pid is None for lock in index.locks)  # the fixture root's /proc/locks names none


def test_near_misses_of_each_state() -> None:
    new_layout = frozenset({"compile_flags.json", "model.hlo_module.pb"})
    assert entry_state(new_layout | {"model.neff", "model.done"}, None) == ENTRY_DONE
    assert entry_state(new_layout | {"model.neff", "model.done", "model.log"}, 4096) == ENTRY_DONE  # a warning log
    assert entry_state(new_layout | {"model.neff"}, None) == ENTRY_INCOMPLETE  # not marked done yet
    assert entry_state(new_layout | {"model.neff", "model.hlo_module.pb.lock"}, 4096) == ENTRY_LOCKED  # writing it
    assert entry_state(new_layout | {"model.log"}, None) == ENTRY_FAILED
    assert entry_state(new_layout | {"model.log", "model.hlo_module.pb.lock"}, None) == ENTRY_FAILED  # lock left
    assert entry_state(new_layout, None) == ENTRY_INCOMPLETE
    assert entry_state(new_layout | {"model.hlo_module.pb.lock"}, None) == ENTRY_LOCKED  # locked only
    old_layout = frozenset({"compile_flags.txt", "model.hlo.pb"})
    assert entry_state(old_layout | {"model.neff"}, None, done_marker=False) == ENTRY_DONE  # 2.12: no done marker
    assert entry_state(old_layout | {"model.neff", "model.log"}, 5, done_marker=False) == ENTRY_FAILED
    assert entry_state(old_layout | {"model.neff", "model.log"}, 2048, done_marker=False) == ENTRY_DONE
    assert entry_state(old_layout | {"model.neff"}, 512, done_marker=False) == ENTRY_INCOMPLETE  # cut short
    # 2.14 already names its graph model.hlo_module.pb and still writes no done marker: the era decides, not names.
    copy_214 = frozenset({"compile_flags.txt", "model.hlo_module.pb", "model.neff"})
    assert entry_state(copy_214, 4096, done_marker=False) == ENTRY_DONE
    assert entry_state(copy_214, 4096, done_marker=True) == ENTRY_INCOMPLETE  # the same names under 2.15


def test_the_2_14_copy_is_finished_without_a_done_marker(tmp_path: Path) -> None:
    """The 2.14.227.0 copy of optimum-internal-testing/neuron-testing-cache: compile_flags.txt, model.hlo_module.pb
    and model.neff are a finished entry; beside it a 2.15 entry with the same files and no model.done is still being
    written (its near miss), and a 2.14 entry whose NEFF is shorter than a NEFF's header is not finished."""
    from neurondoctor.facts.cache_states import writes_done_marker

    cache = tmp_path / "cache"
    entry(cache / "neuronxcc-2.14.227.0+2d4f85be", "MODULE_0cd84407c4037ba783a7+2c2d707e", "done", layout="2.14")
    cut = entry(cache / "neuronxcc-2.14.227.0+2d4f85be", "MODULE_0b0ead5e2dfe538e89a4+2c2d707e", "done",
                layout="2.14")
    (cut / "model.neff").write_bytes(b"\0" * 100)
    entry(cache / "neuronxcc-2.15.141.0+d3cfc8ca", "MODULE_3de39ac50493f469550f+39f12043", "writing")
    index = index_cache(RootFS("/"), str(cache))
    states = {compiler.compiler_version: compiler.states for compiler in index.compilers}
    assert states["2.14.227.0"] == {ENTRY_DONE: 1, ENTRY_FAILED: 0, ENTRY_LOCKED: 0, ENTRY_INCOMPLETE: 1}
    assert states["2.15.141.0"] == {ENTRY_DONE: 0, ENTRY_FAILED: 0, ENTRY_LOCKED: 0, ENTRY_INCOMPLETE: 1}
    assert [writes_done_marker(version) for version in ("2.12.54.0", "2.14.227.0", "2.15.141.0", "2.23.6484.0",
                                                        "3.0", "x")] == [False, False, True, True, True, True]


def test_a_failure_is_said_in_the_compilers_own_words() -> None:
    """The first line with a compiler code (aws-neuron-sdk's report of a Llama 3 70B compile: `[XCG815] Estimated
    peak HBM usage … exceeds 16GB`), not the wrapper's last line; an ERROR line where no code is given; the wrapper's
    line only when there is nothing else."""
    from tests.cache_fixture import XCG815_LOG

    assert failure_line(XCG815_LOG).startswith("2024-05-10T23:47:40Z [XCG815]  Estimated peak HBM usage (22.839451)")
    coded = ("2026-01-01T00:00:00Z ERROR 4471 [neuronx-cc]: Traceback follows\n"
             "2026-01-01T00:00:00Z ERROR 4471 [neuronx-cc]: [NCC_EOOM001] Maximum peak HBM usage of 32.00GB exceeds "
             "HBM limit of 24.00GB for Trn2.\nSubcommand returned with exitcode=70\n")
    assert "[NCC_EOOM001]" in failure_line(coded)  # the code outranks an earlier ERROR line without one
    assert failure_line("INFO start\nERROR: Estimated peak HBM usage exceeds 16GB.\nCompiler status ERROR\n") == \
        "ERROR: Estimated peak HBM usage exceeds 16GB."
    assert failure_line("INFO start\nSubcommand returned with exitcode=70\n") == \
        "Subcommand returned with exitcode=70"  # near miss: nothing but the wrapper's word
    assert failure_line("xNCC_EOOM001y is no code\nlast line\n") == "last line"
    assert failure_line("") == ""


def test_a_held_lock_names_its_holder_from_proc_locks(tmp_path: Path) -> None:
    """On the live host: this test holds an flock on a cache entry's lock file, as a compiling process does."""
    cache = tmp_path / "cache"
    locked = entry(cache / "neuronxcc-2.15.141.0+d3cfc8ca", "MODULE_b41d4f868a9e38641a9e+39f12043", "incomplete",
                   lock=True)
    entry(cache / "neuronxcc-2.15.141.0+d3cfc8ca", "MODULE_0b1b2ca56aec724cedf0+39f12043", "incomplete", lock=True)
    with open(locked / "model.hlo_module.pb.lock", "rb") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        index = index_cache(RootFS("/"), str(cache))
    holders = {lock.entry.rsplit("/", 1)[-1]: (lock.holder_pid, lock.holder_command) for lock in index.locks}
    assert holders["MODULE_b41d4f868a9e38641a9e+39f12043"][0] == os.getpid()
    assert holders["MODULE_b41d4f868a9e38641a9e+39f12043"][1]  # /proc/<pid>/comm of this process
    assert holders["MODULE_0b1b2ca56aec724cedf0+39f12043"] == (None, None)  # a lock file nobody holds
    assert all(lock.age_s is not None and lock.age_s >= 0 for lock in index.locks)


def test_the_walk_is_bounded_and_says_where_it_stopped(tmp_path: Path) -> None:
    compiler = tmp_path / "cache" / "neuronxcc-2.15.141.0+d3cfc8ca"
    for number in range(30):
        entry(compiler, f"MODULE_{number:020d}+39f12043", "done")
    index = index_cache(RootFS("/"), str(tmp_path / "cache"), max_entries=12)
    assert index.counted == 12 and index.cut == "counted up to 12 entries"
    assert index.compilers[0].entries == 12
    assert index_cache(RootFS("/"), str(tmp_path / "cache"), deadline_s=0.0).cut is not None


def test_a_missing_cache_and_one_that_is_a_file(tmp_path: Path) -> None:
    missing = index_cache(RootFS("/"), str(tmp_path / "none"))
    assert not missing.exists and missing.problem is None
    (tmp_path / "file").write_text("x")
    assert index_cache(RootFS("/"), str(tmp_path / "file")).problem == "not a directory"


def test_compile_flags_of_both_layouts_are_read_and_garbage_is_none(tmp_path: Path) -> None:
    from neurondoctor.host.cache_index import read_compile_flags
    from neurondoctor.rules.host_stack.compile_flags import compiler_flags

    new = entry(tmp_path / "c", "MODULE_b41d4f868a9e38641a9e+39f12043", "done")
    old = entry(tmp_path / "c", "MODULE_0b0ead5e2dfe538e89a4+2c2d707e", "done", layout="2.12")
    empty = entry(tmp_path / "c", "MODULE_12221176946427745622+d7517139", "done", flags="[]")
    garbage = entry(tmp_path / "c", "MODULE_e358924ac4ea2b2bb562+39f12043", "done", flags='{"not": "a list"}')
    linked = entry(tmp_path / "c", "MODULE_3de39ac50493f469550f+39f12043", "done")
    (linked / "compile_flags.json").unlink()
    (linked / "compile_flags.json").symlink_to(new / "compile_flags.json")
    flags = {path.name: read_compile_flags(str(path), frozenset(os.listdir(path)))
             for path in (new, old, empty, garbage, linked)}
    assert flags[new.name] == flags[old.name] == ["--model-type=transformer", "--auto-cast=none", "-O1"]
    assert flags[empty.name] == [] and flags[garbage.name] is None and flags[linked.name] is None
    assert compiler_flags(["--model-type", "transformer", "-O1", "--cache_dir", "/x", "--retry_failed_compilation"]) \
        == frozenset({"--model-type=transformer", "-O1"})


def test_unreadable_folders_are_listed_up_to_a_bound_then_counted() -> None:
    from neurondoctor.facts.cache_index import CacheIndex
    from neurondoctor.host.cache_index import UNREADABLE_LISTED, _unreadable

    index = CacheIndex(path="/cache")
    for number in range(UNREADABLE_LISTED + 7):
        _unreadable(index, f"MODULE_{number}: Permission denied")
    assert len(index.unreadable) == UNREADABLE_LISTED + 1
    assert index.unreadable[-1] == "7 more folders could not be listed"


def test_a_bounded_count_shares_its_bound_among_the_compilers(tmp_path: Path) -> None:
    """A cut in the first compiler's folder must not leave the next one uncounted: ND-CACHE-003 would say the
    installed compiler has no entries."""
    for version in ("neuronxcc-2.15.141.0+d3cfc8ca", "neuronxcc-2.19.8089.0+8ab9f450"):
        for number in range(30):
            entry(tmp_path / "cache" / version, f"MODULE_{number:020d}+39f12043", "done")
    index = index_cache(RootFS("/"), str(tmp_path / "cache"), max_entries=20)
    assert [compiler.entries for compiler in index.compilers] == [10, 10]
    assert index.cut == "counted up to 20 entries"
    timed = index_cache(RootFS("/"), str(tmp_path / "cache"), deadline_s=0.0)
    assert len(timed.compilers) == 2 and timed.cut is not None


def test_an_entry_downloaded_into_the_hub_cache_is_read_from_its_names_through_links(tmp_path: Path) -> None:
    """A cache used straight from a Hugging Face hub download (`snapshots/<revision>/neuronxcc-…/MODULE_…/` whose
    files are links to `blobs/<sha>`, as huggingface_hub lays a repository out): the state comes from the names
    (finished: model.done and model.neff; 2.14: model.neff alone), no link is followed, so no size is counted and
    nothing outside the snapshot is read."""
    hub = tmp_path / "hub/models--aws-neuron--optimum-neuron-cache"
    blobs = hub / "blobs"
    blobs.mkdir(parents=True)
    snapshot = hub / "snapshots/126ee9e"
    for layout, compiler, name in (("2.15", "neuronxcc-2.15.141.0+d3cfc8ca", "MODULE_ae1c31503cedd3e1a504+39f12043"),
                                   ("2.14", "neuronxcc-2.13.68.0+6dfecc895", "MODULE_277942fefc2990a108db+2c2d707e")):
        real = entry(tmp_path / "downloaded" / compiler, name, "done", layout=layout)
        linked = snapshot / compiler / name
        linked.mkdir(parents=True)
        for item in real.iterdir():
            blob = blobs / f"{compiler}-{name}-{item.name}"
            blob.write_bytes(item.read_bytes())
            (linked / item.name).symlink_to(os.path.relpath(blob, linked))
    index = index_cache(RootFS("/"), str(snapshot))
    states = {compiler.name: compiler.states for compiler in index.compilers}
    assert states["neuronxcc-2.15.141.0+d3cfc8ca"][ENTRY_DONE] == 1
    assert states["neuronxcc-2.13.68.0+6dfecc895"][ENTRY_DONE] == 1
    assert all(compiler.bytes == 0 for compiler in index.compilers)  # links are never followed to size them
