"""Acceptance for host inspection: fixture hosts at the real paths, healthy per instance and release, and one
failing host per rule with a near miss beside it that the rule must not flag."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from neurondoctor.actions.check.check_run import CheckOptions, run_check
from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.report.model import Report
from tests.conftest import check_json, cli_env, empty_folder, findings_by_id, run_cli
from tests.host_fixture import HOST_STACKS, Holder, HostSpec, build_host
from tests.neuron_envs import HEALTHY_STACKS, stack_venv
from tests.wheelhouse import VenvFactory

RELEASES = ("2.26.1", "2.28.1", "2.29.1", "2.30.0", "2.31.1", "2.32.0")
_release_venvs: dict[str, Path] = {}


def release_venv(venvs: VenvFactory, release: str) -> Path:
    if release not in _release_venvs:
        _release_venvs[release] = stack_venv(venvs, f"host-{release}", release)
    return _release_venvs[release]


def host(tmp_path: Path, name: str = "host", **fields: Any) -> Path:
    return build_host(tmp_path / name, HostSpec(**fields))


def judge(catalog: ReleaseCatalog, root: Path, venvs: tuple[Path, ...] = (), environ: dict[str, str] | None = None,
          ) -> Report:
    return run_check(CheckOptions(root=str(root), venvs=[str(venv) for venv in venvs], environ=environ or {}),
                     catalog=catalog)


def ids(report: Report) -> dict[str, Any]:
    return {finding.id: finding for finding in report.findings}


@pytest.mark.parametrize("instance_type", ["trn1.2xlarge", "trn1.32xlarge", "inf2.xlarge"])
@pytest.mark.parametrize("release", RELEASES)
def test_healthy_hosts_report_nothing(venvs: VenvFactory, tmp_path: Path, release: str, instance_type: str) -> None:
    assert release in HEALTHY_STACKS and release in HOST_STACKS
    root = host(tmp_path, instance_type=instance_type, release=release)
    venv = release_venv(venvs, release)
    code, report, stderr = check_json(["--root", str(root), "--venv", str(venv)])
    assert report["findings"] == [], report["findings"]
    assert code == 0, stderr
    assert report["release"]["host"] == release
    assert report["release"]["environments"][str(venv)] == release
    statuses = {check["id"]: check["status"] for check in report["checks"]}
    assert set(statuses.values()) == {"ok"}, statuses


def test_terminal_report_of_a_healthy_trn1_32xlarge(venvs: VenvFactory, tmp_path: Path) -> None:
    root = host(tmp_path, instance_type="trn1.32xlarge", release="2.31.1")
    result = run_cli(["check", "--root", str(root), "--venv", str(release_venv(venvs, "2.31.1"))])
    lines = result.stdout.splitlines()
    assert "Host     Neuron 2.31.1 (driver, runtime, collectives, tools agree)" in lines
    assert any(line.startswith("[✓] Neuron hardware") and "16 × Trainium1 (32 NeuronCores) on PCI, 16 device nodes"
               in line for line in lines)
    assert any(line.startswith("[✓] Driver") and "aws-neuronx-dkms 2.29.0.0, loaded 2.29.0.0, built for 6.8.0-1015-aws"
               in line for line in lines)
    assert result.returncode == 0


def test_non_neuron_machine_is_short_and_correct(tmp_path: Path) -> None:
    root = host(tmp_path, instance_type="m7i.xlarge", release=None, pci=False)
    result = run_cli(["check", "--root", str(root)])
    assert "[–] Neuron hardware      none found (this is not a Trainium/Inferentia instance)" in result.stdout
    assert "Driver" not in result.stdout and "[✗]" not in result.stdout
    assert result.returncode == 0


# --- driver -------------------------------------------------------------------------------------------

def test_driver_missing(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = host(tmp_path, release=None, repo_file=False, runtime_library=False, collectives_library=False,
                tools=False)
    finding = ids(judge(catalog, root))["ND-DRV-001"]
    assert (finding.category, finding.severity) == ("driver-missing", "error")
    assert finding.fix_lines[:3] == [
        "sudo install -m 0755 -d /etc/apt/keyrings",
        "wget -qO - https://apt.repos.neuron.amazonaws.com/GPG-PUB-KEY-AMAZON-AWS-NEURON.PUB | sudo gpg --batch "
        "--yes --dearmor -o /etc/apt/keyrings/neuron.gpg",
        "echo 'deb [signed-by=/etc/apt/keyrings/neuron.gpg] https://apt.repos.neuron.amazonaws.com noble main' | "
        "sudo tee /etc/apt/sources.list.d/neuron.list"]
    assert "sudo apt-get install -y linux-headers-6.8.0-1015-aws" in finding.fix_lines
    assert finding.fix_lines[-1] == "sudo apt-get install -y --allow-change-held-packages 'aws-neuronx-dkms=2.31.8.0*'"
    near_miss = host(tmp_path, "plain", instance_type="m7i.xlarge", release=None, pci=False)
    assert ids(judge(catalog, near_miss)) == {}


def test_driver_missing_on_amazon_linux_uses_dnf(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = host(tmp_path, os="al2023", kernel="6.1.115-126.197.amzn2023.x86_64", release=None, repo_file=False)
    finding = ids(judge(catalog, root))["ND-DRV-001"]
    assert "sudo dnf install -y 'kernel-devel-uname-r = 6.1.115-126.197.amzn2023.x86_64'" in finding.fix_lines
    assert finding.fix_lines[-1] == "sudo dnf install -y 'aws-neuronx-dkms-2.31.8.0*'"


def test_driver_not_loaded(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    finding = ids(judge(catalog, host(tmp_path, driver_loaded=False)))["ND-DRV-002"]
    assert (finding.category, finding.fix_lines[0]) == ("driver-not-loaded", "sudo modprobe neuron")
    assert "ND-DRV-002" not in ids(judge(catalog, host(tmp_path, "loaded")))


def test_module_not_built_for_the_running_kernel(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = host(tmp_path, driver_loaded=False, module_built=False,
                make_log="make -C /lib/modules/6.8.0-1015-aws/build\nerror: implicit declaration\nmake: *** Error 2\n")
    finding = ids(judge(catalog, root))["ND-DKMS-001"]
    assert finding.category == "dkms-build"
    assert finding.fix_lines[0] == "sudo dkms install aws-neuronx/2.29.0.0 -k 6.8.0-1015-aws"
    assert finding.evidence["make_log_tail"][-1] == "make: *** Error 2"
    assert "ND-DRV-002" not in ids(judge(catalog, root))


def test_headers_missing(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = host(tmp_path, driver_loaded=False, module_built=False, headers=False)
    finding = ids(judge(catalog, root))["ND-DKMS-002"]
    assert finding.fix_lines[:2] == ["sudo apt-get install -y linux-headers-6.8.0-1015-aws",
                               "sudo dkms autoinstall -k 6.8.0-1015-aws"]


def test_kernel_618_needs_dkms_2_26_10(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = host(tmp_path, release="2.28.0", kernel="6.18.0-1001-aws", driver_loaded=False, module_built=False)
    finding = ids(judge(catalog, root))["ND-DKMS-003"]
    assert "needs ≥ 2.26.10.0" in finding.title
    assert finding.fix_lines[0] == "sudo apt-get install -y --allow-change-held-packages 'aws-neuronx-dkms=2.26.10.0*'"
    near_miss = host(tmp_path, "fixed", release="2.28.1", kernel="6.18.0-1001-aws")
    assert not {"ND-DKMS-001", "ND-DKMS-002", "ND-DKMS-003"} & set(ids(judge(catalog, near_miss)))


def test_legacy_driver_package(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = host(tmp_path, extra_packages={"aws-neuron-dkms": "1.19.3.0"}, legacy_dkms=True)
    finding = ids(judge(catalog, root))["ND-DKMS-004"]
    assert finding.fix_lines[0] == "sudo apt-get remove -y aws-neuron-dkms"


def test_driver_stale_names_the_holders(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    jupyter = Holder(4121, "python", "python -m ipykernel_launcher -f kernel-1.json", (0,))
    root = host(tmp_path, loaded_version="2.28.0.0", holders=[jupyter])
    finding = ids(judge(catalog, root))["ND-DRV-003"]
    assert (finding.category, finding.severity) == ("driver-stale", "error")
    assert finding.fix_lines == ["sudo kill 4121", "sudo rmmod neuron", "sudo modprobe neuron"]
    assert "Stop the 1 process using it" in finding.detail and "PID 4121 is python." in finding.detail
    unused = ids(judge(catalog, host(tmp_path, "unused", loaded_version="2.28.0.0")))["ND-DRV-003"]
    assert "Nothing is using it" in unused.detail and "Stop the 0" not in unused.detail
    near_miss = host(tmp_path, "same", loaded_version="2.29.0.0-d8a9b6f0e")
    assert "ND-DRV-003" not in ids(judge(catalog, near_miss))


# --- runtime ------------------------------------------------------------------------------------------

def test_runtime_newer_than_driver_is_a_documented_break(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = host(tmp_path, release="2.28.1", package_versions={"aws-neuronx-runtime-lib": "2.32.31.0"})
    finding = ids(judge(catalog, root))["ND-RT-001"]
    assert (finding.category, finding.severity) == ("driver-runtime-mismatch", "error")
    assert "not backward compatible with driver 2.26" in finding.detail
    assert finding.fix_lines[0] == "sudo apt-get install -y --allow-change-held-packages 'aws-neuronx-dkms=2.28.0.0*'"


def test_driver_229_with_an_old_runtime(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = host(tmp_path, release="2.29.1", package_versions={"aws-neuronx-dkms": "2.29.0.0"})
    finding = ids(judge(catalog, root))["ND-RT-001"]
    assert "needs runtime-lib 2.33" in finding.detail
    near_miss = host(tmp_path, "older-runtime", release="2.29.1", package_versions={"aws-neuronx-dkms": "2.28.0.0"})
    assert "ND-RT-001" not in ids(judge(catalog, near_miss))


def test_compiler_newer_than_host_runtime(catalog: ReleaseCatalog, venvs: VenvFactory, tmp_path: Path) -> None:
    root = host(tmp_path, release="2.29.1")
    finding = ids(judge(catalog, root, (release_venv(venvs, "2.31.1"),)))["ND-RT-002"]
    assert (finding.category, finding.severity) == ("runtime-compiler-mismatch", "error")
    assert "'aws-neuronx-runtime-lib=2.33.10.0*'" in finding.fix_lines[0]
    near_miss = judge(catalog, host(tmp_path, "newer-host", release="2.31.1"), (release_venv(venvs, "2.29.1"),))
    assert "ND-RT-002" not in ids(near_miss) and "ND-REL-004" in ids(near_miss)


def test_runtime_library_missing(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = host(tmp_path, runtime_library=False, package_versions={"aws-neuronx-runtime-lib": None})
    finding = ids(judge(catalog, root))["ND-RT-003"]
    assert (finding.category, finding.severity) == ("tools-missing", "error")
    assert "'aws-neuronx-runtime-lib=2.33.10.0*'" in finding.fix_lines[0]
    tools_only = ids(judge(catalog, host(tmp_path, "no-tools", tools=False)))["ND-RT-003"]
    assert tools_only.severity == "warning"


# --- devices ------------------------------------------------------------------------------------------

def test_container_without_devices(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = host(tmp_path, instance_type="trn1.32xlarge", container=True, device_nodes=0)
    finding = ids(judge(catalog, root))["ND-DEV-001"]
    assert finding.category == "device-missing" and "in this container" in finding.title
    assert finding.fix_lines[0].startswith("docker run --device=/dev/neuron0 --device=/dev/neuron1")
    near_miss = host(tmp_path, "with-devices", instance_type="trn1.32xlarge", container=True)
    assert "ND-DEV-001" not in ids(judge(catalog, near_miss))


def test_device_permission(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    finding = ids(judge(catalog, host(tmp_path, node_mode=0o600)))["ND-DEV-002"]
    assert (finding.category, finding.severity) == ("device-permission", "error")
    assert "not usable by users other than root" in finding.title and "/dev/neuron0 (0600 " in finding.title
    assert finding.fix_lines[0] == "sudo chmod 0666 /dev/neuron0  # now"
    assert finding.fix_lines[1] == ("echo 'KERNEL==\"neuron*\", MODE=\"0666\"' | sudo tee "
                              "/lib/udev/rules.d/neuron-udev.rules  # and at every boot")
    assert "ND-DEV-002" not in ids(judge(catalog, host(tmp_path, "open", node_mode=0o666)))


def test_a_regular_file_where_a_device_node_belongs(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = host(tmp_path, "file-node")
    (root / "dev/neuron0").unlink()
    (root / "dev/neuron0").write_text("written by a script\n")
    found = ids(judge(catalog, root))
    finding = found["ND-DEV-004"]
    assert (finding.category, finding.severity) == ("device-missing", "error")
    assert finding.title == "/dev/neuron0 is not a character device"
    assert "ND-DEV-002" not in found  # its mode is not the problem


def test_cores_busy_names_pid_command_and_age(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    jupyter = Holder(4121, "python", "python -m ipykernel_launcher -f kernel-1.json", (0,))
    root = host(tmp_path, instance_type="trn1.32xlarge", holders=[jupyter])
    finding = ids(judge(catalog, root))["ND-DEV-003"]
    assert finding.category == "cores-busy"
    assert "PID 4121 (python, 24 h old)" in finding.title and "30 of 32 NeuronCores" in finding.title
    assert finding.fix_lines == ["kill 4121"]  # the command line is data: the title names it, no comment carries it
    idle = Holder(77, "bash", "bash", ())
    assert "ND-DEV-003" not in ids(judge(catalog, host(tmp_path, "idle", holders=[idle])))


def test_uncorrectable_ecc(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = host(tmp_path, instance_type="trn1.32xlarge", ecc={3: {"sram_ecc_uncorrected": 2}})
    finding = ids(judge(catalog, root))["ND-HW-001"]
    assert (finding.category, finding.evidence["counters"]) == ("hardware-error",
                                                                {"neuron3": {"sram_ecc_uncorrected": 2}})
    assert "ND-HW-001" not in ids(judge(catalog, host(tmp_path, "clean", ecc={3: {"mem_ecc_uncorrected": 0}})))


# --- environment, OS, resources ---------------------------------------------------------------------

@pytest.mark.parametrize(("variables", "expected", "severity"), [
    ({"NEURON_RT_VISIBLE_CORES": "0-7"}, "ND-ENV-001", "error"),
    ({"NEURON_RT_VISIBLE_CORES": "3-1"}, "ND-ENV-001", "error"),
    ({"NEURON_RT_NUM_CORES": "4"}, "ND-ENV-002", "error"),
    ({"NEURON_LOGICAL_NC_CONFIG": "2"}, "ND-ENV-003", "warning"),
    # blanks around a value that is right: how the runtime reads it is not published (a warning); around one
    # that is wrong, the error it would be without them
    ({"NEURON_RT_NUM_CORES": " 1"}, "ND-ENV-002", "warning"),
    ({"NEURON_RT_NUM_CORES": " 4"}, "ND-ENV-002", "error"),
    ({"NEURON_RT_VISIBLE_CORES": "0-1 "}, "ND-ENV-001", "warning"),
    ({"NEURON_RT_VISIBLE_CORES": " 0-7"}, "ND-ENV-001", "error"),
    ({"NEURON_RT_NUM_CORES": "1 x"}, "ND-ENV-002", "error"),
])
def test_env_var_misconfig(catalog: ReleaseCatalog, tmp_path: Path, variables: dict[str, str], expected: str,
                           severity: str) -> None:
    finding = ids(judge(catalog, host(tmp_path), environ=variables))[expected]
    assert (finding.category, finding.severity) == ("env-var-misconfig", severity)


def test_env_vars_that_fit_the_host(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    fitting = {"NEURON_RT_VISIBLE_CORES": "0-1", "NEURON_RT_LOG_LEVEL": "INFO"}
    assert ids(judge(catalog, host(tmp_path), environ=fitting)) == {}


def test_env_var_fix_via_cli(tmp_path: Path) -> None:
    root = host(tmp_path)
    _, report, _ = check_json(["--root", str(root), "--select", "host-env"],
                              env=cli_env({"NEURON_RT_VISIBLE_CORES": "0-7"}))
    assert findings_by_id(report)["ND-ENV-001"][0]["fix"] == ["export NEURON_RT_VISIBLE_CORES=0-1"]


def test_unsupported_os_and_kernel(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    found = ids(judge(catalog, host(tmp_path, os="al2", kernel="4.14.355-275.570.amzn2.x86_64")))
    assert found["ND-OS-001"].severity == "error" and found["ND-OS-002"].category == "os-unsupported"
    assert not {"ND-OS-001", "ND-OS-002"} & set(ids(judge(catalog, host(tmp_path, "al2023", os="al2023"))))


def test_efa_missing_on_trn1_32xlarge(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    finding = ids(judge(catalog, host(tmp_path, instance_type="trn1.32xlarge", efa=False)))["ND-RES-002"]
    assert (finding.category, finding.severity) == ("resource", "warning")
    assert "ND-RES-002" not in ids(judge(catalog, host(tmp_path, "single", instance_type="trn1.2xlarge", efa=False)))


def test_host_packages_from_different_releases(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = host(tmp_path, release="2.31.1", package_versions={"aws-neuronx-tools": "2.29.22.0"})
    finding = ids(judge(catalog, root))["ND-REL-003"]
    assert finding.category == "mixed-sdk-release"
    assert finding.fix_lines == ["sudo apt-get install -y --allow-change-held-packages 'aws-neuronx-tools=2.31.15.0*'"]


# --- live commands ------------------------------------------------------------------------------------

def test_hanging_neuron_ls_is_stopped_and_reported(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "neuron-ls"
    fake.write_text("#!/bin/sh\nsleep 60\n")
    fake.chmod(0o755)
    env = cli_env({"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "NEURONDOCTOR_COMMAND_TIMEOUT": "2"})
    started = time.monotonic()
    _, report, _ = check_json(["--venv", empty_folder(tmp_path), "--select", "hardware"], env=env)
    elapsed = time.monotonic() - started
    assert elapsed < 30, elapsed  # stopped at its timeout, not after its 60 s sleep
    command = report["facts"]["host"]["snapshot"]["commands"][0]
    assert command["argv"][0] == str(fake) and command["ok"] is False
    assert "did not finish within" in command["failure"]


def test_neuron_ls_json_is_read_on_a_live_host(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "neuron-ls"
    fake.write_text('#!/bin/sh\necho \'[{"neuron_device": 0, "nc_count": 2, "neuroncore_ids": [0, 1], '
                    '"neuron_processes": [], "bdf": "00:1e.0"}]\'\n')
    fake.chmod(0o755)
    env = cli_env({"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    _, report, _ = check_json(["--venv", empty_folder(tmp_path), "--select", "hardware"], env=env)
    assert report["facts"]["host"]["snapshot"]["neuron_ls"] == [
        {"index": 0, "core_count": 2, "core_ids": [0, 1], "processes": [], "logical_neuroncore_config": None,
         "assumed": False}]


def test_release_line_says_whether_host_and_venv_go_together(venvs: VenvFactory, tmp_path: Path) -> None:
    together = run_cli(["check", "--root", str(host(tmp_path, release="2.31.1")), "--venv",
                        str(release_venv(venvs, "2.31.1"))])
    venv = release_venv(venvs, "2.31.1")
    # the 2.31.1 venv's versions ship in 2.31.0 too: both are named
    assert f"Release  host 2.31.1 · {venv} 2.31.0/2.31.1 · they go together" in together.stdout.splitlines()
    apart = run_cli(["check", "--root", str(host(tmp_path, "older", release="2.29.1")), "--venv", str(venv)])
    assert f"Release  host 2.29.1 · {venv} 2.31.0/2.31.1 · they do NOT go together" in apart.stdout.splitlines()


def test_collectives_core_count_on_trn1_32xlarge(catalog: ReleaseCatalog, tmp_path: Path) -> None:
    root = host(tmp_path, instance_type="trn1.32xlarge")
    finding = ids(judge(catalog, root, environ={"NEURON_RT_VISIBLE_CORES": "0-5"}))["ND-ENV-004"]
    assert (finding.category, finding.severity) == ("env-var-misconfig", "warning")
    assert finding.fix_lines == ["export NEURON_RT_VISIBLE_CORES=0-1"]
    assert "ND-ENV-004" not in ids(judge(catalog, root, environ={"NEURON_RT_VISIBLE_CORES": "0-7"}))
    small = host(tmp_path, "small", instance_type="trn1.2xlarge")
    assert "ND-ENV-004" not in ids(judge(catalog, small, environ={"NEURON_RT_NUM_CORES": "1"}))


def test_rpm_host_is_read_with_rpm_root(tmp_path: Path) -> None:
    root = host(tmp_path, os="al2023", kernel="6.1.115-126.197.amzn2023.x86_64", release="2.31.1")
    (root / "var/lib/dpkg/status").unlink()
    (root / "var/lib/rpm").mkdir(parents=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    rpm = bin_dir / "rpm"
    rpm.write_text("#!/bin/sh\n[ \"$1\" = --root ] || exit 2\nprintf 'aws-neuronx-dkms\\t2.29.0.0-dkms\\n"
                   "aws-neuronx-runtime-lib\\t2.33.10.0_530fb3064-1\\naws-neuronx-collectives\\t2.33.10.0-1\\n"
                   "aws-neuronx-tools\\t2.31.15.0-1\\nbash\\t5.2.15-1\\n'\n")
    rpm.chmod(0o755)
    env = cli_env({"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    code, report, _ = check_json(["--root", str(root)], env=env)
    assert report["release"]["host"] == "2.31.1"
    command = report["facts"]["host"]["snapshot"]["commands"][0]
    assert command["argv"][:3] == ["rpm", "--root", str(root)] and command["ok"] is True
    assert report["findings"] == [] and code == 0


FAILING_SPECS = {
    "driver-missing": {"release": None, "repo_file": False},
    "driver-not-loaded": {"driver_loaded": False},
    "dkms-build": {"driver_loaded": False, "module_built": False, "headers": False},
    "driver-stale": {"loaded_version": "2.28.0.0"},
    "driver-runtime-mismatch": {"release": "2.28.1", "package_versions": {"aws-neuronx-runtime-lib": "2.32.31.0"}},
    "tools-missing": {"tools": False, "runtime_library": False},
    "device-missing": {"container": True, "device_nodes": 0, "instance_type": "trn1.32xlarge"},
    "device-permission": {"node_mode": 0o600},
    "cores-busy": {"holders": [Holder(12, "python", "python train.py", (0,))]},
    "hardware-error": {"ecc": {0: {"mem_ecc_uncorrected": 1}}},
    "os-unsupported": {"os": "al2"},
    "resource": {"instance_type": "trn1.32xlarge", "efa": False},
}


@pytest.mark.parametrize("category", sorted(FAILING_SPECS))
def test_cli_json_on_every_failing_fixture(venvs: VenvFactory, tmp_path: Path, category: str) -> None:
    root = build_host(tmp_path / "host", HostSpec(**FAILING_SPECS[category]))
    code, report, stderr = check_json(["--root", str(root), "--venv", str(release_venv(venvs, "2.31.1"))])
    assert category in {finding["category"] for finding in report["findings"]}
    assert "Traceback" not in stderr and report["errors"] == []
    assert code in (0, 1)


def test_runtime_newer_than_driver_without_a_documented_break_is_a_warning(catalog: ReleaseCatalog,
                                                                          tmp_path: Path) -> None:
    root = host(tmp_path, release="2.29.1", package_versions={"aws-neuronx-runtime-lib": "2.33.10.0",
                                                               "aws-neuronx-collectives": "2.33.10.0"})
    finding = ids(judge(catalog, root))["ND-RT-001"]
    assert (finding.severity, finding.fix_lines[0]) == (
        "warning", "sudo apt-get install -y --allow-change-held-packages 'aws-neuronx-dkms=2.29.0.0*'")
