"""Attack class: hard links are not symlinks. Where the kernel lets anyone link a file they do not own
(`fs.protected_hardlinks=0`), a user's compile cache, compile workdir or environment can hold a hard link to a
root-only file: no link check sees it (a hard link is the file itself), so root would print or archive the file.
Files in folders other users write are read by one reader (regular_files.read_untrusted_file), which refuses a file
with several links there and a file not owned by its folder's owner; `cache status`, `cache verify`, `check` and
`bundle` never show the secret, and a normal file of the folder's owner is still read."""

from __future__ import annotations

import json
import os
import stat
import tarfile
from pathlib import Path

import pytest

from tests.cache_fixture import entry
from tests.conftest import check_json, cli_env, empty_folder, run_cli
from tests.host_fixture import HostSpec, build_host
from tests.wheelhouse import VenvFactory

COMPILER = "neuronxcc-2.15.141.0+d3cfc8ca"
NOBODY = 65534
SECRET = "ROOT-ONLY-d41d8cd98f00b204"
PLANTED_LOG = "MODULE_aaaaaaaaaaaaaaaaaaaa+39f12043"
PLANTED_NEFF = "MODULE_bbbbbbbbbbbbbbbbbbbb+39f12043"
PLANTED_FLAGS = "MODULE_cccccccccccccccccccc+39f12043"
NEAR_MISS = "MODULE_dddddddddddddddddddd+39f12043"


def _needs_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root: links a root-only file and gives the folders to another user")


def _secret(folder: Path, name: str, text: str) -> Path:
    """A root-only file (mode 0600) that the planted links name; it carries SECRET however it is read."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    path.chmod(0o600)
    return path


def _give(path: Path, uid: int = NOBODY) -> None:
    """The folder and every file in it the user's own, as on a host where the user made them (links left alone:
    chown of a hard link is chown of the secret)."""
    for item in (path, *path.rglob("*")):
        if item.stat(follow_symlinks=False).st_nlink == 1 or item.is_dir():
            os.chown(item, uid, uid, follow_symlinks=False)


def _plant(target: Path, secret: Path) -> None:
    target.unlink(missing_ok=True)
    os.link(secret, target)


def _hostile_cache(tmp_path: Path, cache: Path) -> None:
    """A user's cache: a failed entry whose log, a finished entry whose NEFF and one whose flags are hard links to
    root-only files; and a failed entry of the user's own (the near miss)."""
    secrets = tmp_path / "root-only"
    log = _secret(secrets, "log", f"ERROR: {SECRET} in the first error line\n")
    neff = _secret(secrets, "neff", SECRET + "x" * 2048)  # past a NEFF's header, so that its start would be shown
    flags = _secret(secrets, "flags", json.dumps([f"--{SECRET}"]))
    entry(cache / COMPILER, PLANTED_LOG, "failed")
    entry(cache / COMPILER, PLANTED_NEFF, "done")
    entry(cache / COMPILER, PLANTED_FLAGS, "done")
    entry(cache / COMPILER, NEAR_MISS, "failed", log_text="ERROR: the user's own failure\n")
    _give(cache)
    _plant(cache / COMPILER / PLANTED_LOG / "model.log", log)
    _plant(cache / COMPILER / PLANTED_NEFF / "model.neff", neff)
    _plant(cache / COMPILER / PLANTED_FLAGS / "compile_flags.json", flags)


def test_cache_status_and_verify_never_show_a_linked_secret(tmp_path: Path) -> None:
    _needs_root()
    cache = tmp_path / "var/tmp/neuron-compile-cache"
    _hostile_cache(tmp_path, cache)
    status = run_cli(["cache", "status", str(cache), "--json"])
    assert status.returncode == 0, status.stderr
    assert SECRET not in status.stdout + status.stderr
    [counted] = json.loads(status.stdout)["caches"]
    errors = counted["compilers"][0]["failed_errors"]
    assert errors[NEAR_MISS] == "ERROR: the user's own failure"  # the user's own log is still read
    assert errors[PLANTED_LOG] == (f"(log unreadable: a file with 2 hard links, not owned by its folder's owner "
                                   f"(uid {NOBODY}))")
    text = run_cli(["cache", "status", str(cache)])
    assert SECRET not in text.stdout and "ERROR: the user's own failure" in text.stdout

    verify = run_cli(["cache", "verify", str(cache), "--json"])
    assert verify.returncode == 1 and SECRET not in verify.stdout + verify.stderr
    problems = {problem["entry"]: problem["problem"] for problem in json.loads(verify.stdout)["verify"]["problems"]}
    assert problems == {f"{COMPILER}/{PLANTED_NEFF}": "model.neff unreadable: a file with 2 hard links, not owned "
                                                      f"by its folder's owner (uid {NOBODY})"}


def test_check_never_shows_a_linked_secret(tmp_path: Path) -> None:
    _needs_root()
    cache = tmp_path / "cache"
    _hostile_cache(tmp_path, cache)
    env = cli_env({"NEURON_CC_FLAGS": f"--cache_dir={cache}"})
    _, document, stderr = check_json(["--venv", empty_folder(tmp_path), "--select", "ND-CACHE"], env=env)
    text = json.dumps(document)
    assert SECRET not in text + stderr
    [failed] = [finding for finding in document["findings"] if finding["id"] == "ND-CACHE-001"]
    assert f"{COMPILER}/{NEAR_MISS}: ERROR: the user's own failure" in failed["evidence"]["errors"]


def test_a_hard_link_to_a_replaced_file_is_refused_by_its_owner(tmp_path: Path) -> None:
    """`passwd` replaces /etc/shadow by a rename: a link made to the old one is then its only name (one link) and
    keeps root as its owner. In a folder of another user, a file not theirs is refused."""
    _needs_root()
    cache = tmp_path / "cache"
    entry(cache / COMPILER, PLANTED_LOG, "failed")
    _give(cache)
    old = _secret(tmp_path / "etc", "shadow", f"ERROR: {SECRET}\n")
    _plant(cache / COMPILER / PLANTED_LOG / "model.log", old)
    old.unlink()  # replaced: the link is its last name
    status = run_cli(["cache", "status", str(cache), "--json"])
    assert SECRET not in status.stdout
    [counted] = json.loads(status.stdout)["caches"]
    assert counted["compilers"][0]["failed_errors"][PLANTED_LOG] == (
        f"(log unreadable: owned by uid 0, not by its folder's owner (uid {NOBODY}))")


def _archive_text(archive: Path) -> dict[str, str]:
    with tarfile.open(archive) as bundle:
        return {member.name: bundle.extractfile(member).read().decode("utf-8", "replace")  # type: ignore[union-attr]
                for member in bundle.getmembers() if member.isfile()}


def test_bundle_never_archives_a_linked_secret(tmp_path: Path, venvs: VenvFactory) -> None:
    _needs_root()
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge"))
    secret = _secret(root / "root", "secret.txt", f"ERROR [NCC_EVRF001] {SECRET}\n")
    workdir = root / "tmp/evil/neuroncc_compile_workdir"
    (workdir / "0000").mkdir(parents=True)
    (workdir / "1111").mkdir()
    (workdir / "1111/log-neuron-cc.txt").write_text("ERROR [NCC_EVRF001] the user's own compile\n")
    _give(root / "tmp/evil")
    os.link(secret, workdir / "0000/log-neuron-cc.txt")
    cache = root / "var/tmp/neuron-compile-cache"
    _hostile_cache(tmp_path, cache)
    venv = venvs.create("hostile", parent=tmp_path / "home/evil")
    (venv / "pip.conf").write_text("[global]\nindex-url = https://pypi.example/simple\n")
    _give(venv)
    (venv / "pip.conf").unlink()
    os.link(_secret(tmp_path / "root-only", "pip.conf", f"[global]\nindex-url = https://{SECRET}.example/simple\n"),
            venv / "pip.conf")
    archive = tmp_path / "support.tar.gz"
    result = run_cli(["bundle", "-o", str(archive), "--root", str(root), "--venv", str(venv), "--max-time", "120"])
    assert result.returncode == 0, result.stderr
    members = _archive_text(archive)
    assert not [name for name, text in members.items() if SECRET in text]
    assert SECRET not in result.stdout + result.stderr
    logs = {name.split("/", 2)[2]: text for name, text in members.items() if name.endswith("log-neuron-cc.txt")}
    assert logs == {"tmp/evil/neuroncc_compile_workdir/1111/log-neuron-cc.txt":  # the user's own log still comes
                    "ERROR [NCC_EVRF001] the user's own compile\n"}
    [near_miss] = [text for name, text in members.items() if name.endswith(f"{NEAR_MISS}/model.log")]
    assert near_miss == "ERROR: the user's own failure\n"


def test_a_linked_pip_conf_is_not_read_by_check(tmp_path: Path, venvs: VenvFactory) -> None:
    """An environment's pip.conf is its owner's: one that is a hard link to a root-only configuration is not read
    (its index would show in the report); the owner's own is."""
    _needs_root()
    venv = venvs.create("hostile", parent=tmp_path / "home/evil")
    (venv / "pip.conf").write_text("[global]\nindex-url = https://own.example/simple\n")
    _give(venv)
    _, document, _ = check_json(["--venv", str(venv)], env=cli_env())
    assert "https://own.example/simple" in json.dumps(document)  # the near miss
    (venv / "pip.conf").unlink()
    os.link(_secret(tmp_path / "root-only", "pip.conf", f"[global]\nindex-url = https://{SECRET}.example/simple\n"),
            venv / "pip.conf")
    _, document, stderr = check_json(["--venv", str(venv)], env=cli_env())
    assert SECRET not in json.dumps(document) + stderr


def _stat(uid: int, mode: int, links: int = 1) -> os.stat_result:
    return os.stat_result((mode, 1, 1, links, uid, uid, 10, 0, 0, 0))


@pytest.mark.parametrize(("file", "folder", "refused"), [
    (_stat(1000, stat.S_IFREG | 0o644, links=2), _stat(1000, stat.S_IFDIR | 0o755), False),  # uv's own links
    (_stat(0, stat.S_IFREG | 0o644, links=2), _stat(0, stat.S_IFDIR | 0o755), False),  # root's, in root's folder
    (_stat(0, stat.S_IFREG | 0o600, links=2), _stat(1000, stat.S_IFDIR | 0o755), True),  # root's, in a user's
    (_stat(1000, stat.S_IFREG | 0o644, links=2), _stat(0, stat.S_IFDIR | 0o1777), True),  # linked into /tmp
    (_stat(0, stat.S_IFREG | 0o600), _stat(1000, stat.S_IFDIR | 0o755), True),  # the last name of a replaced file
    (_stat(1000, stat.S_IFREG | 0o600), _stat(1000, stat.S_IFDIR | 0o700), False),  # the user's own
    (_stat(0, stat.S_IFREG | 0o600), _stat(0, stat.S_IFDIR | 0o1777), True),  # root's, in a folder anyone writes
    (_stat(0, stat.S_IFREG | 0o644), _stat(0, stat.S_IFDIR | 0o1777), False),  # root's log anyone may read
    (_stat(2000, stat.S_IFREG | 0o600), _stat(0, stat.S_IFDIR | 0o1777), False),  # another user's, in /tmp
])
def test_the_rule_refuses_what_a_planted_link_can_look_like(file: os.stat_result, folder: os.stat_result,
                                                             refused: bool) -> None:
    from neurondoctor.regular_files import untrusted_refusal

    assert (untrusted_refusal(file, folder, reader=0) is not None) == refused
