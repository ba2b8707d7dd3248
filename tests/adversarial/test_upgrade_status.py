"""Attack class: the status file `upgrade --rollback` builds root's commands from.

The file is root's (/var/lib/neurondoctor/upgrade.json), but a rollback must not become a way to run what someone
wrote into it: package names that are options or shell, versions that carry words, a Slurm node name with a
second command, environment pins of packages the upgrade never moves. Each is refused before any command runs
(exit 3: the rollback cannot judge what to put back), with one line saying which field failed; a file that is not
an upgrade's status file (garbage, another schema, a FIFO) is "nothing to roll back" (exit 2).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from neurondoctor.actions.health.owned_files import write_status_file
from neurondoctor.actions.upgrade.plan import valid_start
from tests.conftest import cli_env, run_cli
from tests.host_fixture import HostSpec, build_host
from tests.host_simulator import HostSimulator

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="--rollback runs as root only (CI runs the tests as root)")
GOOD = {"release": "2.31.1", "manager": "apt", "packages": {"aws-neuronx-dkms": "2.29.0.0",
                                                            "aws-neuronx-tools": "2.31.15.0"},
        "held": ["aws-neuronx-dkms"], "driver_loaded": "2.29.0.0", "slurm_node": "trn1-node-3",
        "environments": [{"path": "/opt/venv", "python": "3.11", "release": "2.31.1", "stack": "xla",
                          "pins": {"torch-neuronx": "2.9.0.2.15.32035"}, "guarded": False}]}
TAMPERED = {
    "an option as a package name": ({"packages": {"--allow-unauthenticated": "2.29.0.0"}}, "from.packages"),
    "shell in a version": ({"packages": {"aws-neuronx-dkms": "2.29.0.0*' ; reboot #"}}, "from.packages"),
    "an apt option as a version": ({"packages": {"aws-neuronx-dkms": "-o APT::Get::AllowUnauthenticated=1"}},
                                   "from.packages"),
    "a second command after the node": ({"slurm_node": "trn1-node-3 State=DOWN; reboot"}, "from.slurm_node"),
    "a hold of a package not recorded": ({"held": ["openssh-server"]}, "from.held"),
    "another package manager": ({"manager": "sh"}, "from.manager"),
    "a pin of a package the upgrade never moves": (
        {"environments": [{"path": "/opt/venv", "pins": {"--index-url=https://evil.example": "1"}}]},
        "from.environments"),
    "a NUL in an environment's path": ({"environments": [{"path": "/opt/venv\0/x", "pins": {}}]},
                                       "from.environments"),
}


def _tampered(change: dict[str, Any]) -> dict[str, Any]:
    return {**GOOD, **change}


def test_the_recorded_start_is_accepted_when_every_word_checks() -> None:
    start = valid_start(GOOD)
    assert start.packages == GOOD["packages"] and start.slurm_node == "trn1-node-3"


@pytest.mark.parametrize("case", list(TAMPERED))
def test_each_tampered_field_is_refused(case: str) -> None:
    change, field = TAMPERED[case]
    with pytest.raises(ValueError, match=f"`{field}"):
        valid_start(_tampered(change))


@needs_root
@pytest.mark.parametrize("case", ["shell in a version", "a second command after the node"])
def test_a_rollback_from_a_tampered_file_runs_nothing(tmp_path: Path, case: str) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.2xlarge", release="2.33.0"))
    simulator = HostSimulator(root, tmp_path / "sim")
    status = tmp_path / "upgrade.json"
    write_status_file(status, "ok", [], "2.33.0", [{"name": "driver", "status": "ok", "command": "x",
                                                    "exit_code": 0, "duration_s": 0.1}],
                      command="upgrade", rolled_back=False, **{"from": _tampered(TAMPERED[case][0])})
    result = run_cli(["upgrade", "--to", "2.33.0", "--root", str(root), "--rollback", "--status-file", str(status)],
                     env=simulator.env(cli_env()))
    assert result.returncode == 3 and result.stdout == ""
    assert "cannot be trusted to build commands from" in result.stderr and len(result.stderr.splitlines()) == 1
    assert [argv for argv in simulator.commands() if argv[0] not in ("rpm",)] == []


@needs_root
@pytest.mark.parametrize("kind", ["garbage", "another schema", "fifo", "missing"])
def test_a_file_that_is_not_an_upgrades_status_is_nothing_to_roll_back(tmp_path: Path, kind: str) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.2xlarge", release="2.33.0"))
    simulator = HostSimulator(root, tmp_path / "sim")
    status = tmp_path / "upgrade.json"
    if kind == "garbage":
        status.write_bytes(b"\xff\xfe{not json" * 1000)
    elif kind == "another schema":
        status.write_text(json.dumps({"schema": "neurondoctor.report/1", "from": GOOD}))
    elif kind == "fifo":
        os.mkfifo(status)
    result = run_cli(["upgrade", "--to", "2.33.0", "--root", str(root), "--rollback", "--status-file", str(status)],
                     env=simulator.env(cli_env()), timeout=60)
    assert result.returncode == 2 and "there is none there" in result.stderr, result.stderr
    assert [argv for argv in simulator.commands() if argv[0] not in ("rpm",)] == []
