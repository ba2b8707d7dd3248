"""`explain` of a compile-cache wait or skip names the entry on this host, its state and the prune line that clears
it here; each printed line is run as the user pastes it and moves exactly that entry. The texts are the ones users
and AWS publish: `Another process must be compiling MODULE_…, been waiting for: 186.0 minutes` (users' notes, a
killed compile's lock) and the neuron-caching page's `Got a cached failed neff at …/model.neff. Will skip
compilation`. Near misses: a young lock, a lock a running compile may have made, a finished entry, an entry that is
not here."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tests.cache_fixture import entry
from tests.conftest import cli_env, run_cli
from tests.fixes.harness import run_verbatim, user_env
from tests.host_fixture import HostSpec, build_host

CACHE = "var/tmp/neuron-compile-cache"
NEW = "neuronxcc-2.15.141.0+d3cfc8ca"
OLD = "neuronxcc-2.8.0.25+a3ad0f342"  # the neuron-caching page's example folder (a 2.8 compiler: no done marker)
WAITED = "MODULE_18108742649528384371+839ddec0"
SKIPPED = "MODULE_12486829708343293975+d41d8cd9"
HEALTHY = "MODULE_b41d4f868a9e38641a9e+39f12043"
TEXT = (
    f"INFO ||NCC_WRAPPER||: Got a cached failed neff at /{CACHE}/{OLD}/{SKIPPED}/model.neff. Will skip compilation, "
    "please set --retry_failed_compilation for recompilation.\n"
    f"[INFO]: Another process must be compiling {WAITED}, been waiting for: 186.0 minutes\n"
    f"[INFO]: Another process must be compiling {WAITED}, been waiting for: 187.0 minutes\n")


def _age(path: Path, seconds: float) -> None:
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp))


def _explain(root: Path, text: str, tmp_path: Path) -> dict[str, dict[str, object]]:
    log = tmp_path / "job.log"
    log.write_text(text)
    result = run_cli(["explain", str(log), "--root", str(root), "--json"], env=cli_env({"HOME": "/home/ml"}))
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["category"] == "compile-cache"
    return {found["module"]: found for found in document["host"]["cache_entries"]}


def test_the_waited_and_the_skipped_entries_are_found_and_their_lines_clear_them(tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge"))
    cache = root / CACHE
    waited = entry(cache / NEW, WAITED, "incomplete", lock=True)
    _age(waited / "model.hlo_module.pb.lock", 4 * 3600)  # killed four hours ago
    entry(cache / OLD, SKIPPED, "failed", layout="2.12")
    entry(cache / NEW, HEALTHY, "done")
    found = _explain(root, TEXT, tmp_path)
    assert found[WAITED]["entry"] == f"{NEW}/{WAITED}" and found[WAITED]["state"] == "locked"
    assert found[WAITED]["fix"] == [f"neurondoctor cache prune /{CACHE} --stale-locks --root {root} --yes  "
                                    "# moves it into a folder beside the cache; deletes nothing"]
    assert found[SKIPPED]["entry"] == f"{OLD}/{SKIPPED}" and found[SKIPPED]["state"] == "failed"
    assert found[SKIPPED]["fix"] == [f"neurondoctor cache prune /{CACHE} --failed --root {root} --yes  "
                                     "# moves it into a folder beside the cache; deletes nothing"]
    text = run_cli(["explain", str(tmp_path / "job.log"), "--root", str(root)], env=cli_env()).stdout
    assert f"  cache entry /{CACHE}/{NEW}/{WAITED} (locked): a stale lock, left by a compile that was stopped" in text
    env = user_env(tmp_path)
    for answer in (found[WAITED], found[SKIPPED]):
        run_verbatim(str(answer["fix"][0]), env)  # type: ignore[index]
    assert sorted(path.name for path in (cache / NEW).iterdir()) == [HEALTHY]
    assert not (cache / OLD / SKIPPED).exists()
    backups = sorted(cache.parent.glob("neuron-compile-cache.neurondoctor-*"))
    assert {str(path.relative_to(backup)) for backup in backups for path in backup.glob("*/*")} == {
        f"{NEW}/{WAITED}", f"{OLD}/{SKIPPED}"}


def test_near_misses_get_no_line(tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge"))
    cache = root / CACHE
    young = entry(cache / NEW, WAITED, "incomplete", lock=True)
    _age(young / "model.hlo_module.pb.lock", 120)  # a compile that started two minutes ago
    entry(cache / OLD, SKIPPED, "done", layout="2.12")  # compiled again since: finished now
    found = _explain(root, TEXT, tmp_path)
    assert found[WAITED]["state"] == "locked" and found[WAITED]["fix"] == []
    assert "a compile may still be starting" in str(found[WAITED]["means"])
    assert found[SKIPPED]["state"] == "done" and found[SKIPPED]["fix"] == []

    _age(young / "model.hlo_module.pb.lock", 4 * 3600)
    (root / "proc/4242").mkdir(parents=True)
    (root / "proc/4242/comm").write_text("neuronx-cc\n")  # a compile runs, its start not known
    found = _explain(root, TEXT, tmp_path)
    assert found[WAITED]["fix"] == [] and "4242 neuronx-cc" in str(found[WAITED]["means"])

    elsewhere = _explain(root, "[INFO]: Another process must be compiling MODULE_00000000000000000001+839ddec0, "
                               "been waiting for: 3.0 minutes\n", tmp_path)
    answer = elsewhere["MODULE_00000000000000000001+839ddec0"]
    assert answer["entry"] is None and answer["fix"] == []
    assert str(answer["means"]).startswith(f"not in the compile caches here (/{CACHE}, /home/ml/.cache/vllm/")
