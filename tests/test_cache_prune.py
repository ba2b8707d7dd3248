"""`cache prune`: each kind, executed on a fixture cache in the public layouts, leaves exactly the
healthy entries in the cache and moves the rest, whole and at the same relative paths, into a backup folder the
run made; its near misses stay; nothing is ever deleted; a lock a live process holds refuses the run; a dry run and
an unconfirmed run move nothing."""

from __future__ import annotations

import fcntl
import json
import os
import time
from pathlib import Path

import pytest

from neurondoctor import exit_codes
from neurondoctor.actions.cache.prune import PruneCriteria
from neurondoctor.actions.cache.prune_run import PruneOptions, run_prune
from neurondoctor.actions.held_directories import hold_directory, make_backup_folder
from tests.cache_fixture import entry, registry
from tests.conftest import cli_env, run_cli
from tests.wheelhouse import VenvFactory, WheelSpec

NEW = "neuronxcc-2.15.141.0+d3cfc8ca"
OLD = "neuronxcc-2.12.54.0+f631c2365"
HOUR = 3600.0


def _age(path: Path, seconds: float) -> None:
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp))


def _cache(tmp_path: Path) -> Path:
    """Healthy entries, and one plant of each kind with its near miss."""
    cache = tmp_path / "cache"
    entry(cache / NEW, "MODULE_b41d4f868a9e38641a9e+39f12043", "done")
    entry(cache / NEW, "MODULE_e358924ac4ea2b2bb562+39f12043", "failed")
    stale = entry(cache / NEW, "MODULE_3de39ac50493f469550f+39f12043", "incomplete", lock=True)
    _age(stale / "model.hlo_module.pb.lock", 4 * HOUR)  # a compile killed four hours ago
    fresh = entry(cache / NEW, "MODULE_43ee508d24e3e9c770ac+39f12043", "incomplete", lock=True)
    _age(fresh / "model.hlo_module.pb.lock", 60)  # near miss: a compile that started a minute ago
    leftover = entry(cache / NEW, "MODULE_70ee399e6fa6b6235418+39f12043", "done", lock=True)
    _age(leftover / "model.hlo_module.pb.lock", 4 * HOUR)  # near miss: a finished entry's leftover lock
    registry(cache / NEW)
    entry(cache / OLD, "MODULE_0b0ead5e2dfe538e89a4+2c2d707e", "done", layout="2.12")
    entry(cache / OLD, "MODULE_159a076e8438a4c04d96+2c2d707e", "failed", layout="2.12")
    return cache


def _files(path: Path) -> set[str]:
    return {str(item.relative_to(path)) for item in path.rglob("*") if not item.is_dir()}


def _prune(cache: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, object], str]:
    result = run_cli(["cache", "prune", str(cache), "--yes", "--json", *args], env=env or cli_env())
    return result.returncode, json.loads(result.stdout) if result.stdout else {}, result.stderr


@pytest.mark.parametrize(("flag", "moved"), [
    ("--failed", {f"{NEW}/MODULE_e358924ac4ea2b2bb562+39f12043", f"{OLD}/MODULE_159a076e8438a4c04d96+2c2d707e"}),
    ("--stale-locks", {f"{NEW}/MODULE_3de39ac50493f469550f+39f12043"}),
])
def test_each_kind_moves_its_plants_and_nothing_else(tmp_path: Path, flag: str, moved: set[str]) -> None:
    cache = _cache(tmp_path)
    before = _files(cache)
    code, document, stderr = _prune(cache, flag)
    assert code == 0, stderr
    prune = document["prune"]
    assert isinstance(prune, dict) and set(prune["moved"]) == moved
    backup = Path(prune["backup"])
    assert backup.parent == cache.parent and backup.name.startswith("cache.neurondoctor-")
    assert oct(backup.stat().st_mode & 0o777) == "0o700"
    after, kept = _files(cache), _files(backup)
    assert after | kept == before and not after & kept  # every file is in one place or the other: none deleted
    assert {str(Path(name).parent) for name in kept} >= moved
    assert not any(name.startswith(tuple(moved)) for name in after)


def test_other_compilers_keeps_the_installed_ones(tmp_path: Path, venvs: VenvFactory) -> None:
    cache = _cache(tmp_path)
    venv = venvs.create("compiler")
    venvs.install(venv, [WheelSpec("neuronx-cc", "2.15.141.0+d3cfc8ca")])
    code, document, stderr = _prune(cache, "--other-compilers", "--venv", str(venv))
    assert code == 0, stderr
    prune = document["prune"]
    assert isinstance(prune, dict) and prune["moved"] == [OLD]
    assert prune["installed_compilers"] == ["2.15.141.0+d3cfc8ca"]
    assert (Path(prune["backup"]) / OLD / "MODULE_0b0ead5e2dfe538e89a4+2c2d707e" / "model.neff").is_file()
    assert sorted(path.name for path in cache.iterdir()) == [NEW]

    empty = venvs.create("no-compiler")
    refused = run_cli(["cache", "prune", str(cache), "--other-compilers", "--venv", str(empty), "--yes"],
                      env=cli_env())
    assert refused.returncode == 2 and "no environment here has neuronx-cc installed" in refused.stderr


def test_older_than_moves_only_old_entries(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    old = cache / OLD / "MODULE_0b0ead5e2dfe538e89a4+2c2d707e"
    _age(old, 40 * 24 * HOUR)
    code, document, _ = _prune(cache, "--older-than", "30")
    prune = document["prune"]
    assert code == 0 and isinstance(prune, dict) and prune["moved"] == [f"{OLD}/MODULE_0b0ead5e2dfe538e89a4+2c2d707e"]
    assert "unchanged for 40 days" in prune["moves"][0]["reason"]  # type: ignore[index]


def test_a_dry_run_and_an_unconfirmed_run_move_nothing(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    before = sorted(os.listdir(tmp_path))
    dry = run_cli(["cache", "prune", str(cache), "--failed", "--dry-run"], env=cli_env())
    assert dry.returncode == 0 and "Dry run: nothing was moved." in dry.stdout
    assert f"  {NEW}/MODULE_e358924ac4ea2b2bb562+39f12043  (failed: later runs skip it until " in dry.stdout
    unasked = run_cli(["cache", "prune", str(cache), "--failed"], env=cli_env())
    assert unasked.returncode == 2 and "needs --yes" in unasked.stderr
    with pytest.raises(exit_codes.UserError, match="not confirmed"):
        run_prune(PruneOptions(PruneCriteria(failed=True), cache=str(cache)), cli_env(), confirm=lambda _: False)
    assert sorted(os.listdir(tmp_path)) == before and _files(cache) == _files(_cache(tmp_path / "again"))


def test_a_lock_a_live_process_holds_refuses_the_run(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    busy = cache / NEW / "MODULE_e358924ac4ea2b2bb562+39f12043" / "model.hlo_module.pb.lock"
    busy.write_bytes(b"")  # a retry of the failed entry is compiling it now
    with open(busy, "rb") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        result = run_cli(["cache", "prune", str(cache), "--failed", "--yes"], env=cli_env())
    assert result.returncode == 2, result.stdout
    assert f"{NEW}/MODULE_e358924ac4ea2b2bb562+39f12043 is locked by process {os.getpid()}" in result.stderr
    assert "nothing was moved" in result.stderr and sorted(os.listdir(tmp_path)) == ["cache"]


def test_nothing_to_prune_and_what_must_be_named(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    entry(cache / NEW, "MODULE_b41d4f868a9e38641a9e+39f12043", "done")
    result = run_cli(["cache", "prune", str(cache), "--failed", "--yes"], env=cli_env())
    assert result.returncode == 0 and result.stdout == f"{cache}: nothing to prune.\n"
    bare = run_cli(["cache", "prune", str(cache)], env=cli_env())
    assert bare.returncode == 2 and "name what to prune" in bare.stderr
    remote = run_cli(["cache", "prune", "--failed"], env=cli_env({"NEURON_COMPILE_CACHE_URL": "s3://b/c"}))
    assert remote.returncode == 2 and "s3://b/c is a remote cache" in remote.stderr


def test_a_backup_never_reuses_an_existing_name(tmp_path: Path) -> None:
    (tmp_path / "cache.neurondoctor-20261202T120000Z").mkdir()  # an earlier run in the same second
    (tmp_path / "cache.neurondoctor-20261202T120000Z-2").symlink_to("/etc")  # a planted link
    (tmp_path / "cache").mkdir()
    with hold_directory(str(tmp_path / "cache")) as cache, make_backup_folder(cache, "20261202T120000Z") as backup:
        assert backup.path == str(tmp_path / "cache.neurondoctor-20261202T120000Z-3")
    assert (tmp_path / "cache.neurondoctor-20261202T120000Z-2").is_symlink()


def test_a_finished_2_14_entry_with_its_lock_left_is_never_moved_as_stale(tmp_path: Path) -> None:
    """The 2.13 and 2.14 hub copies (compile_flags.txt, model.hlo_module.pb, model.neff, no model.done) hold finished
    graphs: one with its lock file left from four hours ago stays; beside it, a 2.14 entry with no NEFF and the
    same old lock moves (a compile killed mid-way). Executed on the cache, the healthy entries are exactly what
    stays."""
    cache = tmp_path / "cache"
    compiler = "neuronxcc-2.14.227.0+2d4f85be"
    finished = entry(cache / compiler, "MODULE_0cd84407c4037ba783a7+2c2d707e", "done", layout="2.14", lock=True)
    _age(finished / "model.hlo_module.pb.lock", 4 * HOUR)
    killed = entry(cache / compiler, "MODULE_81936d6c27c85d22c403+2c2d707e", "incomplete", layout="2.14", lock=True)
    _age(killed / "model.hlo_module.pb.lock", 4 * HOUR)
    entry(cache / compiler, "MODULE_277942fefc2990a108db+2c2d707e", "done", layout="2.14")
    code, document, stderr = _prune(cache, "--stale-locks")
    assert code == 0, stderr
    assert document["prune"]["moved"] == [f"{compiler}/MODULE_81936d6c27c85d22c403+2c2d707e"]  # type: ignore[index]
    assert sorted(path.name for path in (cache / compiler).iterdir()) == [
        "MODULE_0cd84407c4037ba783a7+2c2d707e", "MODULE_277942fefc2990a108db+2c2d707e"]
