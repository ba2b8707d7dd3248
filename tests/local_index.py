"""A real PEP 503 simple index, served by `http.server` on 127.0.0.1, holding wheels built in the tests."""

from __future__ import annotations

import hashlib
import html
import http.server
import re
import shutil
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.wheelhouse import WheelSpec, build_wheel


def _project(filename: str) -> str:
    return re.sub(r"[-_.]+", "-", filename.split("-", 1)[0]).lower()


def write_simple_index(root: Path, wheels: list[Path]) -> Path:
    """`root/simple/<project>/index.html` with sha256 fragments, and the files under `root/files/`."""
    files = root / "files"
    files.mkdir(parents=True, exist_ok=True)
    projects: dict[str, list[Path]] = {}
    for wheel in wheels:
        copied = files / wheel.name
        shutil.copyfile(wheel, copied)
        projects.setdefault(_project(wheel.name), []).append(copied)
    simple = root / "simple"
    for project, entries in projects.items():
        links = []
        for entry in sorted(entries):
            digest = hashlib.sha256(entry.read_bytes()).hexdigest()
            name = html.escape(entry.name)
            links.append(f'<a href="../../files/{name}#sha256={digest}">{name}</a><br/>')
        page = simple / project / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text("<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n")
    (simple / "index.html").write_text("<!DOCTYPE html><html><body>\n" + "\n".join(
        f'<a href="{project}/">{project}</a><br/>' for project in sorted(projects)) + "\n</body></html>\n")
    return simple


@contextmanager
def serve(directory: Path, stall: str = "", stall_seconds: float = 0.0) -> Iterator[str]:
    """Serve `directory` on 127.0.0.1 (a free port) for the duration of the block; yields the base URL.
    Requests whose path contains `stall` wait `stall_seconds` first (a slow download to interrupt)."""
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(directory), **kwargs)  # type: ignore[arg-type]

        def do_GET(self) -> None:
            if stall and stall in self.path:
                time.sleep(stall_seconds)
            super().do_GET()

        def log_message(self, format: str, *args: object) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def build_index(root: Path, specs: list[WheelSpec], extra_wheels: list[Path]) -> Path:
    wheels = [build_wheel(spec, root / "build") for spec in specs] + extra_wheels
    return write_simple_index(root / "index", wheels)


@contextmanager
def served_index(root: Path, specs: list[WheelSpec], extra_wheels: tuple[Path, ...] = ()) -> Iterator[str]:
    """Build the wheels into an index under `root`, serve it on 127.0.0.1, and yield its `/simple` URL."""
    build_index(root, specs, list(extra_wheels))
    with serve(root / "index") as base:
        yield f"{base}/simple"
