"""Attack class: a terminal size that is no size.

`COLUMNS=0` made rich draw a console 0 wide: `check` printed nothing at all; `COLUMNS=²` made rich's own `int()`
raise. The size is read once (neurondoctor/report/terminal_size.py): a COLUMNS or LINES that is not a number above 0
falls back to the terminal's own size, else 80. Every text command, on a pipe and on a terminal, prints what it
prints at COLUMNS=80, with the same exit code and no traceback."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import struct
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, cli_env, run_cli
from tests.host_fixture import HostSpec, build_host
from tests.preflight_reports import node_document

BAD_WIDTHS = ["0", "-5", "abc", "²", "99999999999"]


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("widths")
    build_host(base / "root", HostSpec(instance_type="trn1.32xlarge"))
    (base / "reports").mkdir()
    (base / "reports" / "trn-1.json").write_text(json.dumps(node_document("trn-1")))
    return base


def _commands(base: Path) -> dict[str, list[str]]:
    root = str(base / "root")
    return {
        "check": ["check", "--root", root],
        "check -v": ["check", "--root", root, "-v"],
        "check --list": ["check", "--list"],
        "health": ["health", "--root", root, "--status-file", str(base / "health.json")],
        "explain": ["explain", "ND-ENV-002"],
        "fleet summarize": ["fleet", "summarize", str(base / "reports")],
        "cache status": ["cache", "status", "--root", root],
        "manifests list": ["manifests", "list"],
        "manifests status": ["manifests", "status"],
        "venv create --dry-run": ["venv", "create", str(base / "venv"), "--release", "2.31.1", "--dry-run"],
        "bootstrap": ["bootstrap", "--release", "2.31.1", "--venv", str(base / "venv"), "--root", root,
                      "--status-file", str(base / "bootstrap.json")],
        "probe canary": ["probe", "canary", "--root", root],
        "help": ["check", "--help"],
    }


COMMANDS = list(_commands(Path("/")))


@pytest.mark.parametrize("name", COMMANDS)
def test_every_text_command_prints_at_any_columns(place: Path, name: str) -> None:
    arguments = _commands(place)[name]
    expected = run_cli(arguments, env=cli_env({"COLUMNS": "80", "LINES": "24"}))
    assert "Traceback" not in expected.stderr, expected.stderr
    for width in BAD_WIDTHS:
        done = run_cli(arguments, env=cli_env({"COLUMNS": width, "LINES": width}))
        assert "Traceback" not in done.stderr, (width, done.stderr)
        assert done.returncode == expected.returncode, (width, done.returncode, done.stderr)
        assert len(done.stdout.splitlines()) == len(expected.stdout.splitlines()), (width, done.stdout)


def _on_a_terminal(arguments: list[str], columns: str) -> tuple[int, str]:
    """The command with its stdout and stderr on a pseudo-terminal of 100 columns (what a user sees)."""
    leader, follower = pty.openpty()
    os.set_blocking(leader, False)
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    env = cli_env({"COLUMNS": columns, "LINES": columns, "NO_COLOR": "1"})
    process = subprocess.Popen([sys.executable, "-m", "neurondoctor", *arguments], stdout=follower, stderr=follower,
                               stdin=subprocess.DEVNULL, env=env, cwd=str(REPO))
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except BlockingIOError:
            if process.poll() is not None:
                break
            time.sleep(0.02)
            continue
        except OSError:  # EIO: the terminal's other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    code = process.wait(timeout=120)
    os.close(leader)
    return code, b"".join(chunks).decode("utf-8", "replace")


@pytest.mark.parametrize("width", BAD_WIDTHS)
def test_check_on_a_terminal_wraps_at_the_terminal_s_width(place: Path, width: str) -> None:
    code, text = _on_a_terminal(["check", "--root", str(place / "root")], width)
    assert "Traceback" not in text and code == 0, text
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in text.splitlines() if line.strip()]
    assert len(lines) > 5 and "Healthy" in text, text
    assert max(len(line.rstrip()) for line in lines) <= 100  # the terminal's 100 columns, not 0 or 99999999999
