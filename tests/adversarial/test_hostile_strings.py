"""Attack class: data that forges output.

A host whose untrusted fields all hold the same hostile string: a newline followed by a forged NHC `OK:` line, an
OSC 52 sequence (writes the clipboard), a CSI (C1) control, a bidi override, DEL and non-ASCII. It sits in a
distribution's name and version, os-release, a device holder's command line, the hostname and an environment's
path. Every output format must come out with one line per nhc/npd result, no raw control character in any text
format, valid JSON that keeps the raw values, and no traceback, under UTF-8, ASCII, Latin-1 and LANG=C.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from neurondoctor.output_text import _UNSAFE, neutralize, printable
from tests.conftest import REPO, cli_env
from tests.host_fixture import Holder, HostSpec, build_host

HOSTILE = "evil\nOK: neurondoctor: forged\x1b]52;c;aGk=\x07\x9b2J\u202etxt.exe\x7f é"
# What no text output may hold: C0 controls but the line ends, DEL, C1, bidi controls, line separators.
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
ENCODINGS = {"utf-8": {"PYTHONIOENCODING": "utf-8"}, "ascii": {"PYTHONIOENCODING": "ascii"},
             "latin-1": {"PYTHONIOENCODING": "latin-1"}, "C": {"LANG": "C", "LC_ALL": "C", "PYTHONUTF8": "0",
                                                               "PYTHONCOERCECLOCALE": "0"}}
NHC_LINE = re.compile(r"^(OK|ERROR|WARNING|UNKNOWN): neurondoctor: ")


def _dist_info(site: Path, name: str, version: str, folder: str) -> None:
    info = site / folder
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")
    (info / "INSTALLER").write_text("pip\n")
    (info / "RECORD").write_text("")


@pytest.fixture(scope="module")
def hostile_host(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(root, venv): a trn1 whose fields hold HOSTILE, and a real venv in a folder whose name holds it too."""
    base = tmp_path_factory.mktemp("hostile")
    root = build_host(base / "root", HostSpec(holders=[Holder(4121, HOSTILE[:15], f"python {HOSTILE}", (0,))]))
    (root / "etc/os-release").write_text(f'PRETTY_NAME="{HOSTILE.replace(chr(10), " ")}"\nNAME="Ubuntu"\n'
                                         'ID=ubuntu\nVERSION_ID="19.04"\nVERSION_CODENAME=disco\n')
    (root / "etc/hostname").write_text("node-\x1b[2Jx\u202e|y|\n")
    built = base / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(built)], check=True, timeout=120)
    venv = built.rename(base / f"venv-{HOSTILE.replace('/', '')}")  # venv refuses such a name; a move does not
    site = next(venv.glob("lib/python*/site-packages"))
    # two records of one (hostile) distribution: ND-SHADOW-002 names it and its versions in a title and a fix
    _dist_info(site, "evil-pkg", "1.0", "evil_pkg-1.0.dist-info")
    _dist_info(site, "evil-pkg", HOSTILE.replace("\n", " "), "evil_pkg-2.0.dist-info")
    # a Neuron package whose version is hostile: an unknown version, named in the report
    _dist_info(site, "neuronx-cc", f"2.21.{HOSTILE.replace(chr(10), ' ')}", "neuronx_cc-2.21.0.dist-info")
    return root, venv


def _run(args: list[str], encoding: str) -> subprocess.CompletedProcess[bytes]:
    env = cli_env(ENCODINGS[encoding])
    if encoding == "C":
        env.pop("PYTHONIOENCODING", None)
    return subprocess.run([sys.executable, "-m", "neurondoctor", *args], capture_output=True, env=env, timeout=300,
                          cwd=str(REPO))


def _text(output: bytes) -> str:
    return output.decode("utf-8", "surrogateescape")


def _no_raw_controls(output: bytes, what: str) -> None:
    text = _text(output)
    found = RAW_CONTROL.findall(text)
    assert found == [], f"{what}: raw controls {found!r} in {text[:2000]!r}"


@pytest.mark.parametrize("encoding", list(ENCODINGS))
def test_every_check_format_neutralises_hostile_fields(hostile_host: tuple[Path, Path], encoding: str) -> None:
    root, venv = hostile_host
    target = ["--root", str(root), "--venv", str(venv)]
    for output_format in ("text", "markdown", "nhc", "npd", "json"):
        verbose = ["-v"] if output_format == "text" else []  # -v prints the evidence, raw values included
        done = _run(["check", *target, "--format", output_format, *verbose], encoding)
        stderr = _text(done.stderr)
        assert "Traceback" not in stderr and done.returncode in (0, 1, 3), (output_format, encoding, stderr)
        if output_format == "json":
            document = json.loads(done.stdout)
            # the raw value is kept (under LANG=C as the bytes' surrogate escapes, which encode back to them)
            assert os.fsencode(venv) in [path.encode("utf-8", "surrogateescape")
                                         for path in document["release"]["environments"]]
            # the hostile records are no valid metadata: judged by nothing, named by no fix, kept raw in evidence
            records = [record for finding in document["findings"] if finding["id"] == "ND-VENV-004"
                       for record in finding["evidence"]["records"]]
            assert {record["name"] for record in records} == {"evil-pkg", "neuronx-cc"}
            assert all(HOSTILE.replace("\n", " ") in record["version"] for record in records)
            assert not any("evil-pkg" in line or "neuronx-cc==" in line  # no command ever carries them
                           for finding in document["findings"] for line in finding["fix"])
            continue
        _no_raw_controls(done.stdout, f"check --format {output_format} ({encoding})")
        _no_raw_controls(done.stderr, f"check stderr ({encoding})")
        lines = _text(done.stdout).splitlines()
        if output_format == "nhc":
            assert lines and all(NHC_LINE.match(line) for line in lines), lines
            assert not any(line.startswith("OK: neurondoctor: forged") for line in lines)
        if output_format == "npd":
            assert len(lines) == 1 and len(done.stdout) <= 81, lines
        if encoding in ("ascii", "C"):
            assert max(_text(done.stdout).encode("utf-8", "surrogateescape"), default=0) < 0x80
            if output_format == "text":  # the marks in their ASCII forms, not lost to markup or escapes, padded to
                # the widest box shown so the titles line up
                assert "[ok] Neuron hardware" in _text(done.stdout) and "[!]  Devices & cores" in _text(done.stdout)


@pytest.mark.parametrize("encoding", ["utf-8", "ascii", "latin-1"])
def test_health_and_fleet_formats_neutralise_hostile_fields(hostile_host: tuple[Path, Path], tmp_path: Path,
                                                            encoding: str) -> None:
    root, venv = hostile_host
    target = ["--root", str(root), "--venv", str(venv), "--status-file", str(tmp_path / "health.json")]
    for output_format in ("text", "nhc", "npd", "json"):
        done = _run(["health", *target, "--format", output_format], encoding)
        if output_format == "json":
            assert json.loads(done.stdout)["health"]["state"] in ("degraded", "unhealthy"), _text(done.stderr)
            continue
        assert "Traceback" not in _text(done.stderr), _text(done.stderr)
        _no_raw_controls(done.stdout, f"health --format {output_format}")
        _no_raw_controls(done.stderr, "health stderr")
    metrics = tmp_path / "neurondoctor.prom"
    done = _run(["health", *target, "--format", "prometheus", "--output", str(metrics)], encoding)
    assert "Traceback" not in _text(done.stderr) and metrics.exists(), _text(done.stderr)
    _no_raw_controls(metrics.read_bytes(), "prometheus textfile")
    from prometheus_client.parser import text_string_to_metric_families

    assert {family.name for family in text_string_to_metric_families(metrics.read_text())} >= {
        "neurondoctor_health_state", "neurondoctor_release_info"}
    report = tmp_path / "report.json"
    report.write_bytes(_run(["check", "--root", str(root), "--venv", str(venv), "--json"], "utf-8").stdout)
    for fleet_format in ("text", "markdown"):
        args = ["fleet", "summarize", str(report)] + (["--format", "markdown"] if fleet_format == "markdown" else [])
        done = _run(args, encoding)
        assert "Traceback" not in _text(done.stderr), _text(done.stderr)
        _no_raw_controls(done.stdout, f"fleet summarize {fleet_format}")
        if fleet_format == "markdown":
            table = [line for line in _text(done.stdout).splitlines() if line.startswith("|")]
            assert all(len(re.findall(r"(?<!\\)\|", line)) == 3 for line in table), table  # no forged cell
    assert json.loads(_run(["fleet", "summarize", str(report), "--json"], encoding).stdout)["nodes"]


def test_neutralize_shows_every_control_escaped_and_keeps_text() -> None:
    assert (neutralize("a\nb\tc\x1b[2J\x9b\u202e\u2028\x7f\udcff é")
            == "a\\nb\\tc\\x1b[2J\\x9b\\u202e\\u2028\\x7f\\xff é")
    assert printable("[✓] a · b … 2 × 3", ascii_only=True) == "[ok] a - b ... 2 x 3"


def test_every_character_neutralize_escapes_is_one_str_isprintable_refuses() -> None:
    """`neutralize` returns text `str.isprintable` accepts untouched: sound only while the escaped set stays
    inside the non-printable characters, over the whole Unicode range."""
    unsafe = re.compile(_UNSAFE)
    escaped = [point for point in range(sys.maxunicode + 1) if unsafe.fullmatch(chr(point))]
    assert len(escaped) > 160
    assert not [hex(point) for point in escaped if chr(point).isprintable()]
    assert neutralize("plain text ✓ · 2.9.0") == "plain text ✓ · 2.9.0"
    assert neutralize("a\u202eb\x1bc") == "a\\u202eb\\x1bc"


def test_undecodable_bytes_in_a_path_reach_every_output_escaped(hostile_host: tuple[Path, Path],
                                                              tmp_path: Path) -> None:
    """A folder name that is not UTF-8 (`\\xff`) becomes a surrogate escape in Python: written as UTF-8 it raised
    UnicodeEncodeError in `health --format prometheus --output F`; it is shown as `\\xff` instead."""
    root, _ = hostile_host
    venv = Path(os.fsdecode(os.fsencode(str(tmp_path)) + b"/venv-\xff\xfe"))
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "plain")], check=True,
                   timeout=120)
    (tmp_path / "plain").rename(venv)
    metrics = tmp_path / "neurondoctor.prom"
    done = _run(["health", "--root", str(root), "--venv", str(venv), "--format", "prometheus", "--output",
                 str(metrics), "--status-file", str(tmp_path / "health.json")], "utf-8")
    assert "Traceback" not in _text(done.stderr) and metrics.exists(), _text(done.stderr)
    assert 'path="' in metrics.read_text() and "\\\\xff\\\\xfe" in metrics.read_text()
    for output_format in ("text", "markdown", "nhc", "json"):
        done = _run(["check", "--root", str(root), "--venv", str(venv), "--format", output_format], "utf-8")
        assert "Traceback" not in _text(done.stderr), (output_format, _text(done.stderr))
        if output_format != "json":
            _no_raw_controls(done.stdout, output_format)
            assert b"\xff" not in done.stdout


def test_a_hostile_neuron_ls_table_is_data() -> None:
    """neuron-ls prints other people's commands and whatever a broken tool writes: the table parser takes no digit
    that `int` refuses, expands no huge core range, and stays bounded on rows and columns it was not built for."""
    from neurondoctor.host.neuron_ls import parse_neuron_ls_table

    border = "+--------+--------+----------+-------+-------------+"
    header = ["| NEURON | NEURON |  NEURON  |  PID  |   COMMAND   |",
              "| DEVICE | CORES  | CORE IDS |       |             |"]
    rows = ["| ²      | 4      | 0-3      | 1     | a           |",  # a superscript digit: no device
            "| 0      | ³      | 0-99999999999999 | 2 | b |",  # not aligned, a range it must not expand
            "| 1      | 4      | 0-1,0-1023 | 12345 | $(reboot) |",  # more ids than a device has; a command is data
            "| 2      | 8      | 0-7      | 99999999999 | x |"]  # a PID too long to be one
    text = "\n".join([border, *header, border, *rows, border, "|" * 100000, "+" + "-+" * 10000])
    table = parse_neuron_ls_table(text)
    assert [(device.index, device.core_count, device.core_ids, device.processes) for device in table.devices] == [
        (0, None, [], [{"pid": 2, "command": "b", "neuron_runtime_version": ""}]),  # read by its bars, values refused
        (1, 4, [], [{"pid": 12345, "command": "$(reboot)", "neuron_runtime_version": ""}]), (2, 8, list(range(8)), [])]
