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
    assert lines[1].startswith("  neuronxcc-2.19.8089.0+8ab9f450  1 entry: "
                               "1 done · 0 failed · 0 locked · 0 incomplete · ")
    assert "/var/tmp/neuron-compile-cache (default): 3 entries" in lines
    assert any(line.startswith("  neuronxcc-2.15.141.0+d3cfc8ca  2 entries: "
                               "1 done · 1 failed · 0 locked · 0 incomplete · registry · ") for line in lines), lines
    assert any(line.startswith("  neuronxcc-2.12.54.0+f631c2365  1 entry: "
                               "0 done · 0 failed · 1 locked · 0 incomplete · ") for line in lines), lines
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
    assert by_name["neuronxcc-2.15.141.0+d3cfc8ca"]["states"] == {"done": 1, "failed": 1, "locked": 0, "incomplete": 0}
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


def test_status_says_each_failure_in_the_compilers_words_with_its_meaning_and_counts_add_up(tmp_path: Path) -> None:
    """A cache in each era's public layout (2.12, 2.14, 2.15, 2.23): every entry in exactly one state, the states
    adding up to the entries and the entries to the count; a failure's line is the compiler's `[XCG815]` estimate
    (aws-neuron-sdk's Llama 3 70B report), not the wrapper's `Subcommand returned with exitcode=70`, with what
    explain reads in it; a documented NCC code gets the compiler's table's meaning."""
    from tests.cache_fixture import XCG815_LOG

    root = tmp_path / "root"
    cache = root / DEFAULT
    entry(cache / "neuronxcc-2.12.54.0+f631c2365", "MODULE_0b0ead5e2dfe538e89a4+2c2d707e", "done", layout="2.12")
    entry(cache / "neuronxcc-2.12.54.0+f631c2365", "MODULE_159a076e8438a4c04d96+2c2d707e", "failed", layout="2.12")
    entry(cache / "neuronxcc-2.14.227.0+2d4f85be", "MODULE_0cd84407c4037ba783a7+2c2d707e", "done", layout="2.14")
    entry(cache / "neuronxcc-2.14.227.0+2d4f85be", "MODULE_81936d6c27c85d22c403+2c2d707e", "incomplete",
          layout="2.14", lock=True)
    new = cache / "neuronxcc-2.15.141.0+d3cfc8ca"
    entry(new, "MODULE_b41d4f868a9e38641a9e+39f12043", "done")
    entry(new, "MODULE_e358924ac4ea2b2bb562+39f12043", "failed", log_text=XCG815_LOG)
    entry(new, "MODULE_f358924ac4ea2b2bb562+39f12043", "failed", log_text=(
        "ERROR 4471 [neuronx-cc]: [NCC_EOOM001] Maximum peak HBM usage of 32.00GB exceeds HBM limit of 24.00GB for "
        "Trn2.\nSubcommand returned with exitcode=70\n"))
    entry(new, "MODULE_3de39ac50493f469550f+39f12043", "writing")
    entry(cache / "neuronxcc-2.23.6484.0+3b612583", "MODULE_70ee399e6fa6b6235418+39f12043", "done", layout="2.23")
    env = cli_env({"HOME": "/home/ml"})
    result = run_cli(["cache", "status", "--root", str(root), f"/{DEFAULT}"], env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "/var/tmp/neuron-compile-cache (named): 9 entries"
    xcg = lines.index("    failed MODULE_e358924ac4ea2b2bb562+39f12043: 2024-05-10T23:47:40Z [XCG815]  Estimated peak "
                      "HBM usage (22.839451) exceeds 16GB. Neff won't be able to load on chip - Please open a support "
                      "ticket at https://github.com/aws-neuron/aws-neuron-sdk/issues/new")
    assert lines[xcg + 1] == ("      meaning: XCG815: the device ran out of memory (the graph needs 22.839451 GB "
                              "(estimated) at its peak, the limit is 16gb)")
    assert "      meaning: NCC_EOOM001: the model's tensors need more device memory (HBM) than one NeuronCore has" \
        in lines
    assert not any("exitcode=70" in line for line in lines)
    document = json.loads(run_cli(["cache", "status", "--root", str(root), f"/{DEFAULT}", "--json"], env=env).stdout)
    (counted,) = document["caches"]
    states = {compiler["compiler_version"]: compiler["states"] for compiler in counted["compilers"]}
    assert states == {
        "2.12.54.0": {"done": 1, "failed": 1, "locked": 0, "incomplete": 0},
        "2.14.227.0": {"done": 1, "failed": 0, "locked": 1, "incomplete": 0},
        "2.15.141.0": {"done": 1, "failed": 2, "locked": 0, "incomplete": 1},
        "2.23.6484.0": {"done": 1, "failed": 0, "locked": 0, "incomplete": 0},
    }
    assert all(sum(compiler["states"].values()) == compiler["entries"] for compiler in counted["compilers"])
    assert sum(compiler["entries"] for compiler in counted["compilers"]) == counted["counted"] == 9


def test_every_framework_cache_is_counted_in_its_layout_with_its_mount(tmp_path: Path) -> None:
    """vLLM Neuron's cache (`$VLLM_CACHE_ROOT/neuron/compile_cache/<32-character key>/`, its compilation-cache design
    page) is counted by entries and bytes, never judged (what an entry holds is not published); TorchNeuron's NEFF
    cache (`ab/cd/<key>.neff`, a `.tmp` while it is written: its NEFF cache source) by whole NEFFs and unfinished
    writes; each cache's mount from the host's table: the neuronx-cc cache on an FSx for Lustre mount, vLLM's on a
    read-only one. Near misses: a TorchNeuron default that is not there is not listed; a local ext4 cache says
    nothing of its mount."""
    root = tmp_path / "root"
    entry(root / "fsx/neuron-cache/neuronxcc-2.15.141.0+d3cfc8ca", "MODULE_b41d4f868a9e38641a9e+39f12043", "done")
    entry(root / DEFAULT / "neuronxcc-2.15.141.0+d3cfc8ca", "MODULE_b41d4f868a9e38641a9e+39f12043", "done")
    vllm = root / "models/vllm/neuron/compile_cache"
    for key in ("0123456789abcdef0123456789abcdef", "fedcba9876543210fedcba9876543210"):
        (vllm / key).mkdir(parents=True)
        (vllm / key / "model.neff").write_bytes(b"\0" * 2048)
    (vllm / "0123456789abcdef0123456789abcdef.lock").write_bytes(b"")
    (vllm / "README").write_text("not an entry")
    shard = root / "scratch/neff/ab/cd"
    shard.mkdir(parents=True)
    (shard / "abcd1234ef.neff").write_bytes(b"\0" * 4096)
    (shard / "tmpq1w2e3.tmp").write_bytes(b"\0" * 100)
    (root / "proc/self").mkdir(parents=True)
    (root / "proc/self/mounts").write_text("/dev/nvme0n1p1 / ext4 rw 0 0\n"
                                           "fs-0123.fsx.internal@tcp:/abcd /fsx lustre rw,flock 0 0\n"
                                           "/dev/nvme1n1 /models ext4 ro,relatime 0 0\n")
    env = cli_env({"NEURON_CC_FLAGS": "--cache_dir=/fsx/neuron-cache", "VLLM_CACHE_ROOT": "/models/vllm",
                   "TORCH_NEURONX_NEFF_CACHE_DIR": "/scratch/neff", "HOME": "/home/ml", "USER": "ml"})
    result = run_cli(["cache", "status", "--root", str(root)], env=env)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == ("/fsx/neuron-cache (NEURON_CC_FLAGS --cache_dir): 1 entry · on lustre (/fsx): other nodes "
                        "may share it and hold its locks")
    assert "/var/tmp/neuron-compile-cache (default): 1 entry" in lines  # near miss: a local disk
    at = lines.index("/models/vllm/neuron/compile_cache (VLLM_CACHE_ROOT): 2 entries · on a read-only mount "
                     "(/models): nothing compiled is kept")
    assert lines[at + 1] == ("  vLLM Neuron layout: 2 entries under 32-character keys · 1 lock file(s) · 4.0 KiB; "
                             "what an entry holds is not published, so its state is not judged")
    assert lines[at + 2] == "  1 other names (not neuronxcc-* compiler directories)"
    at = lines.index("/scratch/neff (TORCH_NEURONX_NEFF_CACHE_DIR): 2 entries")
    assert lines[at + 1] == "  TorchNeuron NEFF cache: 1 NEFF(s) · 1 unfinished write(s) (.tmp) · 4.1 KiB"
    assert not any("vllm_neuron_wdir_ml" in line for line in lines)  # near miss: a fallback that is not there
    document = json.loads(run_cli(["cache", "status", "--root", str(root), "--json"], env=env).stdout)
    caches = {cache["path"]: cache for cache in document["caches"]}
    assert caches["/fsx/neuron-cache"]["mount"]["network"] is True
    assert caches["/models/vllm/neuron/compile_cache"]["mount"]["read_only"] is True
    assert caches["/models/vllm/neuron/compile_cache"]["keyed"] == {
        "layout": "vllm-neuron", "entries": 2, "bytes": 4096, "done": None, "incomplete": None, "lock_files": 1}
    assert caches["/scratch/neff"]["keyed"]["done"] == 1 and caches["/scratch/neff"]["counted"] == 2
