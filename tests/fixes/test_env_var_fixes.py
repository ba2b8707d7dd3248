"""env-var-misconfig fixes, run verbatim: the user's shell has the bad variable, the fix lines are pasted into that
same shell, and `check` runs there after them.

The retired and value cases come from AWS's pages and real reports: NEURONCORE_GROUP_SIZES stopped affecting
anything in Neuron 1.20.0 (announcements/neuron1.x/eol-ncgs-env_2.rst), and users still set it (a torch-neuron
data-parallel script on inf1 in aws-neuron/aws-neuron-sdk's issues; Triton's Inferentia backend moved off it);
BUCKET_CAP_MB gives way to ALLREDUCE_GRADIENTS_BUCKET_SIZE_MB (torch-neuron-envvars.rst); the runtime's booleans
are 0, 1, false or true (nrt-env-var-reference.rst) and NEURON_RT_NUMERICAL_ERRORS_VERBOSITY is none, critical,
debug or verbose, any other value failing nrt_init() (configuration-guide.rst)."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, check_json, cli_env, findings_by_id
from tests.host_fixture import HostSpec, build_host


@pytest.mark.parametrize(("instance_type", "variables", "finding_id"), [
    ("trn1.2xlarge", {"NEURON_RT_VISIBLE_CORES": "0-7"}, "ND-ENV-001"),
    ("trn1.2xlarge", {"NEURON_RT_NUM_CORES": "4"}, "ND-ENV-002"),
    ("trn1.2xlarge", {"NEURON_LOGICAL_NC_CONFIG": "2"}, "ND-ENV-003"),
    ("trn1.32xlarge", {"NEURON_RT_VISIBLE_CORES": "0-5"}, "ND-ENV-004"),
    ("inf2.xlarge", {"NEURONCORE_GROUP_SIZES": "1,1"}, "ND-ENV-005"),
    ("trn1.32xlarge", {"BUCKET_CAP_MB": "512"}, "ND-ENV-005"),
    ("trn1.2xlarge", {"NEURON_RT_VALIDATE_HASH": "yes"}, "ND-ENV-006"),
    ("trn1.2xlarge", {"NEURON_RT_NUMERICAL_ERRORS_VERBOSITY": "loud"}, "ND-ENV-006"),
    # a value quoted with its blanks in a .env file or a pod spec (`NEURON_RT_NUM_CORES: " 1"`)
    ("trn1.2xlarge", {"NEURON_RT_NUM_CORES": " 1"}, "ND-ENV-002"),
    ("trn1.32xlarge", {"NEURON_RT_VISIBLE_CORES": "0-7 "}, "ND-ENV-001"),
])
def test_the_env_var_fix_in_the_users_shell(tmp_path: Path, instance_type: str, variables: dict[str, str],
                                            finding_id: str) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type=instance_type))
    env = cli_env(variables)
    before = check_json(["--root", str(root), "--select", "host-env"], env=env)[1]
    fix = findings_by_id(before)[finding_id][0]["fix"]
    check = " ".join(shlex.quote(part) for part in (sys.executable, "-m", "neurondoctor", "check", "--root",
                                                      str(root), "--select", "host-env", "--json"))
    script = "\n".join([*fix, check])
    result = subprocess.run(["sh", "-c", script], capture_output=True, text=True, env=env, cwd=str(REPO),
                            timeout=120)
    after = json.loads(result.stdout)
    assert [item["id"] for item in after["findings"] if item["severity"] != "info"] == [], (fix, after["findings"])
    assert finding_id not in {item["id"] for item in after["findings"]}, (fix, after["findings"])


def test_the_visible_cores_fix_in_a_container_given_one_device(tmp_path: Path) -> None:
    """A trn1.32xlarge container given /dev/neuron1 and told NEURON_RT_VISIBLE_CORES=0-1: the fix names that
    device's cores (2-3, as the device plugin would), and after it only ND-DEV-001's info remains."""
    root = build_host(tmp_path / "c", HostSpec(instance_type="trn1.32xlarge", container=True, device_nodes=2))
    (root / "dev/neuron0").unlink()
    env = cli_env({"NEURON_RT_VISIBLE_CORES": "0-1"})
    before = check_json(["--root", str(root), "--select", "host-env"], env=env)[1]
    fix = findings_by_id(before)["ND-ENV-001"][0]["fix"]
    assert fix == ["export NEURON_RT_VISIBLE_CORES=2-3"]
    check = " ".join(shlex.quote(part) for part in (sys.executable, "-m", "neurondoctor", "check", "--root",
                                                      str(root), "--select", "host-env", "--json"))
    result = subprocess.run(["sh", "-c", "\n".join([*fix, check])], capture_output=True, text=True, env=env,
                            cwd=str(REPO), timeout=120)
    after = json.loads(result.stdout)
    assert [item["id"] for item in after["findings"] if item["severity"] != "info"] == [], after["findings"]
