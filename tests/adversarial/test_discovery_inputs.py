"""Attack class: what discovery walks is data others control. Homes of other users under `--root`, a
kernelspec anyone can write, folders by the thousand: FIFOs where a pyvenv.cfg or kernel.json belongs, links that
loop or point out of the root, argv words that are not paths. Every run ends in bounded time with a report, reads
nothing outside the root, and judges nothing a link smuggled in from the machine running the doctor."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from neurondoctor.host.rootfs import RootFS
from neurondoctor.pyenv.discovery import MAX_LISTED, discover_environments
from tests.conftest import check_json
from tests.host_fixture import HostSpec, build_host


def _root(tmp_path: Path) -> Path:
    return build_host(tmp_path / "host", HostSpec(release="2.31.1"))


def test_fifos_where_discovery_reads_files_do_not_block(tmp_path: Path) -> None:
    root = _root(tmp_path)
    home = root / "home" / "mallory"
    venv = home / "env"
    (venv / "bin").mkdir(parents=True)
    os.mkfifo(venv / "pyvenv.cfg")
    kernel = home / ".local/share/jupyter/kernels/k"
    kernel.mkdir(parents=True)
    os.mkfifo(kernel / "kernel.json")
    started = time.monotonic()
    code, report, _ = check_json(["--root", str(root)])
    assert time.monotonic() - started < 60
    assert code in (0, 1, 3) and "health" in report


def test_links_that_loop_or_leave_the_root_are_not_followed_out(tmp_path: Path) -> None:
    """`/home/mallory/out -> /` means the root's `/`, never the machine's; a loop reads as nothing. The machine's
    own environments (this test's venv, /root/.pyenv) are never discovered through them."""
    root = _root(tmp_path)
    home = root / "home" / "mallory"
    home.mkdir(parents=True)
    (home / "out").symlink_to("/")
    (home / "up").symlink_to("../../..")
    (home / "loop").symlink_to(home / "loop")
    kernel = home / ".local/share/jupyter/kernels/k"
    kernel.mkdir(parents=True)
    (kernel / "kernel.json").write_text(json.dumps({"argv": [f"{Path.home()}/.pyenv/versions/3.11.7/bin/python3",
                                                             "-m", "ipykernel_launcher"]}))
    found = discover_environments(RootFS(str(root)), {}).found
    assert all(item.path.startswith(str(root)) for item in found), [item.path for item in found]


def test_kernelspecs_that_are_not_what_jupyter_writes(tmp_path: Path) -> None:
    root = _root(tmp_path)
    kernels = root / "home" / "mallory" / ".local/share/jupyter/kernels"
    for name, text in (("list", "[1, 2]"), ("nul", '{"argv": ["/bin/py\\u0000thon"]}'), ("deep", "[" * 100000),
                       ("relative", '{"argv": ["python3", "-m", "ipykernel"]}'), ("number", '{"argv": [3]}'),
                       ("binary", "\udcff".encode("utf-8", "surrogateescape").decode("latin-1"))):
        (kernels / name).mkdir(parents=True)
        (kernels / name / "kernel.json").write_text(text, encoding="utf-8", errors="surrogateescape")
    assert discover_environments(RootFS(str(root)), {}).found == []


def test_a_home_of_many_folders_is_walked_within_its_bound(tmp_path: Path) -> None:
    root = _root(tmp_path)
    home = root / "home" / "mallory"
    for index in range(MAX_LISTED + 500):
        (home / f"d{index:05d}").mkdir(parents=True)
    started = time.monotonic()
    discovery = discover_environments(RootFS(str(root)), {})
    assert discovery.found == [] and time.monotonic() - started < 30
    assert discovery.cut  # said, not silently partial


def test_an_environment_found_through_a_link_is_named_where_it_is(tmp_path: Path) -> None:
    """`~/out -> /` in mallory's home reaches the root's /usr/local Python: it is reported (and its fixes name it)
    as /usr/local, once, never as /home/mallory/out/usr/local, a path its owner can re-point."""
    from tests.layouts import installation

    root = _root(tmp_path)
    installation(root / "usr" / "local", "3.11")
    home = root / "home" / "mallory"
    home.mkdir(parents=True)
    (home / "out").symlink_to("/usr")
    paths = [item.path for item in discover_environments(RootFS(str(root)), {}).found]
    assert paths == [str(root / "usr" / "local")]
