"""One command line for every command: the same help options and layout, one error line and exit 2 for a mistake
on the command line, `--version`/`-V`, shell completion, Ctrl-C as exit 130, all run as a user runs them."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from neurondoctor import __version__
from neurondoctor.cli.app import COMMAND_MODULES
from tests.conftest import REPO, cli_env, run_cli

# Every command a user can name, groups and their commands alike.
COMMANDS = [["check"], ["health"], ["explain"], ["bundle"], ["bootstrap"], ["upgrade"],
            ["cache"], ["cache", "status"], ["cache", "verify"], ["cache", "prune"],
            ["venv"], ["venv", "create"], ["probe"], ["probe", "ops"], ["probe", "shapes"], ["probe", "canary"],
            ["fleet"], ["fleet", "summarize"], ["fleet", "check"],
            ["manifests"], ["manifests", "list"], ["manifests", "show"], ["manifests", "status"],
            ["manifests", "update"]]


def test_the_list_covers_every_command() -> None:
    assert {words[0] for words in COMMANDS} == set(COMMAND_MODULES)


@pytest.mark.parametrize("words", COMMANDS, ids=" ".join)
def test_every_command_takes_h_and_help_with_one_layout(words: list[str]) -> None:
    short, long = run_cli([*words, "-h"]), run_cli([*words, "--help"])
    assert short.returncode == long.returncode == 0, short.stderr
    assert short.stdout == long.stdout and short.stderr == long.stderr == ""
    assert short.stdout.startswith(f"Usage: neurondoctor {' '.join(words)} ")
    assert "\nOptions:\n" in short.stdout and "-h, --help" in short.stdout
    assert "╭" not in short.stdout  # click's plain layout everywhere, never rich panels


@pytest.mark.parametrize("words", COMMANDS, ids=" ".join)
def test_an_unknown_option_is_one_error_line_and_exit_2(words: list[str]) -> None:
    done = run_cli([*words, "--no-such-option"])
    assert done.returncode == 2 and done.stdout == "", done.stdout
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: No such option: --no-such-option"), done.stderr
    assert lines[0].endswith(f"(see `neurondoctor {' '.join(words)} -h`)")


@pytest.mark.parametrize(("arguments", "message"), [
    (["venv", "create"], "error: Missing argument 'DIR'."),
    (["bootstrap", "--venv", "/tmp/x"], "error: Missing option '--release'."),
    (["health", "--deadline", "soon"], "error: Invalid value for '--deadline': 'soon' is not a valid float."),
    (["check", "--format", "yaml"], "error: --format yaml: expected text, json, markdown, nhc or npd"),
    (["check", "--json", "--format", "nhc"], "error: --json and --format nhc: give one of them"),
    (["chek"], "error: No such command 'chek'. Did you mean 'check'"),
    (["cache", "purge"], "error: No such command 'purge'."),
])
def test_mistakes_on_the_command_line(arguments: list[str], message: str) -> None:
    done = run_cli(arguments)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.splitlines()) == 1 and done.stderr.startswith(message), done.stderr


@pytest.mark.parametrize("words", [[], ["cache"], ["venv"], ["probe"], ["fleet"], ["manifests"]], ids=" ".join)
def test_a_group_named_alone_shows_its_help_and_exit_2(words: list[str]) -> None:
    done = run_cli(words)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(f"Usage: neurondoctor {' '.join(words)}".rstrip() + " [OPTIONS] COMMAND")
    assert "error:" not in done.stderr


@pytest.mark.parametrize("flag", ["--version", "-V"])
def test_the_version(flag: str) -> None:
    done = run_cli([flag])
    assert (done.returncode, done.stdout, done.stderr) == (0, f"neurondoctor {__version__}\n", "")


def test_shell_completion_is_offered_and_completes_command_names() -> None:
    script = run_cli(["--show-completion", "bash"])
    assert script.returncode == 0 and "_NEURONDOCTOR_COMPLETE" in script.stdout, script.stderr
    env = {**cli_env(), "_NEURONDOCTOR_COMPLETE": "complete_bash", "COMP_WORDS": "neurondoctor ch", "COMP_CWORD": "1"}
    completed = subprocess.run([sys.executable, "-m", "neurondoctor"], capture_output=True, text=True, env=env,
                               cwd=str(REPO), timeout=60)
    assert "check" in completed.stdout.split() and "health" not in completed.stdout.split(), completed
    env.update(COMP_WORDS="neurondoctor cache pr", COMP_CWORD="2")
    completed = subprocess.run([sys.executable, "-m", "neurondoctor"], capture_output=True, text=True, env=env,
                               cwd=str(REPO), timeout=60)
    assert completed.stdout.split() == ["prune"], completed
    assert "--install-completion" in run_cli(["-h"]).stdout


def test_ctrl_c_during_check_is_one_line_and_exit_130(tmp_path: Path) -> None:
    """SIGINT while `check` waits on a tool (here a neuron-ls that never answers): exit 130 with one line, no
    traceback, no half-written report, and nothing it started left running."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    started = tmp_path / "started"
    hang = bin_dir / "neuron-ls"
    hang.write_text(f"#!/bin/sh\ntouch {started}\nexec sleep 613\n")
    hang.chmod(0o755)
    env = {**cli_env(), "PATH": f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    process = subprocess.Popen([sys.executable, "-m", "neurondoctor", "check", "--root", "/", "--json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=str(REPO))
    try:
        deadline = time.monotonic() + 60
        while not started.exists() and time.monotonic() < deadline and process.poll() is None:
            time.sleep(0.05)
        assert started.exists(), "check never ran neuron-ls"
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    assert out == "" and "Traceback" not in err
    assert err.splitlines()[-1] == "interrupted: stopped (Ctrl-C)", err
    time.sleep(0.5)
    leftovers = subprocess.run(["pgrep", "-f", "sleep 613"], capture_output=True, text=True).stdout.split()
    for pid in leftovers:
        os.kill(int(pid), signal.SIGKILL)
    assert leftovers == []


def test_a_closed_stdout_is_exit_3_in_every_format(tmp_path: Path) -> None:
    """`check … >&-` and `> /dev/full`: one line on stderr, exit 3, no traceback (the verdict could not be told)."""
    for redirect in (">&-", "> /dev/full"):
        for output_format in ("text", "json"):
            command = f"{sys.executable} -m neurondoctor check --root {tmp_path} --format {output_format} {redirect}"
            done = subprocess.run(["sh", "-c", command], capture_output=True, text=True, env=cli_env(),
                                  cwd=str(REPO), timeout=120)
            assert done.returncode == 3, (redirect, output_format, done.stderr)
            assert "Traceback" not in done.stderr and "standard output is closed" in done.stderr, done.stderr
