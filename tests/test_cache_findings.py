"""The compile-cache findings fire on their plants and not on their near misses: a failed entry of a
compiler nobody has installed, a young lock, a finished entry's leftover lock, a lock a live process holds, a cache
that has entries for the installed compiler, an environment without neuronx-cc."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
from pathlib import Path

import pytest

from tests.cache_fixture import entry, keyed
from tests.conftest import check_json, cli_env, findings_by_id
from tests.wheelhouse import VenvFactory, WheelSpec

INSTALLED = "neuronxcc-2.15.141.0+d3cfc8ca"
OTHER = "neuronxcc-2.12.54.0+f631c2365"


@pytest.fixture(scope="module")
def compiler_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    venvs = VenvFactory(base=tmp_path_factory.mktemp("venvs"), wheel_dir=tmp_path_factory.mktemp("wheels"))
    venv = venvs.create("compiler")
    venvs.install(venv, [WheelSpec("neuronx-cc", "2.15.141.0+d3cfc8ca")])
    return venv


def _aged_lock(path: Path, seconds: float) -> None:
    stamp = time.time() - seconds
    os.utime(path, (stamp, stamp))


def _cache_ids(cache: Path, venv: Path) -> dict[str, list[dict[str, object]]]:
    env = cli_env({"NEURON_CC_FLAGS": f"--cache_dir={cache}"})
    return findings_by_id(check_json(["--venv", str(venv), "--select", "ND-CACHE"], env=env)[1])


def test_failed_entries_of_the_installed_compiler_only(tmp_path: Path, compiler_venv: Path) -> None:
    cache = tmp_path / "cache"
    entry(cache / INSTALLED, "MODULE_b41d4f868a9e38641a9e+39f12043", "done")
    entry(cache / OTHER, "MODULE_159a076e8438a4c04d96+2c2d707e", "failed", layout="2.12")
    assert "ND-CACHE-001" not in _cache_ids(cache, compiler_venv)  # near miss: a compiler nobody runs here
    entry(cache / INSTALLED, "MODULE_e358924ac4ea2b2bb562+39f12043", "failed")
    found = _cache_ids(cache, compiler_venv)["ND-CACHE-001"][0]
    assert found["title"] == f"1 failed compilation(s) in the compile cache {cache} will be skipped"
    assert found["evidence"]["errors"] == [  # type: ignore[index]
        f"{INSTALLED}/MODULE_e358924ac4ea2b2bb562+39f12043: ERROR: Estimated peak HBM usage exceeds 16GB."]


def test_stale_locks_and_their_near_misses(tmp_path: Path, compiler_venv: Path) -> None:
    cache = tmp_path / "cache"
    young = entry(cache / INSTALLED, "MODULE_43ee508d24e3e9c770ac+39f12043", "incomplete", lock=True)
    _aged_lock(young / "model.hlo_module.pb.lock", 60)  # a compile that started a minute ago
    finished = entry(cache / INSTALLED, "MODULE_70ee399e6fa6b6235418+39f12043", "done", lock=True)
    _aged_lock(finished / "model.hlo_module.pb.lock", 4 * 3600)  # a finished entry's leftover lock
    held = entry(cache / INSTALLED, "MODULE_0b1b2ca56aec724cedf0+39f12043", "incomplete", lock=True)
    _aged_lock(held / "model.hlo_module.pb.lock", 4 * 3600)  # a long compile that is still running
    with open(held / "model.hlo_module.pb.lock", "rb") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        assert "ND-CACHE-002" not in _cache_ids(cache, compiler_venv)
        stale = entry(cache / INSTALLED, "MODULE_3de39ac50493f469550f+39f12043", "incomplete", lock=True)
        _aged_lock(stale / "model.hlo_module.pb.lock", 4 * 3600)
        found = _cache_ids(cache, compiler_venv)["ND-CACHE-002"][0]
    assert found["evidence"]["entries"] == [f"{INSTALLED}/MODULE_3de39ac50493f469550f+39f12043"]  # type: ignore[index]


def test_entries_only_for_other_compilers(tmp_path: Path, compiler_venv: Path, venvs: VenvFactory) -> None:
    cache = tmp_path / "cache"
    entry(cache / OTHER, "MODULE_0b0ead5e2dfe538e89a4+2c2d707e", "done", layout="2.12")
    found = _cache_ids(cache, compiler_venv)["ND-CACHE-003"][0]
    assert "none for the installed neuronx-cc 2.15.141.0: the next start compiles every graph again" in \
        str(found["title"])
    assert found["fix"][0] == (f"neurondoctor cache prune {cache} --other-compilers --venv {compiler_venv} --yes  "
                               "# moves them into a folder beside the cache; deletes nothing")  # type: ignore[index]
    no_compiler = venvs.create("no-compiler")
    assert "ND-CACHE-003" not in _cache_ids(cache, no_compiler)  # near miss: nothing installed to compare with
    entry(cache / INSTALLED, "MODULE_b41d4f868a9e38641a9e+39f12043", "done")
    assert "ND-CACHE-003" not in _cache_ids(cache, compiler_venv)  # near miss: the installed compiler has entries


CACHED = ["--model-type=transformer", "--enable-saturate-infinity", "-O1"]


@pytest.mark.parametrize(("flags", "added", "removed"), [
    ("--model-type=transformer -O1", [], ["--enable-saturate-infinity"]),  # a flag removed: every graph again
    ("--model-type=transformer --enable-saturate-infinity -O2", ["-O2"], ["-O1"]),  # the level changed
    ("--model-type=transformer --enable-saturate-infinity -O1 --cache_dir /x --retry_failed_compilation", None,
     None),  # near miss: the same flags and the wrapper's own
    ("--model-type=transformer -O1 --enable-saturate-infinity", None, None),  # near miss: the same set reordered
    ("", None, None),  # near miss: no flags set (a framework may key its graphs by its own)
])
def test_other_flags_names_the_flags_added_and_removed(tmp_path: Path, compiler_venv: Path, flags: str,
                                                       added: list[str] | None, removed: list[str] | None) -> None:
    cache = tmp_path / "cache"
    for number in range(3):
        name, text = keyed(f"{number:020d}", CACHED)
        entry(cache / INSTALLED, name, "done", flags=text)
    name, text = keyed("0b0ead5e2dfe538e89a4", ["--model-type=transformer", "-O1"], layout="2.12")
    entry(cache / OTHER, name, "done", layout="2.12", flags=text)  # another compiler's entry with the new flags
    env = cli_env({"NEURON_CC_FLAGS": f"{flags} --cache_dir={cache}"})
    found = findings_by_id(check_json(["--venv", str(compiler_venv), "--select", "ND-CACHE"], env=env)[1])
    assert ("ND-CACHE-005" in found) is (added is not None), found
    if added is not None:
        finding = found["ND-CACHE-005"][0]
        assert finding["severity"] == "info"
        assert finding["evidence"]["added"] == added and finding["evidence"]["removed"] == removed  # type: ignore
        assert finding["evidence"]["looked_at"] == 3  # type: ignore[index]
        assert str(finding["title"]).startswith(f"none of the 3 compiled graph(s) of neuronx-cc 2.15.141.0 in "
                                                f"{cache} was built with the NEURON_CC_FLAGS set now")
        hedged = ": unless the framework adds --enable-saturate-infinity itself, the next start compiles again"
        assert str(finding["title"]).endswith(hedged if not added else ": the next start compiles again")


def test_a_graph_keyed_by_the_flags_now_beyond_the_sampled_ones_is_found_by_its_name(tmp_path: Path,
                                                                                     compiler_venv: Path) -> None:
    """Only the first 20 entries' flag files are read, but every finished entry's key is in its name: 25 entries
    with other flags and one with the flags set now is no finding (near miss); without that one, the finding."""
    cache = tmp_path / "cache"
    for number in range(25):
        name, text = keyed(f"{number:020d}", CACHED)
        entry(cache / INSTALLED, name, "done", flags=text)
    env = cli_env({"NEURON_CC_FLAGS": f"--model-type=transformer -O2 --cache_dir={cache}"})
    args = ["--venv", str(compiler_venv), "--select", "ND-CACHE"]
    assert "ND-CACHE-005" in findings_by_id(check_json(args, env=env)[1])
    name, text = keyed("99999999999999999999", ["--model-type=transformer", "-O2"])
    entry(cache / INSTALLED, name, "done", flags=text)
    assert "ND-CACHE-005" not in findings_by_id(check_json(args, env=env)[1])


def test_the_keys_of_the_public_copies_and_users_logs() -> None:
    """The key recipe against what is published: the 2.15 copy's `[]` entry (`+d7517139`), the 2.12/2.14 copies'
    `--model-type=transformer --auto-cast=none` (`+2c2d707e`), and two users' compile logs (no NEURON_CC_FLAGS:
    `+d41d8cd9`; a Llama 3 70B training's flags: `+55d6a20f`)."""
    from neurondoctor.rules.host_stack.compile_flags import flags_keys, key_words

    assert "d7517139" in flags_keys([]) and "d41d8cd9" in flags_keys([])
    assert "2c2d707e" in flags_keys(["--model-type=transformer", "--auto-cast=none"])
    assert "55d6a20f" in flags_keys(key_words(
        "--model-type=transformer --distribution-strategy=llm-training --enable-saturate-infinity -O2 "
        "--model-type=transformer --cache_dir /var/tmp/cache --retry_failed_compilation --log_level=INFO"))


def test_a_lock_is_not_called_stale_while_a_compile_runs_or_on_a_network_filesystem(tmp_path: Path,
                                                                                  compiler_venv: Path) -> None:
    """Compiles do not always hold their lock where /proc/locks shows it (users waited on locks no process held):
    an old unheld lock is stale only with no neuronx-cc running here and the cache on a local filesystem. The
    running compile is a `proc/PID/comm` of a fixture root, what the doctor reads on a host: a real process named
    neuronx-cc would be seen by every test running beside this one."""
    from tests.conftest import run_cli
    from tests.host_fixture import HostSpec, build_host

    host = build_host(tmp_path / "compiling", HostSpec(instance_type="trn1.32xlarge"))
    stale = entry(host / "var/tmp/neuron-compile-cache" / INSTALLED, "MODULE_3de39ac50493f469550f+39f12043",
                  "incomplete", lock=True)
    _aged_lock(stale / "model.hlo_module.pb.lock", 4 * 3600)  # a long compile still running looks like this
    (host / "proc/4242").mkdir(parents=True)
    (host / "proc/4242/comm").write_text("neuronx-cc\n")
    args = ["--root", str(host), "--venv", str(compiler_venv), "--select", "ND-CACHE"]
    assert "ND-CACHE-002" not in findings_by_id(check_json(args, env=cli_env())[1])
    refused = run_cli(["cache", "prune", "/var/tmp/neuron-compile-cache", "--root", str(host), "--stale-locks",
                       "--yes"], env=cli_env())
    assert refused.returncode == 2 and "4242 neuronx-cc" in refused.stderr, refused.stderr
    assert "nothing was moved" in refused.stderr and (stale / "model.hlo_module.pb.lock").exists()
    (host / "proc/4242/comm").unlink()  # the compile ended
    assert "ND-CACHE-002" in findings_by_id(check_json(args, env=cli_env())[1])  # the same lock, no compile now

    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge"))
    shared = root / "fsx/neuron-cache"
    old = entry(shared / INSTALLED, "MODULE_3de39ac50493f469550f+39f12043", "incomplete", lock=True)
    _aged_lock(old / "model.hlo_module.pb.lock", 4 * 3600)
    (root / "proc/self").mkdir(parents=True, exist_ok=True)
    (root / "proc/self/mounts").write_text("/dev/nvme0n1p1 / ext4 rw 0 0\n"
                                           "fs-0123.fsx.internal@tcp:/abcd /fsx lustre rw,flock 0 0\n")
    env = cli_env({"NEURON_CC_FLAGS": "--cache_dir=/fsx/neuron-cache"})
    found = findings_by_id(check_json(["--root", str(root), "--venv", str(compiler_venv), "--select", "ND-CACHE"],
                                      env=env)[1])
    assert "ND-CACHE-002" not in found  # near miss: a compile on another node of the FSx may hold it


def test_in_a_container_a_lock_must_be_older_to_be_called_stale() -> None:
    """A container's process list hides compiles in other containers sharing the cache: there a lock is stale only
    past 3 hours (users report compiles of 100 minutes), elsewhere past vLLM Neuron's 10-minute wait."""
    from neurondoctor.rules.host_stack.compile_cache import stale_after_s

    assert stale_after_s(container=False) == 600 and stale_after_s(container=True) == 3 * 3600


def _compile_running(root: Path, pid: int, started_ago_s: float) -> None:
    """A neuronx-cc process in a fixture root as /proc shows one: its comm, its stat (field 22, the start in clock
    ticks after boot) and the boot time in /proc/stat."""
    now = time.time()
    booted = int(now) - 100_000
    ticks = int((now - started_ago_s - booted) * os.sysconf("SC_CLK_TCK"))
    (root / f"proc/{pid}").mkdir(parents=True, exist_ok=True)
    (root / f"proc/{pid}/comm").write_text("neuronx-cc\n")
    # The command field holds a space and a parenthesis, as a crafted name may: the fields are read after the last ')'.
    (root / f"proc/{pid}/stat").write_text(f"{pid} (neuronx cc) S 1 {pid} {pid} 0 -1 4194560 10 0 0 0 5 1 0 0 20 0 "
                                           f"1 0 {ticks} 1000 100 18446744073709551615\n")
    (root / "proc/stat").write_text(f"cpu  1 2 3 4\nbtime {booted}\nprocesses 9\n")


def test_a_lock_older_than_every_running_compile_is_stale_in_check_and_prune(tmp_path: Path,
                                                                           compiler_venv: Path) -> None:
    """A compile that started 30 minutes ago cannot have made a lock four hours old: ND-CACHE-002 names it and
    `cache prune --stale-locks` moves it while that compile runs. Near misses: a lock made 35 minutes ago (within 10
    minutes of the compile's start: the wrapper makes its lock before it starts neuronx-cc) stays, and a compile
    whose start /proc does not give keeps today's caution."""
    from tests.conftest import run_cli
    from tests.host_fixture import HostSpec, build_host

    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge"))
    cache = root / "var/tmp/neuron-compile-cache"
    killed = entry(cache / INSTALLED, "MODULE_3de39ac50493f469550f+39f12043", "incomplete", lock=True)
    _aged_lock(killed / "model.hlo_module.pb.lock", 4 * 3600)
    own = entry(cache / INSTALLED, "MODULE_43ee508d24e3e9c770ac+39f12043", "incomplete", lock=True)
    _aged_lock(own / "model.hlo_module.pb.lock", 35 * 60)  # near miss: the running compile's own lock
    entry(cache / INSTALLED, "MODULE_b41d4f868a9e38641a9e+39f12043", "done")
    _compile_running(root, 4242, 30 * 60)
    args = ["--root", str(root), "--venv", str(compiler_venv), "--select", "ND-CACHE"]
    found = findings_by_id(check_json(args, env=cli_env())[1])
    assert found["ND-CACHE-002"][0]["evidence"]["entries"] == [  # type: ignore[index]
        f"{INSTALLED}/MODULE_3de39ac50493f469550f+39f12043"]
    assert "started more than 10 minutes after these locks were made" in str(found["ND-CACHE-002"][0]["detail"])

    (root / "proc/4242/stat").write_text("garbage\n")  # near miss: the compile's start is not known
    assert "ND-CACHE-002" not in findings_by_id(check_json(args, env=cli_env())[1])
    refused = run_cli(["cache", "prune", "/var/tmp/neuron-compile-cache", "--root", str(root), "--stale-locks",
                       "--yes"], env=cli_env())
    assert refused.returncode == 2 and "4242 neuronx-cc" in refused.stderr and killed.exists()

    _compile_running(root, 4242, 30 * 60)
    pruned = run_cli(["cache", "prune", "/var/tmp/neuron-compile-cache", "--root", str(root), "--stale-locks",
                      "--yes", "--json"], env=cli_env())
    assert pruned.returncode == 0, pruned.stderr
    import json

    assert json.loads(pruned.stdout)["prune"]["moved"] == [f"{INSTALLED}/MODULE_3de39ac50493f469550f+39f12043"]
    assert sorted(path.name for path in (cache / INSTALLED).iterdir()) == [
        "MODULE_43ee508d24e3e9c770ac+39f12043", "MODULE_b41d4f868a9e38641a9e+39f12043"]
    assert "ND-CACHE-002" not in findings_by_id(check_json(args, env=cli_env())[1])


def test_a_process_start_is_read_from_proc_as_the_kernel_writes_it() -> None:
    """On the live host: this process's start from /proc/<pid>/stat and /proc/stat's btime is the one psutil
    reads (within the boot time's one-second resolution)."""
    import psutil

    from neurondoctor.host.cache_index import boot_time, process_start
    from neurondoctor.host.rootfs import RootFS

    fs = RootFS("/")
    started = process_start(fs, str(os.getpid()), boot_time(fs))
    assert started is not None and abs(started - psutil.Process().create_time()) < 2.0
    assert process_start(fs, "999999999", boot_time(fs)) is None


def test_graphs_of_an_older_compiler_beside_the_installed_ones_are_named_with_their_release(
        tmp_path: Path, compiler_venv: Path) -> None:
    """After an upgrade from Neuron 2.16.0 (neuronx-cc 2.12.54.0) to 2.20.1 (2.15.141.0) the cache keeps the old
    compiler's graphs beside the new one's: ND-CACHE-009, an info with their count, their bytes, the release whose
    compiler made them and the prune line. Near misses: the old compiler's failed entry alone (no graph a run
    could load), and a cache whose installed compiler has no graph (ND-CACHE-003, the warning, instead)."""
    cache = tmp_path / "cache"
    entry(cache / OTHER, "MODULE_159a076e8438a4c04d96+2c2d707e", "failed", layout="2.12")
    entry(cache / INSTALLED, "MODULE_b41d4f868a9e38641a9e+39f12043", "done")
    assert "ND-CACHE-009" not in _cache_ids(cache, compiler_venv)  # near miss: no finished graph of the old one
    shutil.rmtree(cache / INSTALLED)
    entry(cache / OTHER, "MODULE_0b0ead5e2dfe538e89a4+2c2d707e", "done", layout="2.12")
    entry(cache / OTHER, "MODULE_81936d6c27c85d22c403+2c2d707e", "done", layout="2.12")
    found = _cache_ids(cache, compiler_venv)
    assert "ND-CACHE-009" not in found and "ND-CACHE-003" in found  # near miss: the warning says it
    assert "neuronx-cc 2.12.54.0 (Neuron 2.16.0)" in str(found["ND-CACHE-003"][0]["detail"])
    entry(cache / INSTALLED, "MODULE_b41d4f868a9e38641a9e+39f12043", "done")
    found = _cache_ids(cache, compiler_venv)
    assert "ND-CACHE-003" not in found
    finding = found["ND-CACHE-009"][0]
    assert finding["severity"] == "info"
    evidence = finding["evidence"]
    assert evidence["entries"] == 2 and evidence["other_compilers"] == [OTHER]  # type: ignore[index]
    assert evidence["made_by"] == ["neuronx-cc 2.12.54.0 (Neuron 2.16.0)"]  # type: ignore[index]
    assert evidence["bytes"] == sum(path.stat().st_size for path in (cache / OTHER).rglob("*")  # type: ignore[index]
                                    if path.name in ("model.neff", "model.hlo.pb"))
    assert str(finding["title"]).startswith(f"the compile cache {cache} keeps 2 compiled graph(s) (0.0 GiB) of "
                                            "neuronx-cc 2.12.54.0 (Neuron 2.16.0)")
    assert finding["fix"][0].startswith(f"neurondoctor cache prune {cache} --other-compilers")  # type: ignore[index]


def test_a_loaded_host_gets_the_findings_an_idle_one_gets(tmp_path: Path, compiler_venv: Path) -> None:
    """The count inside check is bounded by entries, never by the clock: a cache of 1,300 entries (more than check's
    1,000) with a failed entry, a stale lock and an older compiler's graphs gives the same findings, word for word,
    with a CPU-bound process running beside the check as without it, and says where the count stopped."""
    import subprocess
    import sys

    cache = tmp_path / "cache"
    entry(cache / INSTALLED, "MODULE_e358924ac4ea2b2bb562+39f12043", "failed")
    stale = entry(cache / INSTALLED, "MODULE_3de39ac50493f469550f+39f12043", "incomplete", lock=True)
    _aged_lock(stale / "model.hlo_module.pb.lock", 4 * 3600)
    for number in range(1_200):
        entry(cache / INSTALLED, f"MODULE_{number:020d}+39f12043", "done")
    for number in range(100):
        entry(cache / OTHER, f"MODULE_{number:020d}+2c2d707e", "done", layout="2.12")

    def findings() -> list[tuple[str, str, str]]:
        report = check_json(["--venv", str(compiler_venv), "--select", "ND-CACHE"],
                            env=cli_env({"NEURON_CC_FLAGS": f"--cache_dir={cache}"}))[1]
        return sorted((str(item["id"]), str(item["title"]), json.dumps(item["evidence"], sort_keys=True))
                      for item in report["findings"])  # type: ignore[union-attr]

    idle = findings()
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        loaded = findings()
    finally:
        busy.kill()
        busy.wait(timeout=30)
    assert loaded == idle
    # Which of the plants fall inside the first 1,000 depends on the directory's order, the same for both runs.
    found = {finding_id: title for finding_id, title, _ in idle}
    assert set(found) <= {"ND-CACHE-001", "ND-CACHE-002", "ND-CACHE-009"} and "ND-CACHE-009" in found, idle
    assert found["ND-CACHE-009"].endswith("(counted up to 1,000 entries)")
