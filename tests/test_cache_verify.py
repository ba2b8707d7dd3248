"""`cache verify` and `cache prune --broken`: a finished entry is whole when its NEFF's header and size
agree; a NEFF cut short, one that is not a NEFF, and one that is a FIFO are found, and only they move with --broken;
nothing is written by verify."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.cache_fixture import entry, neff_bytes
from tests.conftest import cli_env, run_cli

COMPILER = "neuronxcc-2.15.141.0+d3cfc8ca"


def _cache(tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    entry(cache / COMPILER, "MODULE_b41d4f868a9e38641a9e+39f12043", "done")  # whole
    entry(cache / "neuronxcc-2.12.54.0+f631c2365", "MODULE_0b0ead5e2dfe538e89a4+2c2d707e", "done", layout="2.12")
    cut = entry(cache / COMPILER, "MODULE_3e6547ee184412788dbf+39f12043", "done")
    (cut / "model.neff").write_bytes(neff_bytes()[:3000])  # a copy interrupted part-way (disk full, rsync killed)
    other = entry(cache / COMPILER, "MODULE_eefadb0dc66df9ddcde2+39f12043", "done")
    (other / "model.neff").write_bytes(b"<html>AccessDenied</html>".ljust(2048, b" "))  # a failed download saved
    fifo = entry(cache / COMPILER, "MODULE_70ee399e6fa6b6235418+39f12043", "done")
    (fifo / "model.neff").unlink()
    os.mkfifo(fifo / "model.neff")
    return cache


def test_verify_finds_each_entry_that_is_not_whole(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    before = sorted((str(path), path.lstat().st_mtime_ns) for path in cache.rglob("*"))
    result = run_cli(["cache", "verify", str(cache), "--json"], env=cli_env(), timeout=60)
    assert result.returncode == 1, result.stderr
    verify = json.loads(result.stdout)["verify"]
    assert verify["checked"] == 5
    problems = {item["entry"].split("/")[1]: item["problem"] for item in verify["problems"]}
    assert problems == {
        "MODULE_3e6547ee184412788dbf+39f12043": "model.neff is cut short: 3,000 bytes, its header says 5,120",
        "MODULE_eefadb0dc66df9ddcde2+39f12043": "model.neff does not start with a NEFF header (it starts "
                                                "b'<html>AccessDeni')",
        "MODULE_70ee399e6fa6b6235418+39f12043": "model.neff is not a regular file",
    }
    assert sorted((str(path), path.lstat().st_mtime_ns) for path in cache.rglob("*")) == before
    text = run_cli(["cache", "verify", str(cache)], env=cli_env(), timeout=60).stdout
    assert text.startswith(f"{cache}: 5 finished entries checked, 3 not whole\n")
    assert text.rstrip().endswith(f"`neurondoctor cache prune {cache} --broken --yes`.")


def test_prune_broken_moves_only_those(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    result = run_cli(["cache", "prune", str(cache), "--broken", "--yes", "--json"], env=cli_env(), timeout=60)
    assert result.returncode == 0, result.stderr
    moved = json.loads(result.stdout)["prune"]["moved"]
    assert sorted(path.split("/")[1] for path in moved) == ["MODULE_3e6547ee184412788dbf+39f12043",
                                                            "MODULE_70ee399e6fa6b6235418+39f12043",
                                                            "MODULE_eefadb0dc66df9ddcde2+39f12043"]
    again = run_cli(["cache", "verify", str(cache)], env=cli_env(), timeout=60)
    assert again.returncode == 0 and again.stdout == f"{cache}: 2 finished entries checked, 0 not whole\n"


def test_verify_of_a_default_cache_that_is_not_there_says_so(tmp_path: Path) -> None:
    """Without a cache there is nothing to verify: "0 finished entries checked" read as a cache found whole."""
    root = tmp_path / "root"
    (root / "var/tmp").mkdir(parents=True)
    text = run_cli(["cache", "verify", "--root", str(root)], env=cli_env(), timeout=60)
    assert text.returncode == 0 and text.stdout == "/var/tmp/neuron-compile-cache: not present, nothing to verify\n"
    document = json.loads(run_cli(["cache", "verify", "--root", str(root), "--json"], env=cli_env(),
                                  timeout=60).stdout)["verify"]
    assert document == {"cache": "/var/tmp/neuron-compile-cache", "present": False, "checked": 0, "problems": []}
