"""Attack class: one field, many lines. A compile-cache entry is a folder anyone may name under /var/tmp, a log line
is whatever the job printed, a probe's op names come from the target environment: a newline in one of them, with a
`FAKE: ok` or a `Ways out:` after it, must never stand as a line of its own in what neurondoctor prints, nor an
escape reach the terminal. Each value is neutralised as one field before its line is assembled
(output_text.field_text); JSON keeps the raw value."""

from __future__ import annotations

import json
from pathlib import Path

from neurondoctor.report.health import Health
from neurondoctor.report.probe_report import new_probe_report
from neurondoctor.report.probe_text import render_inventory_text
from neurondoctor.rules.probes.ops import classify
from tests.cache_fixture import entry
from tests.conftest import run_cli

COMPILER = "neuronxcc-2.15.141.0+d3cfc8ca"
FAILED = "MODULE_x\nFAKE: ok\x1b[2J"
LOCKED = "MODULE_y\nFAKE: lock\x1b[2J"
BROKEN = "MODULE_z\nFAKE: whole\x1b[2J"


def _lines(output: str) -> list[str]:
    """The lines a reader of the output sees: split where a newline is, the only place a line can end."""
    assert output.endswith("\n")
    return output[:-1].split("\n")


def _escaped(name: str) -> str:
    return name.replace("\n", "\\n").replace("\x1b", "\\x1b")


def _assert_one_line_each(output: str, expected_lines: int, *names: str) -> None:
    lines = _lines(output)
    assert len(lines) == expected_lines, output
    assert not any(line.startswith("FAKE") for line in lines), output
    assert "\x1b" not in output and "\r" not in output
    for name in names:
        assert _escaped(name) in output, output


def _hostile_cache(tmp_path: Path) -> Path:
    cache = tmp_path / "cache"
    entry(cache / COMPILER, FAILED, "failed")
    entry(cache / COMPILER, LOCKED, "incomplete", lock=True)
    broken = entry(cache / COMPILER, BROKEN, "done")
    (broken / "model.neff").write_bytes(b"not a NEFF" * 200)
    return cache


def test_a_cache_entry_name_forges_no_line_in_cache_status_prune_or_verify(tmp_path: Path) -> None:
    cache = _hostile_cache(tmp_path)

    status = run_cli(["cache", "status", str(cache)])
    assert status.returncode == 0, status.stderr
    _assert_one_line_each(status.stdout, 4, FAILED, LOCKED)  # the cache, its compiler, the failed entry, the lock
    document = json.loads(run_cli(["cache", "status", str(cache), "--json"]).stdout)
    compiler = document["caches"][0]["compilers"][0]
    assert compiler["failed_entries"] == [FAILED]
    assert [lock["entry"] for lock in document["caches"][0]["locks"]] == [f"{COMPILER}/{LOCKED}"]

    prune = run_cli(["cache", "prune", str(cache), "--failed", "--dry-run"])
    assert prune.returncode == 0, prune.stderr
    _assert_one_line_each(prune.stdout, 3, FAILED)  # the cache, the entry, the dry-run line
    moves = json.loads(run_cli(["cache", "prune", str(cache), "--failed", "--dry-run", "--json"]).stdout)
    assert [move["path"] for move in moves["prune"]["moves"]] == [f"{COMPILER}/{FAILED}"]

    verify = run_cli(["cache", "verify", str(cache)])
    assert verify.returncode == 1, verify.stderr
    _assert_one_line_each(verify.stdout, 3, BROKEN)  # the count, the entry, the way out
    problems = json.loads(run_cli(["cache", "verify", str(cache), "--json"]).stdout)["verify"]["problems"]
    assert [problem["entry"] for problem in problems] == [f"{COMPILER}/{BROKEN}"]
    assert (cache / COMPILER / BROKEN).is_dir()  # verify moves nothing


def _explanation_lines(document: dict[str, object]) -> int:
    """What broke, the operator, Seen in, In short, Ways out: and one per way, Source, Also in it: and one per other
    failure: the lines the text has (with --no-host: no host answer under them)."""
    ways, also = document["ways_out"], document["also"]
    assert isinstance(ways, list) and isinstance(also, list)
    return (3 + bool(document["op"]) + bool(document["detail"]) + (1 + len(ways) if ways else 0)
            + (1 + len(also) if also else 0))


def test_a_log_field_forges_no_way_out_in_explain(tmp_path: Path) -> None:
    """The runtime's out-of-memory line with its usage field running on into `Ways out:` and a command, and (on
    one line) with an escape and a carriage return in it: the explanation has exactly its own lines, the field's
    controls are shown escaped, and the JSON keeps them raw."""
    log = tmp_path / "runtime.log"
    log.write_text("TDRV:log_dev_mem  Failed to allocate 4.000GB (alignment: none, usage: tensors\n"
                   "Ways out:\n  rm -rf /\n) on ND 0:NC 4\n"
                   "TDRV:log_dev_mem  Failed to allocate 2.000GB (alignment: none, usage: tensors\x1b[2J\rWays out: "
                   "rm -rf /) on ND 0:NC 5\n")
    document = json.loads(run_cli(["explain", str(log), "--json", "--no-host"]).stdout)
    text = run_cli(["explain", str(log), "--no-host"])
    assert text.returncode == 0, text.stderr
    lines = _lines(text.stdout)
    assert len(lines) == _explanation_lines(document), text.stdout
    assert lines.count("Ways out:") == 1 and not any(line.lstrip().startswith("rm -rf") for line in lines)
    assert "tensors\\x1b[2J\\rWays out: rm -rf /" in text.stdout
    assert "\x1b" not in text.stdout and "\r" not in text.stdout
    assert document["detail"].startswith("2.000GB more for tensors\x1b[2J\rWays out: rm -rf / on ND 0:NC 5")


def test_an_error_line_stays_one_line_whatever_the_path_it_names(tmp_path: Path) -> None:
    absent = tmp_path / "absent\nerror: forged second line"
    result = run_cli(["explain", str(absent)])
    assert result.returncode == 2
    assert _lines(result.stderr) == [f"error: {_escaped(str(absent))}: No such file or directory"]


def test_a_probe_op_name_forges_no_line_in_the_inventory() -> None:
    """The op names and the model's name come from the probe's run in the target environment."""
    op = "aten::nonzero\nFAKE: every op runs on the device"
    ops = [{"op": op, "count": 1, "phases": {"forward": 1}}]
    inventory = classify(ops, {op: {"status": "cpu-fallback", "rewrite": "use a mask"}}, "model.py:make")
    report = new_probe_report("ops", "/opt/venv/bin/python", inventory.findings, Health("degraded", ["ND-OP-001"]),
                              1.0, {"ops": [{**ops[0], "status": "cpu-fallback"}], "model": "m\nFAKE: model",
                                    "torch": "2.8.0", "unknown": ["aten::x\nFAKE: unknown"]})
    text = render_inventory_text(report)
    assert not any(line.startswith("FAKE") for line in _lines(text)), text
    assert _escaped(op) in text and "m\\nFAKE: model" in text
