"""`cache status`: every configured cache counted, in text and as `neurondoctor.cache/1`;
a remote cache named and never contacted; a named directory that is not there is a usage error; nothing written."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cache_fixture import entry, registry
from tests.conftest import cli_env, run_cli

DEFAULT = "var/tmp/neuron-compile-cache"


def _root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    cache = root / DEFAULT
    entry(cache / "neuronxcc-2.15.141.0+d3cfc8ca", "MODULE_b41d4f868a9e38641a9e+39f12043", "done")
    entry(cache / "neuronxcc-2.15.141.0+d3cfc8ca", "MODULE_e358924ac4ea2b2bb562+39f12043", "failed")
    registry(cache / "neuronxcc-2.15.141.0+d3cfc8ca")
    entry(cache / "neuronxcc-2.12.54.0+f631c2365", "MODULE_81936d6c27c85d22c403+2c2d707e", "incomplete",
          layout="2.12", lock=True)
    return root


def _tree(root: Path) -> list[tuple[str, int]]:
    return sorted((str(path.relative_to(root)), path.lstat().st_mtime_ns) for path in root.rglob("*"))


def test_status_counts_every_configured_cache_and_writes_nothing(tmp_path: Path) -> None:
    root = _root(tmp_path)
    other = root / "scratch/cache"
    entry(other / "neuronxcc-2.19.8089.0+8ab9f450", "MODULE_70ee399e6fa6b6235418+39f12043", "done")
    before = _tree(root)
    env = cli_env({"NEURON_CC_FLAGS": "--model-type=transformer --cache_dir=/scratch/cache", "HOME": "/home/ml"})
    result = run_cli(["cache", "status", "--root", str(root)], env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "/scratch/cache (NEURON_CC_FLAGS --cache_dir): 1 entry"
    assert lines[1].startswith("  neuronxcc-2.19.8089.0+8ab9f450  1 entry: 1 done · 0 failed · 0 incomplete · ")
    assert "/var/tmp/neuron-compile-cache (default): 3 entries" in lines
    assert any(line.startswith("  neuronxcc-2.15.141.0+d3cfc8ca  2 entries: 1 done · 1 failed · 0 incomplete · "
                               "registry · ") for line in lines), lines
    assert "    failed MODULE_e358924ac4ea2b2bb562+39f12043: ERROR: Estimated peak HBM usage exceeds 16GB." in lines
    assert any(line.startswith("  lock neuronxcc-2.12.54.0+f631c2365/MODULE_81936d6c27c85d22c403+2c2d707e/"
                               "model.hlo.pb.lock: held by no process on this host") for line in lines)
    assert lines[-1] == "/home/ml/.cache/vllm/neuron/compile_cache (vLLM default): not present"
    assert _tree(root) == before

    document = json.loads(run_cli(["cache", "status", "--root", str(root), "--format", "json"], env=env).stdout)
    assert document["schema"] == "neurondoctor.cache/1" and document["root"] == str(root)
    caches = {cache["path"]: cache for cache in document["caches"]}
    default = caches["/var/tmp/neuron-compile-cache"]
    assert default["source"] == "default" and default["exists"] and default["counted"] == 3
    by_name = {compiler["name"]: compiler for compiler in default["compilers"]}
    assert by_name["neuronxcc-2.15.141.0+d3cfc8ca"]["states"] == {"done": 1, "failed": 1, "incomplete": 0}
    assert by_name["neuronxcc-2.12.54.0+f631c2365"]["locked"] == 1
    assert [lock["name"] for lock in default["locks"]] == ["model.hlo.pb.lock"]


def test_a_remote_cache_is_named_never_contacted(tmp_path: Path) -> None:
    root = _root(tmp_path)
    env = cli_env({"NEURON_COMPILE_CACHE_URL": "s3://ml-team-cache/neuron", "HOME": "/home/ml"})
    result = run_cli(["cache", "status", "--root", str(root)], env=env)
    assert result.returncode == 0
    assert result.stdout.splitlines()[0] == \
        "s3://ml-team-cache/neuron (NEURON_COMPILE_CACHE_URL): remote, not contacted"
    assert "/var/tmp/neuron-compile-cache (default): 3 entries" in result.stdout


def test_a_named_directory_that_is_not_there_is_a_usage_error(tmp_path: Path) -> None:
    root = _root(tmp_path)
    result = run_cli(["cache", "status", "--root", str(root), "/no/such/cache", "--json"], env=cli_env())
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip() == f"error: /no/such/cache: no such directory under {root}"
    named = run_cli(["cache", "status", "--root", str(root), f"/{DEFAULT}"], env=cli_env())
    assert named.returncode == 0 and named.stdout.startswith("/var/tmp/neuron-compile-cache (named): 3 entries")
