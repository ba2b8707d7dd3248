"""Attack class: the files `health` reads and writes as root.

health.conf may be a link another user placed, a shadow-style file, a file past any sane size or thousands of
repeated keys; the status file and the Prometheus textfile may be named where another user already put something.
The verdict is unknown with its reason (nothing drains), no line of the file reaches stdout, stderr or the status
file, and nothing is written over or through what neurondoctor did not write.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import cli_env, run_cli
from tests.host_fixture import HostSpec, build_host

NOBODY = 65534
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chowns a file to another user (CI runs as root)")
SHADOW = ("root:$6$Zx9secretsalt$abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWX:19000:0:99999:7:::\n"
          "ubuntu:$6$anothersalt$ZYXWVUTSRQPONMLKJIHGFEDCBA9876543210zyxwvutsrqponmlkjihgfedcba:19000:0:99999:7:::\n")


@pytest.fixture(scope="module")
def healthy_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_host(tmp_path_factory.mktemp("health-files") / "root", HostSpec())


def _health(root: Path, config: Path, status: Path, *extra: str) -> tuple[int, str, str]:
    done = run_cli(["health", "--root", str(root), "--status-file", str(status), *extra],
                   env=cli_env({"NEURONDOCTOR_CONFIG": str(config)}))
    return done.returncode, done.stdout, done.stderr


@needs_root
def test_a_config_linked_to_another_users_file_is_not_read(healthy_root: Path, tmp_path: Path) -> None:
    theirs = tmp_path / "theirs.conf"
    theirs.write_text(f"root = {healthy_root}\nskip = hardware\n")
    os.chown(theirs, NOBODY, NOBODY)
    config = tmp_path / "health.conf"
    config.symlink_to(theirs)
    code, stdout, stderr = _health(healthy_root, config, tmp_path / "health.json")
    assert code == 3 and "owned by uid 65534, not by root: not read" in stdout + stderr
    assert json.loads((tmp_path / "health.json").read_text())["state"] == "unknown"


def test_a_shadow_style_config_never_reaches_any_output(healthy_root: Path, tmp_path: Path) -> None:
    secret = tmp_path / "shadow"
    secret.write_text(SHADOW)
    config = tmp_path / "health.conf"
    config.symlink_to(secret)
    status = tmp_path / "health.json"
    for output_format in ("text", "nhc", "npd", "json"):
        code, stdout, stderr = _health(healthy_root, config, status, "--format", output_format)
        assert code == 3, stderr
        seen = stdout + stderr + status.read_text()
        assert "$6$" not in seen and "secretsalt" not in seen and "anothersalt" not in seen, seen
        assert "health.conf:1: not a `key = value` line" in seen


def test_a_config_past_its_bound_is_unknown_never_cut(healthy_root: Path, tmp_path: Path) -> None:
    config = tmp_path / "health.conf"
    config.write_text("# padding\n" * 30_000 + "skip = ND-DEV-003\n")  # the skip lies past 256 KiB
    code, stdout, stderr = _health(healthy_root, config, tmp_path / "health.json")
    assert code == 3 and "larger than 256 KiB: not read" in stdout + stderr


def test_thousands_of_repeated_keys_give_a_bounded_status(healthy_root: Path, tmp_path: Path) -> None:
    config = tmp_path / "health.conf"
    config.write_text("deadline = 20\n" * 15_000)  # 210 KB: within the bound
    status = tmp_path / "health.json"
    code, _, stderr = _health(healthy_root, config, status)
    written = json.loads(status.read_text())
    assert code == 3 and written["state"] == "unknown", stderr
    assert "+14949 more problems" in written["reasons"] and len(status.read_bytes()) < 16 << 10


@needs_root
def test_an_empty_status_file_of_another_user_is_not_replaced(healthy_root: Path, tmp_path: Path) -> None:
    status = tmp_path / "health.json"
    status.write_text("")
    os.chown(status, NOBODY, NOBODY)
    done = run_cli(["health", "--root", str(healthy_root), "--status-file", str(status)])
    assert done.returncode == 2 and "was not written by neurondoctor" in done.stderr
    assert (status.stat().st_uid, status.read_bytes()) == (NOBODY, b"")


def test_a_textfile_directory_that_is_a_link_is_not_written_through(healthy_root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    textfiles = tmp_path / "textfile_collector"
    textfiles.symlink_to(elsewhere)
    done = run_cli(["health", "--root", str(healthy_root), "--format", "prometheus", "--output",
                    str(textfiles / "neurondoctor.prom")])
    assert done.returncode == 2 and "is a symbolic link; refusing to write through it" in done.stderr
    assert list(elsewhere.iterdir()) == []


def _broken_venv(root: Path, inner: str) -> Path:
    """A venv whose interpreter is gone (ND-VENV-001, an error): what any user can leave in their home."""
    venv = root / inner.lstrip("/")
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n")
    (venv / "bin/python").symlink_to("/usr/bin/python3.99-gone")
    (venv / "lib/python3.11/site-packages").mkdir(parents=True)
    return venv


def test_an_unprivileged_users_environment_never_drains_a_node(tmp_path: Path) -> None:
    """`check` judges what it discovers; unattended `health` judges only what the operator
    configured or, with none configured, root-owned environments under /opt."""
    root = build_host(tmp_path / "root", HostSpec())
    _broken_venv(root, "/home/ubuntu/aws_neuron_venv_pytorch")
    check = run_cli(["check", "--root", str(root), "--json"])
    assert check.returncode == 1 and '"ND-VENV-001"' in check.stdout  # check still judges the home venv
    health = run_cli(["health", "--root", str(root), "--format", "nhc"])
    assert health.returncode == 0 and "ND-VENV-001" not in health.stdout, health.stdout + health.stderr
    opt = _broken_venv(root, "/opt/aws_neuronx_venv_pytorch_2_9")
    assert run_cli(["health", "--root", str(root), "--format", "nhc"]).returncode == 1  # root's own: judged
    if os.geteuid() == 0:
        for folder, _, files in os.walk(opt):
            for name in [folder, *(os.path.join(folder, entry) for entry in files)]:
                os.lchown(name, NOBODY, NOBODY)
        assert run_cli(["health", "--root", str(root), "--format", "nhc"]).returncode == 0  # another user's: not
