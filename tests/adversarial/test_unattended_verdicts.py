"""Attack class: any user decides the verdict. Anyone may create names in /var/tmp, where the default compile cache
lives: a link there to a small or full filesystem must not drain a healthy node. Unattended `health` judges the
default cache, like the environments it finds, only where root controls every link and folder on the way to it,
or where the operator configured it; otherwise it says why in an info (never degraded, never a drain). `check`, run
by a user, judges it as before. Each root is made a live view of this machine once its small filesystem is mounted
(the DaemonSet's /host): only then are its disk figures the host's (host/live_view.py).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import cli_env, findings_by_id, run_cli
from tests.doubles.slurm import FakeSlurm
from tests.host_fixture import HostSpec, build_host
from tests.mount_tables import as_live_view
from tests.small_filesystem import small_filesystem

NOBODY = 65534
CACHE = "var/tmp/neuron-compile-cache"


def _host(tmp_path: Path) -> Path:
    root = build_host(tmp_path / "root", HostSpec())
    (root / "var/tmp").mkdir(parents=True)
    (root / "var/tmp").chmod(0o1777)  # as on every host: anyone may create names, only in their own
    return root


def _plant(root: Path, how: str) -> None:
    """What stands at the default cache location, leading to the full filesystem mounted at /mnt/full."""
    cache = root / CACHE
    if how == "nobody's link":
        cache.symlink_to("/mnt/full")
        os.lchown(cache, NOBODY, NOBODY)
    elif how == "root's link to nobody's folder":
        (root / "mnt/full/theirs").mkdir()
        os.chown(root / "mnt/full/theirs", NOBODY, NOBODY)
        cache.symlink_to("/mnt/full/theirs")
    elif how == "nobody's link to a link of root's":
        (root / "var/tmp/elsewhere").symlink_to("/mnt/full")
        cache.symlink_to("elsewhere")
        os.lchown(cache, NOBODY, NOBODY)
    elif how == "root's link":
        cache.symlink_to("/mnt/full")


def _health(root: Path, tmp_path: Path, config: str = "", **variables: str) -> tuple[int, str, dict[str, object]]:
    """`health --slurm --dry-run` against the recording scontrol (its log line), and the same run's JSON report."""
    conf = tmp_path / "health.conf"
    conf.write_text(config)
    slurm = FakeSlurm(tmp_path, "IDLE")
    env = slurm.env(NEURONDOCTOR_CONFIG=str(conf), **variables)
    dry = run_cli(["health", "--slurm", "--dry-run", "--root", str(root)], env=env)
    report = run_cli(["health", "--format", "json", "--root", str(root)], env=env)
    assert not [call for call in slurm.calls() if call.startswith("update")]  # --dry-run changes nothing
    return dry.returncode, dry.stderr, json.loads(report.stdout)


@pytest.mark.parametrize("how", ["nobody's link", "root's link to nobody's folder",
                                 "nobody's link to a link of root's"])
def test_a_cache_another_user_controls_never_drains_a_node(how: str, tmp_path: Path) -> None:
    root = _host(tmp_path)
    with small_filesystem(root / "mnt/full"):
        as_live_view(root)
        _plant(root, how)
        code, log, report = _health(root, tmp_path)
        assert code == 0 and "slurm: none" in log and "would run" not in log, log
        assert report["health"]["state"] == "ok"  # type: ignore[index]
        found = findings_by_id(report)
        assert "ND-RES-001" not in found
        assert [(finding["severity"], finding["evidence"]["why"].endswith("is owned by uid 65534 (nobody)"))
                for finding in found["ND-CACHE-006"]] == [("info", True)]
        check = run_cli(["check", "--json", "--root", str(root)], env=cli_env())
        assert check.returncode == 1 and '"ND-RES-001"' in check.stdout  # a user's check judges it as before


def test_a_cache_folder_another_user_owns_never_drains_a_node(tmp_path: Path) -> None:
    """No link at all: the cache folder itself, on a full filesystem, is another user's (they compiled first)."""
    root = _host(tmp_path)
    with small_filesystem(root / CACHE):
        as_live_view(root)
        os.chown(root / CACHE, NOBODY, NOBODY)
        code, log, report = _health(root, tmp_path)
        assert code == 0 and "would run" not in log, log
        assert [finding["id"] for finding in report["findings"]] == ["ND-CACHE-006"]  # type: ignore[union-attr]


def test_a_cache_root_made_on_a_full_filesystem_still_drains(tmp_path: Path) -> None:
    """Near miss: root's own link to root's full filesystem is the node's real state: unhealthy, drained."""
    root = _host(tmp_path)
    with small_filesystem(root / "mnt/full"):
        as_live_view(root)
        _plant(root, "root's link")
        code, log, report = _health(root, tmp_path)
        assert code == 1 and "would run: scontrol update 'nodename=trn1-a' 'state=drain'" in log, log
        assert "ND-RES-001" in log and report["health"]["state"] == "unhealthy"  # type: ignore[index]
        assert "ND-CACHE-006" not in findings_by_id(report)


@pytest.mark.parametrize("configured", ["health.conf", "environment"])
def test_a_cache_the_operator_configured_is_judged_whoever_owns_it(configured: str, tmp_path: Path) -> None:
    """Near miss: the operator named the location (health.conf, or the environment health runs with): judged."""
    root = _host(tmp_path)
    with small_filesystem(root / "mnt/full"):
        as_live_view(root)
        _plant(root, "nobody's link")
        if configured == "health.conf":
            code, log, report = _health(root, tmp_path, config=f"compile_cache = /{CACHE}\n")
        else:
            code, log, report = _health(root, tmp_path, NEURON_COMPILE_CACHE_URL=f"/{CACHE}")
        assert code == 1 and "'state=drain'" in log and "ND-RES-001" in log, log
        cache = report["facts"]["host"]["snapshot"]["compile_cache"]  # type: ignore[index]
        assert cache["source"] == ("health.conf" if configured == "health.conf" else "NEURON_COMPILE_CACHE_URL")


def test_a_root_link_in_opt_to_another_users_environment_never_drains_a_node(tmp_path: Path) -> None:
    """The same rule for environments: a root-owned link under /opt whose target (read inside --root, as a chroot
    reads it) is a broken venv another user owns is not root's environment."""
    if os.geteuid() != 0:
        pytest.skip("chowns a venv to another user (CI runs as root)")
    root = _host(tmp_path)
    theirs = root / "home/someone/venv"
    (theirs / "bin").mkdir(parents=True)
    (theirs / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.11.7\n")
    (theirs / "bin/python").symlink_to("/usr/bin/python3.99-gone")  # ND-VENV-001, an error
    (theirs / "lib/python3.11/site-packages").mkdir(parents=True)
    for folder, folders, files in os.walk(root / "home/someone"):
        for name in [folder, *(os.path.join(folder, entry) for entry in [*folders, *files])]:
            os.lchown(name, NOBODY, NOBODY)
    (root / "opt").mkdir(exist_ok=True)
    (root / "opt/aws_neuronx_venv_pytorch_2_9").symlink_to("/home/someone/venv")
    code, log, report = _health(root, tmp_path)
    assert code == 0 and "would run" not in log, log
    assert "ND-VENV-001" not in findings_by_id(report)
