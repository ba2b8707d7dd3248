"""compile-cache fixes, run verbatim: the user's cache holds the plant beside healthy entries, the
printed `neurondoctor cache prune … --yes` line runs in a shell, and the check after it has no compile-cache
finding left, the healthy entries still in the cache and the moved ones in the backup folder beside it."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.cache_fixture import entry, keyed
from tests.conftest import check_json, findings_by_id
from tests.fixes.harness import run_verbatim, user_env
from tests.wheelhouse import VenvFactory, WheelSpec

INSTALLED = "neuronxcc-2.15.141.0+d3cfc8ca"
HEALTHY, HEALTHY_FLAGS = keyed("b41d4f868a9e38641a9e", ["--model-type=transformer"])


def _plant(cache: Path, finding_id: str) -> str:
    """The plant for one finding; returns what must move (relative to the cache)."""
    if finding_id == "ND-CACHE-001":
        entry(cache / INSTALLED, "MODULE_e358924ac4ea2b2bb562+39f12043", "failed")
        return f"{INSTALLED}/MODULE_e358924ac4ea2b2bb562+39f12043"
    if finding_id == "ND-CACHE-002":
        stale = entry(cache / INSTALLED, "MODULE_3de39ac50493f469550f+39f12043", "incomplete", lock=True)
        stamp = time.time() - 4 * 3600  # older than the bound in a container too (3 h)
        os.utime(stale / "model.hlo_module.pb.lock", (stamp, stamp))
        return f"{INSTALLED}/MODULE_3de39ac50493f469550f+39f12043"
    other = "neuronxcc-2.12.54.0+f631c2365"
    entry(cache / other, "MODULE_0b0ead5e2dfe538e89a4+2c2d707e", "done", layout="2.12")
    return other


@pytest.mark.parametrize("finding_id", ["ND-CACHE-001", "ND-CACHE-002", "ND-CACHE-003", "ND-CACHE-009"])
def test_the_prune_line_moves_the_plant_and_keeps_the_rest(tmp_path: Path, venvs: VenvFactory,
                                                          finding_id: str) -> None:
    cache = tmp_path / "work" / "neuron-cache"
    venv = venvs.create(f"compiler-{finding_id}")
    venvs.install(venv, [WheelSpec("neuronx-cc", "2.15.141.0+d3cfc8ca")])
    if finding_id != "ND-CACHE-003":
        entry(cache / INSTALLED, HEALTHY, "done", flags=HEALTHY_FLAGS)  # keyed by the flags set below
    moved = _plant(cache, finding_id)
    env = user_env(tmp_path)
    env["NEURON_CC_FLAGS"] = f"--model-type=transformer --cache_dir={cache}"
    args = ["--venv", str(venv), "--select", "ND-CACHE"]
    before = findings_by_id(check_json(args, env=env)[1])
    assert sorted(before) == [finding_id], sorted(before)
    fix = before[finding_id][0]["fix"]
    assert fix[0].startswith(f"neurondoctor cache prune {cache} "), fix
    run_verbatim(fix[0], env)
    after = findings_by_id(check_json(args, env=env)[1])
    assert after == {}, after
    backups = sorted(cache.parent.glob("neuron-cache.neurondoctor-*"))
    assert len(backups) == 1 and (backups[0] / moved).exists()
    assert not (cache / moved).exists()
    if finding_id != "ND-CACHE-003":
        assert (cache / INSTALLED / HEALTHY / "model.neff").is_file()


@pytest.mark.parametrize("configured", ["default-like", "cache_dir"])
def test_a_cache_another_user_made_gets_a_cache_of_ones_own(tmp_path: Path, configured: str) -> None:
    """ND-CACHE-004: the cache was made by another user (mode 0555 for this one); the export line, pasted into the
    user's shell before the check, points neuronx-cc at a cache of their own, which they can create."""
    import json
    import shlex
    import subprocess
    import sys

    from tests.conftest import REPO, without_read_privileges

    prefix = without_read_privileges()
    cache = tmp_path / "shared" / "neuron-compile-cache"
    entry(cache / INSTALLED, HEALTHY, "done")
    cache.chmod(0o555)
    env = user_env(tmp_path)
    (tmp_path / "home").mkdir(exist_ok=True)
    if configured == "cache_dir":
        env["NEURON_CC_FLAGS"] = f"--model-type=transformer --cache_dir={cache}"
    else:
        env["NEURON_COMPILE_CACHE_URL"] = str(cache)
    args = ["--venv", str(tmp_path / "home"), "--select", "ND-CACHE"]
    try:
        before = findings_by_id(check_json(args, env=env, prefix=prefix)[1])
        assert sorted(before) == ["ND-CACHE-004"], sorted(before)
        fix = before["ND-CACHE-004"][0]["fix"]
        check = " ".join(shlex.quote(part) for part in (sys.executable, "-m", "neurondoctor", "check", "--json",
                                                          *args))
        done = subprocess.run([*prefix, "sh", "-c", "\n".join([*fix, 'echo "$NEURON_CC_FLAGS|'
                                                               '$NEURON_COMPILE_CACHE_URL" >&2', check])],
                              capture_output=True, text=True, env=env, cwd=str(REPO), timeout=120)
        after = json.loads(done.stdout)
        assert [item["id"] for item in after["findings"]] == [], (fix, after["findings"])
        flags, url = done.stderr.strip().splitlines()[-1].split("|")
        if configured == "cache_dir":
            assert flags == f"--model-type=transformer --cache_dir={tmp_path / 'home'}/.cache/neuron-compile-cache"
        else:
            assert url == f"{tmp_path / 'home'}/.cache/neuron-compile-cache"
    finally:
        cache.chmod(0o755)
