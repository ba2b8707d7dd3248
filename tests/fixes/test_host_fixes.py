"""Host-level fixes run verbatim against fixture roots: apt/dnf, modprobe/rmmod, DKMS, udev, tee
into /etc, kill, through the recording simulator (tests/host_simulator.py). After the printed lines, `check
--root` again: the finding is gone and nothing is wrong that was not wrong before."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import pytest

from neurondoctor.rules.fix_plan import split_alternatives
from tests.conftest import check_json, findings_by_id
from tests.fixes.harness import bad_findings, user_env
from tests.host_fixture import Holder, HostSpec, build_host
from tests.host_simulator import HostSimulator, as_rpm_host
from tests.neuron_envs import outside_venv
from tests.test_dkms_failures import GCC_MISSING
from tests.wheelhouse import VenvFactory

AL2023_KERNEL = "6.1.115-126.197.amzn2023.x86_64"


@dataclass(frozen=True)
class Case:
    finding: str
    spec: dict[str, Any]
    rpm: bool = False
    venv_release: Optional[str] = None  # check a healthy venv of this release beside the host
    expect: tuple[str, ...] = ()  # the first words of the printed lines that must be there
    prepare: Optional[Callable[[Path], None]] = None
    skip: tuple[str, ...] = ()  # lines for the user's current shell (`ulimit`), which no later check sees
    accepts: tuple[str, ...] = ()  # findings the fix knowingly leaves (its own comment says so)


def _regular_file_node(root: Path) -> None:
    node = root / "dev/neuron0"
    node.unlink()
    node.write_text("written by a setup script\n")


def _no_efa_limits(root: Path) -> None:
    (root / "etc/security/limits.d/01_efa.conf").unlink()
    (root / "etc/security/limits.conf").write_text("# /etc/security/limits.conf\n*  soft  nofile  65536\n")


INF1_LEGACY = {  # a host carried over from Neuron 1.x (tests/test_inf1_hosts.py)
    "instance_type": "inf1.xlarge", "release": "2.26.1", "runtime_library": False, "collectives_library": False,
    "package_versions": {"aws-neuronx-dkms": "2.24.7.0", "aws-neuronx-tools": None, "aws-neuronx-runtime-lib": None,
                         "aws-neuronx-collectives": None},
    "extra_packages": {"aws-neuron-runtime": "1.6.24.0", "aws-neuron-runtime-base": "1.6.21.0",
                       "aws-neuron-tools": "2.1.4.0"}}

CASES = {
    "driver-missing-apt": Case("ND-DRV-001", {"package_versions": {"aws-neuronx-dkms": None}, "repo_file": False},
                               expect=("sudo install -m 0755 -d", "wget", "echo 'deb [signed-by=",
                                       "sudo apt-get update", "sudo apt-get install -y linux-",
                                       "sudo apt-get install -y --allow-change-held-packages")),
    "driver-missing-dnf": Case("ND-DRV-001", {"package_versions": {"aws-neuronx-dkms": None}, "repo_file": False,
                                              "os": "al2023", "kernel": AL2023_KERNEL}, rpm=True,
                               expect=("printf '[neuron]", "sudo rpm --import", "sudo dnf install -y 'kernel-devel")),
    "driver-not-loaded": Case("ND-DRV-002", {"driver_loaded": False}, expect=("sudo modprobe neuron",)),
    "driver-stale": Case("ND-DRV-003", {"loaded_version": "2.28.0.0",
                                        "holders": [Holder(4242, "jupyter-lab", "jupyter-lab --port 8888", (0,))]},
                         expect=("sudo kill 4242", "sudo rmmod neuron", "sudo modprobe neuron")),
    "dkms-in-an-image": Case("ND-DRV-004", {"container": True, "image_dkms": True}),
    "module-not-built": Case("ND-DKMS-001", {"driver_loaded": False, "module_built": False},
                             expect=("sudo dkms install aws-neuronx/", "sudo modprobe neuron")),
    # kbuild's message when the kernel's compiler is not installed (tests/test_dkms_failures.py GCC_MISSING)
    "kernel-compiler-missing": Case("ND-DKMS-001", {"driver_loaded": False, "module_built": False,
                                                    "make_log": GCC_MISSING},
                                    expect=("sudo apt-get install -y gcc-14", "sudo dkms install aws-neuronx/",
                                            "sudo modprobe neuron")),
    "headers-missing": Case("ND-DKMS-002", {"driver_loaded": False, "module_built": False, "headers": False},
                            expect=("sudo apt-get install -y linux-headers-", "sudo dkms autoinstall")),
    "kernel-too-new": Case("ND-DKMS-003", {"release": "2.28.0", "kernel": "6.18.0-1001-aws", "driver_loaded": False,
                                           "module_built": False}),
    "legacy-dkms": Case("ND-DKMS-004", {"extra_packages": {"aws-neuron-dkms": "1.19.3.0"}, "legacy_dkms": True}),
    "runtime-newer-than-driver": Case("ND-RT-001", {"release": "2.28.1", "package_versions": {
        "aws-neuronx-runtime-lib": "2.32.31.0"}}),
    "compiler-newer-than-runtime": Case("ND-RT-002", {"release": "2.29.1"}, venv_release="2.31.1"),
    "runtime-missing": Case("ND-RT-003", {"runtime_library": False,
                                          "package_versions": {"aws-neuronx-runtime-lib": None}}),
    # dpkg lists runtime-lib installed, its files are gone (a cleanup script took /opt/aws/neuron/lib): `apt-get
    # install` says "already the newest version" and does nothing; the fix reinstalls.
    "runtime-files-gone-apt": Case("ND-RT-003", {"runtime_library": False},
                                   expect=("sudo apt-get install -y --reinstall",)),
    "runtime-files-gone-dnf": Case("ND-RT-003", {"runtime_library": False, "os": "al2023",
                                                 "kernel": AL2023_KERNEL}, rpm=True, expect=("sudo dnf reinstall -y",)),
    "device-permission": Case("ND-DEV-002", {"node_mode": 0o600}, expect=("sudo chmod 0666", "echo 'KERNEL")),
    "cores-busy": Case("ND-DEV-003", {"instance_type": "trn1.32xlarge",
                                      "holders": [Holder(4343, "python", "python train.py", (0,))]},
                       expect=("kill 4343",)),
    "not-a-device": Case("ND-DEV-004", {}, prepare=_regular_file_node),
    "host-packages-mixed": Case("ND-REL-003", {"package_versions": {"aws-neuronx-tools": "2.29.22.0"}}),
    "venv-newer-than-host": Case("ND-REL-004", {"release": "2.29.1"}, venv_release="2.31.1"),
    # the 2.32.0 -> 2.33.0 upgrade: a 2.33 environment on a 2.32 host; the host part of the upgrade
    # brings driver 2.31.7.0 (whose sysfs tree is the reorganised one), runtime 2.35 and tools 2.33
    "upgrade-2.32-host-to-2.33": Case("ND-RT-002", {"release": "2.32.0"}, venv_release="2.33.0",
                                      expect=("sudo apt-get install", "sudo rmmod neuron", "sudo modprobe neuron")),
    # release-notes/2.33.1.rst: runtime-lib 2.35.33.0 fixes a DMA race of 2.35.30.0 (2.33.0) that can hang the chip;
    # the upgrade moves the host to 2.33.1 together (driver 2.31.8.0 loaded, runtime, collectives, tools)
    "runtime-fix-2.33.1": Case("ND-RT-006", {"release": "2.33.0"},
                               expect=("sudo apt-get install -y --allow-change-held-packages "
                                       "'aws-neuronx-dkms=2.31.8.0*' 'aws-neuronx-runtime-lib=2.35.33.0*'",
                                       "sudo rmmod neuron",
                                       "sudo modprobe neuron")),
    "legacy-runtime-1x": Case("ND-RT-004", {**INF1_LEGACY}, expect=("sudo systemctl disable --now neuron-rtd",)),
    "legacy-tools": Case("ND-RT-005", {**INF1_LEGACY}, expect=("sudo apt-get remove -y aws-neuron-tools",)),
    "driver-too-new-for-inf1": Case("ND-INST-002", {"instance_type": "inf1.xlarge", "release": "2.31.1",
                                                    "package_versions": {"aws-neuronx-runtime-lib": None,
                                                                         "aws-neuronx-collectives": None},
                                                    "runtime_library": False, "collectives_library": False}),
    # the ECS optimized Neuron AMI on Inf1 whose boot service did not put its cached 2.21 driver in place (the
    # newest driver loaded): the image has no Neuron repository to install from, its service installs the cache
    "image-inf1-pin-not-applied": Case("ND-INST-002", {"instance_type": "inf1.6xlarge", "release": "2.33.1",
                                                       "os": "al2023", "kernel": AL2023_KERNEL, "node": "ecs",
                                                       "inf1_pin": True}, rpm=True,
                                       expect=("sudo systemctl restart neuron-inf1-downgrade.service",
                                               "sudo rmmod neuron", "sudo modprobe neuron")),
    "trn-runtime-on-inf1": Case("ND-INST-003", {"instance_type": "inf1.xlarge", "release": "2.31.1"}),
    "tools-need-a-newer-glibc": Case("ND-OS-003", {"os": "al2", "kernel": "5.10.228-219.884.amzn2.x86_64",
                                                   "release": "2.26.1"}, rpm=True, accepts=("ND-REL-003",)),
    # Ubuntu 20.04 (GLIBC 2.31) with 2.31.1's tools: the way back to a tools release built for it is a downgrade,
    # which apt refuses under -y without --allow-downgrades
    "tools-need-a-newer-glibc-apt": Case("ND-OS-003", {"os": "ubuntu20", "kernel": "5.15.0-1072-aws"},
                                         expect=("sudo apt-get install -y --allow-change-held-packages "
                                                 "--allow-downgrades",), accepts=("ND-REL-003",)),
    "memlock-limit": Case("ND-RES-003", {"instance_type": "trn1.32xlarge"}, prepare=_no_efa_limits,
                          skip=("ulimit ",)),
}


def runnable_way(fix: list[str]) -> list[str]:
    """The first way out that runs something (a way of comments only, "move this host to …", is advice)."""
    return next((way for way in split_alternatives(fix) if any(not line.lstrip().startswith("#") for line in way)),
                [])


@pytest.mark.parametrize("name", sorted(CASES))
def test_host_fix_runs_verbatim_in_the_simulator(name: str, tmp_path: Path, venvs: VenvFactory) -> None:
    case = CASES[name]
    root = build_host(tmp_path / "host", HostSpec(**case.spec))
    if case.rpm:
        as_rpm_host(root)
    if case.prepare:
        case.prepare(root)
    simulator = HostSimulator(root, tmp_path / "sim")
    env = simulator.env(user_env(tmp_path))
    args = ["--root", str(root), *(outside_venv(venvs, case.venv_release) if case.venv_release else [])]
    before = check_json(args, env=env)[1]
    found = findings_by_id(before)
    assert case.finding in found, sorted(found)
    lines = [line for item in found[case.finding] for line in runnable_way(item["fix"])]
    for prefix in case.expect:
        assert any(line.startswith(prefix) for line in lines), (prefix, lines)
    for line in [line for line in lines if not line.startswith(case.skip or ("\0",))]:
        done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env, timeout=60)
        assert done.returncode == 0, (line, done.stdout, done.stderr)
    after = check_json(args, env=env)[1]
    assert case.finding not in findings_by_id(after), (lines, findings_by_id(after)[case.finding])
    new = {item for item in bad_findings(after)
           if item[0] not in {bad[0] for bad in bad_findings(before)} | set(case.accepts)}
    assert not new, (lines, new)
    assert simulator.commands(), "the fix ran no simulated command"
