"""Attack class: numbers that are not ASCII numbers.

`str.isdigit()` is True for `²`, which `int()` refuses (a crashed check); `int()` reads `٣` (Arabic-Indic) and `１`
(fullwidth) as 3 and 1, `+1` and ` 1` as 1, and refuses a digit string past 4,300 characters. A count the doctor
reads from an environment variable, a sysfs file, /proc or a log goes through one strict reader
(neurondoctor/strict_numbers.py): each of these values is a clear finding or a "not a number" reason, never a crashed
check and never a guess."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import check_json, cli_env, findings_by_id, run_cli
from tests.host_fixture import HostSpec, build_host

NOT_NUMBERS = ["²", "٣", "１", "+1", " 1", "99999999999999999999"]
CORE_VARIABLES = {"NEURON_RT_NUM_CORES": "ND-ENV-002", "NEURON_RT_VISIBLE_CORES": "ND-ENV-001",
                  "NEURON_LOGICAL_NC_CONFIG": "ND-ENV-003"}


@pytest.fixture(scope="module")
def trn1(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_host(tmp_path_factory.mktemp("numbers") / "root", HostSpec(instance_type="trn1.32xlarge"))


def _crashed(document: dict[str, Any]) -> list[tuple[str, str]]:
    return [(check["id"], check.get("error")) for check in document["checks"] if check["status"] == "crashed"]


@pytest.mark.parametrize("value", NOT_NUMBERS, ids=ascii)
def test_core_variables_that_are_not_numbers_are_findings(trn1: Path, value: str) -> None:
    code, document, stderr = check_json(["--root", str(trn1)], env=cli_env(dict.fromkeys(CORE_VARIABLES, value)))
    assert _crashed(document) == [] and "Traceback" not in stderr, (_crashed(document), stderr)
    found = findings_by_id(document)
    for variable, finding_id in CORE_VARIABLES.items():
        named = [finding for finding in found.get(finding_id, []) if finding["evidence"].get("variable") == variable]
        # blanks around a right count are a warning whose fix writes it without them (env_vars._spaced)
        spaced = value == " 1" and variable != "NEURON_LOGICAL_NC_CONFIG"
        assert named and named[0]["severity"] == ("warning" if spaced else "error"), (variable, found.keys())
        assert repr(value) in named[0]["title"], named[0]["title"]  # shown as the value it is, never as a number
    assert "not a number" in found["ND-ENV-002"][0]["detail"] or value in ("99999999999999999999", " 1")
    assert code == 1


@pytest.mark.parametrize("value", NOT_NUMBERS, ids=ascii)
def test_sysfs_core_counts_that_are_not_numbers_are_could_not_read(tmp_path: Path, value: str) -> None:
    root = build_host(tmp_path / "root", HostSpec(instance_type="trn1.32xlarge"))
    counts = sorted(root.glob("sys/devices/virtual/neuron_device/neuron*/core_count"))
    assert counts
    for count in counts:
        count.write_text(value)
    code, document, stderr = check_json(["--root", str(root)])
    assert _crashed(document) == [] and "Traceback" not in stderr
    devices = next(check for check in document["checks"] if check["id"] == "devices")
    assert devices["status"] == "unknown" and ("not a number" in devices["error"] or "above 1024" in devices["error"])
    assert repr(value) in devices["error"]
    assert document["health"]["state"] == "unknown" and code == 3  # never ok, never a guessed count


def test_proc_entries_that_are_not_process_ids_are_no_processes(tmp_path: Path) -> None:
    """A `--root`'s /proc with `²` and `٣` folders holding a device open, and a descriptor link to a device with a
    4,000-digit number: none is a process or a device, and the processes collector does not fail."""
    root = build_host(tmp_path / "root", HostSpec(instance_type="trn1.32xlarge"))
    for name in ("²", "٣", "１"):
        fd = root / "proc" / name / "fd"
        fd.mkdir(parents=True)
        (fd / "3").symlink_to("/dev/neuron0")
        (root / "proc" / name / "comm").write_text("python\n")
    held = root / "proc/4242/fd"
    held.mkdir(parents=True)
    (held / "3").symlink_to("/dev/neuron" + "9" * 4000)
    (held / "٣").symlink_to("/dev/neuron0")
    (root / "proc/4242/comm").write_text("python\n")
    code, document, stderr = check_json(["--root", str(root)])
    assert _crashed(document) == [] and "Traceback" not in stderr
    assert document["facts"]["host"]["collector_failures"] == [], document["facts"]["host"]["collector_failures"]
    assert "ND-DEV-003" not in findings_by_id(document) and code == 0


def test_a_log_number_past_python_s_digit_limit_is_explained(tmp_path: Path) -> None:
    log = tmp_path / "run.log"
    log.write_text(f"Failed to allocate DEVICE memory ({'9' * 5000} bytes)\n")
    done = run_cli(["explain", str(log)])
    assert "Traceback" not in done.stderr and done.returncode in (0, 3), done.stderr


def test_a_command_timeout_in_another_script_is_ignored_with_a_warning(trn1: Path) -> None:
    _, document, stderr = check_json(["--root", str(trn1)], env=cli_env({"NEURONDOCTOR_COMMAND_TIMEOUT": "٣"}))
    assert "NEURONDOCTOR_COMMAND_TIMEOUT='٣' is not a number of seconds" in stderr, stderr
    assert _crashed(document) == []
