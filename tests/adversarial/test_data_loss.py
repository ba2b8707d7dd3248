"""Attack class: data loss. Nothing the doctor writes may delete or overwrite what it did not create unless the
user named that very thing with --force; a failed or interrupted write leaves nothing behind."""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.local_index import served_index
from tests.test_venv_create import RELEASE, bundled_pip, interrupt_a_build, isolated_env, release_wheels


@pytest.fixture(scope="module")
def index_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_index(tmp_path_factory.mktemp("loss-index"), release_wheels(), (bundled_pip(),)) as url:
        yield url


def _create(target: Path, index_url: str, env: dict[str, str], *extra: str,
            python: str = sys.executable) -> subprocess.CompletedProcess[str]:
    return run_cli(["venv", "create", str(target), "--release", RELEASE, "--python", python, "--installer", "pip",
                    "--index-url", index_url, *extra], env=env, timeout=600)


def _user_directory(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "thesis.tex").write_text("three years of work\n")
    return path / "thesis.tex"


@pytest.mark.parametrize("force", [False, True])
def test_venv_create_never_replaces_a_directory_that_is_not_a_venv(index_url: str, tmp_path: Path,
                                                                  force: bool) -> None:
    precious = _user_directory(tmp_path / "work")
    result = _create(tmp_path / "work", index_url, isolated_env(tmp_path), *(["--force"] if force else []))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    # One answer with or without --force: never "pass --force", never "done" or "nothing left behind"
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'work'} exists and is not a virtual environment (no pyvenv.cfg and bin/python); "
        "neurondoctor replaces only environments, so it was left as it is; next: choose another path"]
    assert precious.read_text() == "three years of work\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["home", "work"] or not list(
        tmp_path.glob(".work*"))


def test_venv_create_refuses_a_symlink_and_a_file_at_path(index_url: str, tmp_path: Path) -> None:
    precious = _user_directory(tmp_path / "real")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    (tmp_path / "notes.txt").write_text("keep me\n")
    for name in ("link", "notes.txt"):
        result = _create(tmp_path / name, index_url, isolated_env(tmp_path), "--force")
        assert result.returncode != 0 and "not a virtual environment" in result.stderr
    assert precious.read_text() == "three years of work\n" and (tmp_path / "notes.txt").read_text() == "keep me\n"
    assert (tmp_path / "link").is_symlink()


def test_a_second_build_of_the_same_path_is_refused_while_the_first_runs(index_url: str, tmp_path: Path) -> None:
    target = tmp_path / "shared"
    lock = os.open(tmp_path / ".shared.neurondoctor.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # what a first, still running, venv create holds
        result = _create(target, index_url, isolated_env(tmp_path))
    finally:
        os.close(lock)
    assert result.returncode != 0 and "another `neurondoctor venv create` is building" in result.stderr
    assert not target.exists()


def test_a_directory_that_appears_during_the_build_is_not_clobbered(index_url: str, tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Another program creates the user's directory at PATH in the window between the finished build and the
    rename: the re-check just before the rename must notice it and leave it alone."""
    from neurondoctor.actions.venv import builder as venv_builder
    from neurondoctor.actions.venv.create import VenvCreateOptions, prepare_venv

    target = tmp_path / "racy"
    real_write_guard = venv_builder.write_guard

    def guard_then_race(*args: object, **kwargs: object) -> None:
        real_write_guard(*args, **kwargs)  # type: ignore[arg-type]
        target.mkdir()
        (target / "data").write_text("mine\n")

    monkeypatch.setattr(venv_builder, "write_guard", guard_then_race)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    prepared = prepare_venv(VenvCreateOptions(path=str(target), release=RELEASE, python=sys.executable,
                                              installer="uv", index_url=index_url))
    with pytest.raises(venv_builder.TargetRefused, match="is not a virtual environment"):
        venv_builder.build_venv(prepared.plan, target, sys.executable, "uv")
    assert (target / "data").read_text() == "mine\n" and not (target / "pyvenv.cfg").exists()
    assert not list(tmp_path.glob(".racy*"))


def test_sigterm_during_a_build_removes_the_sibling_and_stops_the_installer(
        tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    process = interrupt_a_build(tmp_path_factory, tmp_path, "terminated", signal.SIGTERM, "uv")
    assert process.returncode == 130
    assert not (tmp_path / "terminated").exists() and not list(tmp_path.glob(".terminated*"))
    leftover = subprocess.run(["pgrep", "-a", "-f", str(tmp_path / ".terminated")], capture_output=True, text=True)
    assert leftover.stdout.strip() == ""  # the installer's process group was stopped with it


def test_venv_create_seeds_pip_without_the_index_serving_it(tmp_path_factory: pytest.TempPathFactory,
                                                           tmp_path: Path) -> None:
    """A mirror that carries only the Neuron stack (no pip wheel): pip comes from the interpreter's ensurepip."""
    target = tmp_path / "seeded"
    with served_index(tmp_path_factory.mktemp("no-pip-index"), release_wheels()) as url:
        result = run_cli(["venv", "create", str(target), "--release", RELEASE, "--python", sys.executable,
                          "--installer", "uv", "--index-url", url], env=isolated_env(tmp_path),
                         timeout=600)
    assert result.returncode == 0, result.stderr
    assert list(target.glob("lib/python*/site-packages/pip-*.dist-info"))


def _bundle(root: Path, output: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return run_cli(["bundle", "--root", str(root), "-o", str(output), "--max-time", "30", *extra], timeout=120)


def test_bundle_never_replaces_what_it_did_not_create(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    existing = tmp_path / "report.tar.gz"
    existing.write_text("an earlier archive the user keeps\n")
    refused = _bundle(root, existing)
    assert refused.returncode == 2 and "already exists; pass --force" in refused.stderr
    assert existing.read_text() == "an earlier archive the user keeps\n"
    directory = tmp_path / "a-directory"
    directory.mkdir()
    assert "is a directory" in _bundle(root, directory, "--force").stderr and directory.is_dir()
    device = _bundle(root, Path("/dev/null"), "--force")
    assert device.returncode == 2 and "not a regular file" in device.stderr
    missing = _bundle(root, tmp_path / "no-such-dir" / "x.tar.gz")
    assert missing.returncode == 2 and "does not exist" in missing.stderr and "Traceback" not in missing.stderr
    replaced = _bundle(root, existing, "--force")
    assert replaced.returncode == 0 and existing.read_bytes()[:2] == b"\x1f\x8b"
    assert not list(tmp_path.glob(".*partial"))


def test_a_failed_bundle_write_leaves_no_partial_file(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out_dir.chmod(0o555)  # the archive cannot be created (as root too, via the capability drop)
    from tests.conftest import without_read_privileges

    result = run_cli(["bundle", "--root", str(root), "-o", str(out_dir / "x.tar.gz"), "--max-time", "30"],
                     prefix=without_read_privileges(), timeout=120)
    out_dir.chmod(0o755)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert list(out_dir.iterdir()) == []


def test_the_obfuscation_map_never_overwrites_an_earlier_one(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc/hostname").write_text("node-a\n")
    archive = tmp_path / "b.tar.gz"
    earlier_map = tmp_path / "b.tar.gz.map.json"
    earlier_map.write_text('{"kept": true}\n')
    result = _bundle(root, archive, "--obfuscate")
    assert result.returncode == 0, result.stderr
    assert earlier_map.read_text() == '{"kept": true}\n' and (tmp_path / "b.tar.gz.map-1.json").is_file()
