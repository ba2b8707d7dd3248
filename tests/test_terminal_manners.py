"""Terminal manners, kept by every command as a user runs it (a subprocess, the real entry point): a closed or full
stdout is exit 3 with one line; Ctrl-C is exit 130 with one line and nothing half-written; a path that cannot be used
is one `error:` line and exit 2; `--color auto|always|never`, NO_COLOR and TERM=dumb; ASCII marks, aligned, where the
output encoding or the locale is not UTF-8; redaction that keeps the reason. Each promise is checked in check,
health, explain, bundle, cache status/verify/prune, venv create --dry-run, fleet summarize, probe, manifests status
and bootstrap's and upgrade's plans."""

from __future__ import annotations

import json
import os
import pty
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cache_fixture import entry
from tests.conftest import REPO, cli_env, empty_folder, run_cli
from tests.host_fixture import HostSpec, build_host

COMMANDS = ["check", "health", "explain ID", "explain text", "bundle", "cache status", "cache verify", "cache prune",
            "venv create", "fleet summarize", "probe canary", "manifests status", "bootstrap", "upgrade"]


@pytest.fixture(scope="module")
def place(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A trn1.2xlarge whose driver is built but not loaded (docs/neuron-facts.md §7, `lsmod` shows no neuron), its
    report for `fleet summarize`, and a folder to name as the environment."""
    base = tmp_path_factory.mktemp("manners")
    build_host(base / "host", HostSpec(driver_loaded=False))
    compiler = base / "host" / "var" / "tmp" / "neuron-compile-cache" / "neuronxcc-2.15.141.0+d3cfc8ca"
    entry(compiler, "MODULE_12221176946427745622+d7517139", "done")  # a finished entry, as the hub's copies hold
    entry(compiler, "MODULE_9a3f0c61d2b4e5f60718+d7517139", "failed", log_text="ERROR: compile failed")
    done = run_cli(["check", "--root", str(base / "host"), "--venv", empty_folder(base), "--json"])
    (base / "report.json").write_text(done.stdout)
    return base


def arguments(command: str, base: Path) -> list[str]:
    """How a user runs each command on the fixture host; every one finishes in about a second."""
    host, none = str(base / "host"), str(base / "none")
    return {
        "check": ["check", "--root", host, "--venv", none],
        "health": ["health", "--root", host, "--venv", none],
        "explain ID": ["explain", "ND-DRV-002"],
        "explain text": ["explain", "RuntimeError: No neuron device found", "--root", host],
        "bundle": ["bundle", "--root", host, "-o", str(base / "out" / "b.tar.gz"), "--force"],
        "cache status": ["cache", "status", "--root", host],
        "cache verify": ["cache", "verify", "--root", host],
        "cache prune": ["cache", "prune", "--root", host, "--failed", "--dry-run"],
        "venv create": ["venv", "create", str(base / "venv"), "--dry-run", "--release", "2.31.1"],
        "fleet summarize": ["fleet", "summarize", str(base / "report.json")],
        # the canary's CPU compile in an interpreter without torch: skipped, exit 4
        "probe canary": ["probe", "canary", "--python", sys.executable, "--cpu-backend", "--json"],
        "manifests status": ["manifests", "status"],
        "bootstrap": ["bootstrap", "--release", "2.31.1", "--venv", str(base / "v"), "--root", host],
        "upgrade": ["upgrade", "--to", "2.33.1", "--root", host],
    }[command]


def _outdir(base: Path) -> Path:
    out = base / "out"
    out.mkdir(exist_ok=True)
    return out


@pytest.mark.parametrize("command", COMMANDS)
def test_a_closed_or_full_stdout_is_exit_3_and_one_line(command: str, place: Path) -> None:
    _outdir(place)
    for redirect in (">&-", "> /dev/full"):
        line = f"{shlex.join([sys.executable, '-m', 'neurondoctor', *arguments(command, place)])} {redirect}"
        done = subprocess.run(["sh", "-c", line], capture_output=True, text=True, env=cli_env(), cwd=str(REPO),
                              timeout=120)
        assert done.returncode == 3, (redirect, done.returncode, done.stderr)
        assert "Traceback" not in done.stderr
        last = done.stderr.splitlines()[-1]
        assert last.startswith("error: ") and "standard output is closed" in last, done.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_a_reader_that_stopped_is_exit_3_and_no_complaint(command: str, place: Path) -> None:
    """`neurondoctor check | head -1` on a healthy host: the reader is gone before the rest is written. A pipe whose
    reading end is already closed makes that moment the same on every machine. rich's own answer to it is exit 1,
    which reads as "unhealthy"; the reader that stopped early wants no complaint, and the output is lost: exit 3."""
    _outdir(place)
    reading, writing = os.pipe()
    os.close(reading)
    try:
        done = subprocess.run([sys.executable, "-m", "neurondoctor", *arguments(command, place)], stdout=writing,
                              stderr=subprocess.PIPE, text=True, env=cli_env(), cwd=str(REPO), timeout=120)
    finally:
        os.close(writing)
    assert done.returncode == 3, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr and "Broken pipe" not in done.stderr, done.stderr


# Ctrl-C at the first thing the command reads of its data (a file of the fixture host, which the root reader opens by
# a name relative to its folder, of the release data, the finding pages or a report; a command it starts): the
# interpreter raises KeyboardInterrupt there exactly as it does when the terminal sends SIGINT, so the moment is the
# same on a loaded machine as on an idle one.
INTERRUPT_AT_FIRST_READ = """
import os, runpy, signal, sys
prefixes = tuple(sys.argv[1].split(os.pathsep))
fired = []
def reads_data(event, args):
    if event == "subprocess.Popen":
        return True
    if event != "open" or not isinstance(args[0], str) or args[0].endswith((".py", ".pyc")):
        return False
    return not args[0].startswith("/") or os.path.abspath(args[0]).startswith(prefixes)
def hook(event, args):
    if not fired and reads_data(event, args):
        fired.append(args[0])
        os.kill(os.getpid(), signal.SIGINT)
sys.addaudithook(hook)
sys.argv = ["neurondoctor", *sys.argv[2:]]
runpy.run_module("neurondoctor", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("command", COMMANDS)
def test_ctrl_c_is_exit_130_one_line_and_nothing_half_written(command: str, place: Path) -> None:
    out = _outdir(place)
    for leftover in out.iterdir():
        leftover.unlink()
    data = os.pathsep.join([str(place), str(REPO / "manifests"), str(REPO / "neurondoctor" / "finding_pages"),
                            str(REPO / "neurondoctor" / "release_data")])
    done = subprocess.run([sys.executable, "-c", INTERRUPT_AT_FIRST_READ, data, *arguments(command, place)],
                          capture_output=True, text=True, env=cli_env(), cwd=str(REPO), timeout=120)
    assert done.returncode == 130, (done.returncode, done.stdout[-300:], done.stderr[-1500:])
    assert "Traceback" not in done.stderr
    assert done.stderr.splitlines()[-1] == "interrupted: stopped (Ctrl-C)"
    assert done.stdout == ""
    assert list(out.iterdir()) == []  # no archive, no temporary sibling


MISTAKES = {  # command: (a path that cannot be used, the reason the line must keep)
    "check": (["check", "--root", "/etc/passwd"], "not a directory"),
    "health": (["health", "--root", "HOST", "--status-file", "/etc/passwd/status.json"], "not a directory"),
    "explain ID": (["explain", "/etc/passwd/log.txt"], "Not a directory"),
    "explain text": (["explain", "/nonexistent/dir/log.txt"], "No such file or directory"),
    "bundle": (["bundle", "-o", "/etc/passwd/x.tar.gz", "--root", "HOST"], "not a directory"),
    "cache status": (["cache", "status", "--root", "/etc/passwd"], "not a directory"),
    "cache verify": (["cache", "verify", "--root", "/nonexistent"], "no such directory"),
    "cache prune": (["cache", "prune", "--failed", "--root", "/etc/passwd"], "not a directory"),
    "venv create": (["venv", "create", "/etc/passwd/venv", "--dry-run", "--release", "2.31.1"], "not a directory"),
    "fleet summarize": (["fleet", "summarize", "/nonexistent/reports"], "no such file or directory"),
    "probe canary": (["probe", "canary", "--python", "/nonexistent/python"], "no such file"),
    "manifests status": (["manifests", "update", "--file", "/etc/passwd/n2.json"], "Not a directory"),
    "bootstrap": (["bootstrap", "--release", "2.31.1", "--venv", "/tmp/v", "--root", "/etc/passwd"],
                  "not a directory"),
    "upgrade": (["upgrade", "--to", "2.33.1", "--root", "/etc/passwd"], "not a directory"),
}


@pytest.mark.parametrize("command", COMMANDS)
def test_a_path_that_cannot_be_used_is_one_error_line_and_exit_2(command: str, place: Path) -> None:
    words, reason = MISTAKES[command]
    done = run_cli([word.replace("HOST", str(place / "host")) for word in words])
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith("error: "), done.stderr
    assert reason.lower() in done.stderr.lower(), done.stderr


def test_redaction_takes_the_secret_and_keeps_the_reason(tmp_path: Path) -> None:
    """A folder named like an assignment (`password=…`) and a URL with credentials: the secret goes, the path after
    it and the reason stay."""
    done = run_cli(["bundle", "-o", f"{tmp_path}/password=hunter2/x.tar.gz", "--root", str(tmp_path)])
    assert done.returncode == 2 and "hunter2" not in done.stderr
    assert done.stderr.strip().endswith("password=[REDACTED] does not exist"), done.stderr
    assert "/x.tar.gz" in done.stderr
    done = run_cli(["manifests", "update", "--url", "https://user:s3cr3t@127.0.0.1:9/n2.json"])
    assert done.returncode == 2 and "s3cr3t" not in done.stderr
    assert "https://[REDACTED]@127.0.0.1:9/n2.json" in done.stderr and "connection refused" in done.stderr


def _on_a_terminal(args: list[str], env: dict[str, str]) -> str:
    """The command's stdout as a terminal receives it (a pseudo-terminal)."""
    leader, follower = pty.openpty()
    try:
        process = subprocess.Popen([sys.executable, "-m", "neurondoctor", *args], stdout=follower,
                                   stderr=subprocess.DEVNULL, env=env, cwd=str(REPO))
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 1 << 16)
            except OSError:  # the other side closed: EIO on Linux
                break
            if not chunk:
                break
            chunks.append(chunk)
        process.wait(timeout=120)
    finally:
        os.close(leader)
    return b"".join(chunks).decode("utf-8", "replace")


def test_colour_follows_the_terminal_no_color_term_dumb_and_the_option(place: Path) -> None:
    args = arguments("check", place)
    env = {**cli_env(), "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    assert "\x1b[" in _on_a_terminal(args, env)
    assert "\x1b[3" not in _on_a_terminal(args, {**env, "NO_COLOR": "1"})  # no colour (bold may stay: no-color.org)
    assert "\x1b[" not in _on_a_terminal(args, {**env, "TERM": "dumb"})
    assert "\x1b[" not in _on_a_terminal([*args, "--color", "never"], env)
    assert "\x1b[3" in _on_a_terminal([*args, "--color", "always"], {**env, "NO_COLOR": "1"})
    piped = run_cli([*args, "--color", "always"], env=env)
    assert "\x1b[3" in piped.stdout and "\x1b[" not in run_cli(args, env=env).stdout


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_takes_color_and_refuses_a_wrong_word(command: str, place: Path) -> None:
    _outdir(place)
    args = arguments(command, place)
    plain = run_cli(args)
    never = run_cli([*args, "--color", "never"])
    assert never.returncode == plain.returncode != 2, never.stderr
    assert "\x1b" not in never.stdout + never.stderr
    wrong = run_cli([*args, "--color", "sometimes"])
    assert wrong.returncode == 2 and wrong.stdout == ""
    assert wrong.stderr.startswith("error: Invalid value for --color: sometimes: expected auto, always or never")


@pytest.mark.parametrize("encoding", [{"PYTHONIOENCODING": "ascii"}, {"LANG": "C", "LC_ALL": "C"}],
                         ids=["PYTHONIOENCODING=ascii", "LANG=C"])
@pytest.mark.parametrize("command", COMMANDS)
def test_where_the_output_is_not_utf8_every_command_writes_ascii(command: str, encoding: dict[str, str],
                                                                place: Path) -> None:
    _outdir(place)
    env = {key: value for key, value in cli_env().items() if not key.startswith(("LC_", "LANG", "PYTHONUTF8"))}
    utf8 = run_cli(arguments(command, place), env={**env, "LANG": "C.UTF-8"})
    done = run_cli(arguments(command, place), env={**env, **encoding})
    assert done.returncode == utf8.returncode, done.stderr
    assert "Traceback" not in done.stderr
    assert (done.stdout + done.stderr).isascii(), [ch for ch in done.stdout + done.stderr if not ch.isascii()][:5]


def test_ascii_marks_line_up(place: Path) -> None:
    """`[ok]`, `[x]` and `[-]` are of different widths: the area titles still start in one column."""
    for env in ({"PYTHONIOENCODING": "ascii"}, {"LANG": "C", "LC_ALL": "C"}):
        text = run_cli(arguments("check", place), env={**cli_env(), **env}).stdout
        areas = [line for line in text.splitlines() if re.match(r"\[(ok|x|-|!|\?|crash)\]", line)]
        assert {"[ok]", "[x]"} <= {line.split()[0] for line in areas}
        assert {len(line) - len(line[len(line.split()[0]):].lstrip()) for line in areas} == {5}, areas


def test_a_utf8_locale_keeps_the_marks(place: Path) -> None:
    """The near miss: a UTF-8 locale, or none at all, keeps `[✓]`."""
    base = {key: value for key, value in cli_env().items() if not key.startswith(("LC_", "LANG"))}
    for env in ({"LANG": "en_US.UTF-8"}, {"LC_ALL": "C.UTF-8"}, {}):
        assert "[✓] Neuron hardware" in run_cli(arguments("check", place), env={**base, **env}).stdout


def test_a_tool_that_hangs_is_named_while_waiting_and_in_the_report(tmp_path: Path) -> None:
    """A `neuron-ls` that never answers (a wedged device): on a terminal, a line says what the doctor waits for
    after a second; the report names the tool that was stopped at its deadline, in text and markdown. A tool that
    answers at once is named nowhere."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "neuron-ls").write_text("#!/bin/sh\nexec sleep 30\n")
    (bin_dir / "neuron-ls").chmod(0o755)
    env = {**cli_env(), "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
           "NEURONDOCTOR_COMMAND_TIMEOUT": "2"}
    args = ["check", "--venv", empty_folder(tmp_path)]
    leader, follower = pty.openpty()
    try:
        process = subprocess.run([sys.executable, "-m", "neurondoctor", *args], stdout=subprocess.PIPE,
                                 stderr=follower, env=env, cwd=str(REPO), timeout=120, text=True)
        os.close(follower)
        shown = os.read(leader, 1 << 16).decode()
    finally:
        os.close(leader)
    assert re.search(r"waiting for neuron-ls -j \(stopped after 2 s\)", shown), shown
    assert re.search(r"^Timed out: `\S*neuron-ls -j` did not finish within 2\.0 s and was stopped", process.stdout,
                     re.MULTILINE), process.stdout
    markdown = run_cli([*args, "--format", "markdown"], env=env).stdout
    assert "Timed out:" in markdown and "neuron-ls -j" in markdown
    document = json.loads(run_cli([*args, "--json"], env=env).stdout)
    assert [command["timed_out"] for command in document["facts"]["host"]["snapshot"]["commands"]] == [True]
    (bin_dir / "neuron-ls").write_text("#!/bin/sh\necho '[]'\n")
    quick = run_cli(args, env=env)
    assert "Timed out" not in quick.stdout and "waiting for" not in quick.stderr
