"""deploy/npd against node-problem-detector's custom plugin contract (docs/custom_plugin_monitor.md):
the config's fields, one rule per condition (NPD cannot take the reason from stdout), no rule timeout above the
global one, and every rule's command run for real against fixture roots in place of /host: exit 0 OK, 1 problem,
3 unknown (anything but 0 and 1 is Unknown to NPD), one line of stdout within max_output_length bytes. The
DaemonSet mounts the host root read-only and carries the same plugin config."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO, run_cli
from tests.host_fixture import Holder, HostSpec, build_host

NPD = REPO / "deploy" / "npd"
PLUGIN: dict[str, Any] = json.loads((NPD / "neurondoctor-plugin.json").read_text())


def _seconds(value: str) -> float:
    assert value.endswith("s") and value[:-1].isdigit(), value
    return float(value[:-1])


def test_the_plugin_config_follows_the_contract() -> None:
    assert PLUGIN["plugin"] == "custom" and PLUGIN["source"] == "neurondoctor"
    config = PLUGIN["pluginConfig"]
    assert set(config) >= {"invoke_interval", "timeout", "max_output_length", "concurrency"}
    assert config["max_output_length"] == 80
    assert _seconds(config["timeout"]) < _seconds(config["invoke_interval"])
    conditions = {condition["type"]: condition for condition in PLUGIN["conditions"]}
    assert set(conditions) == {"NeuronDriverProblem", "NeuronDeviceUnavailable", "NeuronHardwareError",
                               "NeuronStackDrift"}
    assert all(condition["reason"] and condition["message"] for condition in conditions.values())
    rules = PLUGIN["rules"]
    assert sorted(rule["condition"] for rule in rules) == sorted(conditions)  # one rule per condition
    selections = []
    for rule in rules:
        assert rule["type"] == "permanent" and rule["reason"] != conditions[rule["condition"]]["reason"]
        assert _seconds(rule["timeout"]) <= _seconds(config["timeout"])  # NPD refuses a longer rule timeout
        args = rule["args"]
        assert rule["path"] == "/opt/neurondoctor/bin/neurondoctor"
        assert args[:5] == ["health", "--root", "/host", "--format", "npd"]
        selected = frozenset(args[index + 1] for index, arg in enumerate(args) if arg == "--select")
        assert selected
        selections.append(selected)
    assert len(set(selections)) == len(rules) and not frozenset.intersection(*selections)


def _run_rule(rule: dict[str, Any], root: Path) -> tuple[int, str]:
    args = [str(root) if arg == "/host" else arg for arg in rule["args"]]
    result = run_cli(args, timeout=_seconds(rule["timeout"]))
    return result.returncode, result.stdout


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("npd")
    unknown = build_host(base / "unknown", HostSpec(instance_type="trn1.32xlarge"))
    (unknown / "proc/modules").unlink()
    os.mkfifo(unknown / "proc/modules")
    return {
        "healthy": build_host(base / "healthy", HostSpec(instance_type="trn1.32xlarge", holders=[
            Holder(4121, "python", "python -m ipykernel_launcher -f kernel-1.json", (0,))])),  # a warning: still OK
        "driver": build_host(base / "driver", HostSpec(instance_type="trn1.32xlarge", driver_loaded=False)),
        "devices": build_host(base / "devices", HostSpec(instance_type="trn1.32xlarge", device_nodes=8)),
        "hardware": build_host(base / "hardware", HostSpec(instance_type="trn1.32xlarge",
                                                           ecc={3: {"mem_ecc_uncorrected": 2}})),
        "unknown": unknown,
    }


EXPECTED = {  # root -> {condition: exit code}
    "healthy": {"NeuronDriverProblem": 0, "NeuronDeviceUnavailable": 0, "NeuronHardwareError": 0,
                "NeuronStackDrift": 0},
    "driver": {"NeuronDriverProblem": 1, "NeuronDeviceUnavailable": 0, "NeuronHardwareError": 0},
    "devices": {"NeuronDriverProblem": 0, "NeuronDeviceUnavailable": 1, "NeuronHardwareError": 0},
    "hardware": {"NeuronDriverProblem": 0, "NeuronHardwareError": 1},
    "unknown": {"NeuronDriverProblem": 3},
}


@pytest.mark.parametrize("root_name", sorted(EXPECTED))
def test_each_rule_reports_its_own_condition(roots: dict[str, Path], root_name: str) -> None:
    limit = PLUGIN["pluginConfig"]["max_output_length"]
    for rule in PLUGIN["rules"]:
        expected = EXPECTED[root_name].get(rule["condition"])
        if expected is None:
            continue
        code, stdout = _run_rule(rule, roots[root_name])
        assert code == expected, (root_name, rule["condition"], stdout)
        lines = stdout.splitlines()
        assert len(lines) == 1 and 0 < len(lines[0].encode()) <= limit, lines
        if code == 1:
            assert lines[0].startswith("ND-"), lines


def test_the_daemonset_mounts_the_host_read_only_and_carries_the_config() -> None:
    documents = list(yaml.safe_load_all((NPD / "daemonset.yaml").read_text()))
    kinds = {document["kind"]: document for document in documents}
    assert {"ConfigMap", "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DaemonSet"} <= set(kinds)
    assert json.loads(kinds["ConfigMap"]["data"]["neurondoctor-plugin.json"]) == PLUGIN
    pod = kinds["DaemonSet"]["spec"]["template"]["spec"]
    [container] = pod["containers"]
    mounts = {mount["name"]: mount for mount in container["volumeMounts"]}
    volumes = {volume["name"]: volume for volume in pod["volumes"]}
    assert mounts["host-root"]["mountPath"] == "/host" and mounts["host-root"]["readOnly"] is True
    assert volumes["host-root"]["hostPath"]["path"] == "/"
    assert "--config.custom-plugin-monitor=/config/neurondoctor-plugin.json" in container["command"]
    assert pod["serviceAccountName"] == kinds["ServiceAccount"]["metadata"]["name"]
