"""Commands keep their word: `--json` and `--format json` are one choice on every command that prints
a document, a format a command does not know is a usage error, a path that leads nowhere is one too, and `explain`
at a terminal with nothing piped in says how it is used instead of waiting."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, cli_env, run_cli
from tests.host_fixture import HostSpec, build_host


def _same_document(args: list[str], ignore: tuple[str, ...] = ()) -> dict[str, object]:
    """`ARGS --json` and `ARGS --format json` print the same document, with the same exit code."""
    by_flag, by_word = run_cli([*args, "--json"]), run_cli([*args, "--format", "json"])
    assert by_flag.returncode == by_word.returncode, (by_flag.stderr, by_word.stderr)
    first, second = json.loads(by_flag.stdout), json.loads(by_word.stdout)
    for key in ignore:
        first.pop(key, None)
        second.pop(key, None)
    assert first == second
    return first


def test_explain_and_manifests_status_take_either_spelling() -> None:
    assert _same_document(["explain", "ND-REQ-003"])["severities"] == ["error", "warning"]
    assert _same_document(["manifests", "status"])["schema"] == "neurondoctor.manifests-status/1"


def test_fleet_summarize_takes_either_spelling(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text("{")
    document = _same_document(["fleet", "summarize", str(tmp_path)])
    assert document["unreadable"] == [str(tmp_path / "broken.json")]
    assert "not JSON" in document["unreadable_reasons"][str(tmp_path / "broken.json")]


def test_bootstrap_and_a_probe_take_either_spelling(tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec(release=None, package_versions={
        "aws-neuronx-dkms": None, "aws-neuronx-runtime-lib": None, "aws-neuronx-collectives": None,
        "aws-neuronx-tools": None}))
    plan = _same_document(["bootstrap", "--release", "2.33.0", "--venv", "/opt/v", "--root", str(root)],
                          ignore=("generated_at",))
    assert plan["release"] == "2.33.0"
    # A probe whose interpreter has no torch prints its one document all the same, its verdict unknown.
    probe = _same_document(["probe", "ops", "builtin:mlp", "--python", sys.executable], ignore=("generated_at",))
    assert probe["health"]["state"] == "unknown"  # type: ignore[index]


def test_cache_status_takes_either_spelling(tmp_path: Path) -> None:
    from tests.cache_fixture import entry

    entry(tmp_path / "cache" / "neuronxcc-2.15.141.0+d3cfc8ca", "MODULE_b41d4f868a9e38641a9e+39f12043", "done")
    document = _same_document(["cache", "status", str(tmp_path / "cache")])
    assert document["schema"] == "neurondoctor.cache/1" and document["caches"][0]["counted"] == 1  # type: ignore[index]
    pruned = _same_document(["cache", "prune", str(tmp_path / "cache"), "--failed", "--dry-run"])
    assert pruned["prune"]["moves"] == []  # type: ignore[index]


@pytest.mark.parametrize("args", [["explain", "ND-FW-001"], ["manifests", "status"], ["fleet", "summarize", "."],
                                  ["cache", "status"], ["cache", "prune", "--failed", "--dry-run"],
                                  ["bootstrap", "--release", "2.33.0", "--venv", "/opt/v"],
                                  ["probe", "canary", "--cpu-backend"]])
def test_a_format_a_command_does_not_know_is_a_usage_error(args: list[str]) -> None:
    result = run_cli([*args, "--format", "yaml"])
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.strip().splitlines() == [result.stderr.strip()]  # one line
    assert "--format yaml" in result.stderr


def test_fleet_summarize_of_a_path_that_does_not_exist(tmp_path: Path) -> None:
    result = run_cli(["fleet", "summarize", str(tmp_path / "no-such-reports")])
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr.strip() == f"error: {tmp_path / 'no-such-reports'}: no such file or directory"


def test_explain_at_a_terminal_with_nothing_piped_in() -> None:
    """Its stdin a terminal: the usage, exit 2, at once (it used to wait silently for a log)."""
    leader, follower = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "neurondoctor", "explain"], stdin=follower,
                              capture_output=True, text=True, env=cli_env(), cwd=str(REPO), timeout=60)
    finally:
        os.close(follower)
        os.close(leader)
    assert done.returncode == 2 and done.stdout == ""
    assert "usage: neurondoctor explain [LOGFILE|-|FINDING-ID]" in done.stderr
    piped = subprocess.run([sys.executable, "-m", "neurondoctor", "explain"], input="", capture_output=True,
                           text=True, env=cli_env(), cwd=str(REPO), timeout=60)
    assert piped.returncode == 3  # near miss: an empty pipe is read, and is not recognised
