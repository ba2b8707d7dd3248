"""A `--root` that holds no host — an empty folder, the mount point of an image whose filesystem is not mounted, a
tree with a typo in its path — is unknown, never healthy: one line says what is missing, every area that would
have judged the host says it could not (no `[✓]`), exit 3, and `health` drains nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tests.doubles.slurm import FakeSlurm
from tests.host_fixture import HostSpec, build_host


def _unmounted_image(path: Path) -> Path:
    """What `/mnt/image` looks like before `mount`: an empty folder, or one holding only `lost+found`."""
    (path / "lost+found").mkdir(parents=True)
    return path


@pytest.mark.parametrize("kind", ["empty", "unmounted image", "only an etc"])
def test_a_tree_that_is_no_host_is_unknown_never_healthy(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "root"
    if kind == "empty":
        root.mkdir()
    elif kind == "unmounted image":
        _unmounted_image(root)
    else:
        (root / "etc").mkdir(parents=True)
        (root / "etc/hostname").write_text("node-1\n")
    text = run_cli(["check", "--root", str(root)])
    assert text.returncode == 3, text.stdout + text.stderr
    errors = [line for line in text.stdout.splitlines() if line.startswith("error: ")]
    assert errors == [f"error: {root}: not a Linux host tree: no /etc/os-release or /usr/lib/os-release; no /usr; "
                      "nothing about a host was judged"]
    assert "[✓]" not in text.stdout and "Healthy" not in text.stdout
    assert text.stdout.rstrip().splitlines()[-1].startswith("Unknown:")
    document = json.loads(run_cli(["check", "--root", str(root), "--json"]).stdout)
    assert document["health"]["state"] == "unknown"
    assert document["health"]["reasons"] == [errors[0].removeprefix("error: ")]
    assert {check["status"] for check in document["checks"]} <= {"unknown", "skipped"}
    nhc = run_cli(["check", "--root", str(root), "--format", "nhc"])
    assert nhc.returncode == 3 and not any(line.startswith("OK") for line in nhc.stdout.splitlines())


def test_health_drains_nothing_for_a_tree_that_is_no_host(tmp_path: Path) -> None:
    root = _unmounted_image(tmp_path / "image")
    slurm = FakeSlurm(tmp_path, "IDLE")
    done = run_cli(["health", "--slurm", "--root", str(root), "--status-file", str(tmp_path / "health.json")],
                   env=slurm.env())
    assert done.returncode == 3, done.stderr
    assert json.loads((tmp_path / "health.json").read_text())["state"] == "unknown"
    assert not any(call.startswith("update") for call in slurm.calls())


def test_near_miss_a_host_whose_os_release_is_the_usr_lib_one(tmp_path: Path) -> None:
    """Bottlerocket and others keep os-release in /usr/lib and link /etc/os-release to it (an absolute link, read
    inside the root): a host, judged as usual."""
    root = build_host(tmp_path / "host", HostSpec())
    text = (root / "etc/os-release").read_text()
    (root / "etc/os-release").unlink()
    (root / "usr/lib").mkdir(parents=True, exist_ok=True)
    (root / "usr/lib/os-release").write_text(text)
    (root / "etc/os-release").symlink_to("/usr/lib/os-release")
    done = run_cli(["check", "--root", str(root), "--json"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert json.loads(done.stdout)["errors"] == []
    (root / "etc/os-release").unlink()  # only /usr/lib's: still a host
    assert run_cli(["check", "--root", str(root)]).returncode == 0
