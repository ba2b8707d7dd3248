"""Container nodes: Bottlerocket and the EKS and ECS optimized AMIs carry the Neuron driver (and perhaps the tools
and the OCI hook); the runtime, compiler and frameworks come in the containers they run. Such a node is judged by
that purpose: clean when the driver is loaded and the devices are there, its runtime and Python areas "not on this
node", and a driver that lags the SDK is information naming its release and the image's way forward.

The node images are the published ones (tests/host_fixture.py: BOTTLEROCKET_OS_RELEASE, EKS_RELEASE, the ECS
comment): Bottlerocket's driver versions are those `modinfo neuron` printed in bottlerocket-kernel-kit pull requests
(tests/recorded/modinfo/SOURCES.md); the EKS accelerated AMI of July 2026 ships aws-neuronx-dkms 2.29.0.0
(awslabs/amazon-eks-ami CHANGELOG, v20260714). Every failure has a near miss beside it that stays clean.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import check_json, cli_env, findings_by_id
from tests.host_fixture import Holder, HostSpec, build_host

# Bottlerocket inf2.xlarge with the 2.26.10.0 driver (bottlerocket-kernel-kit pull request 389; kernel 6.1 as in
# pull request 377's filename line, the module stored as neuron.ko.gz by kmod-6.1-neuron.spec)
BOTTLEROCKET_INF2 = {"instance_type": "inf2.xlarge", "release": "2.28.1", "kernel": "6.1.161", "node": "bottlerocket"}
EKS_TRN1 = {"instance_type": "trn1.32xlarge", "release": "2.31.1", "os": "al2023", "node": "eks",
            "kernel": "6.12.40-63.114.amzn2023.x86_64"}
ECS_INF2 = {"instance_type": "inf2.xlarge", "release": "2.33.1", "os": "al2023", "node": "ecs",
            "kernel": "6.1.158-180.294.amzn2023.x86_64"}

_REBOOT = ("# reboot the node (Bottlerocket loads the Neuron driver and makes /dev again at boot); if {}, replace the "
           "node")


def _check(tmp_path: Path, **spec: Any) -> tuple[int, dict[str, Any]]:
    root = build_host(tmp_path / "node", HostSpec(**spec))
    code, report, _ = check_json(["--root", str(root)], env=cli_env({"HOME": str(tmp_path / "operator")}))
    return code, report


def _summary(report: dict[str, Any], check_id: str) -> str:
    return str(next(check["summary"] for check in report["checks"] if check["id"] == check_id))


def _severities(report: dict[str, Any]) -> list[str]:
    return [finding["severity"] for finding in report["findings"]]


def test_a_bottlerocket_node_with_its_kernel_kits_driver_is_healthy(tmp_path: Path) -> None:
    code, report = _check(tmp_path, **BOTTLEROCKET_INF2)
    assert code == 0 and report["health"]["state"] == "ok"
    assert [finding["id"] for finding in report["findings"]] == ["ND-DRV-005"]
    info = report["findings"][0]
    assert info["severity"] == "info" and "Neuron 2.28.1 (2.26.10.0)" in info["title"]
    assert "containers of Neuron 2.30.0 or newer" in info["detail"]  # runtime 2.32 needs driver 2.27 (runtime.rst)
    assert info["fix"] == ["# update the node to a newer Bottlerocket release: its kernel kit carries the newer "
                           "driver (replace the node group's nodes, or Bottlerocket's in-place update)"]
    role = report["facts"]["host"]["snapshot"]["node_role"]
    assert role["platform"] == "bottlerocket" and role["name"] == "Bottlerocket node (aws-k8s-1.33)"
    module = report["facts"]["host"]["snapshot"]["driver_module"]
    assert module == {"path": "/lib/modules/6.1.161/kernel/drivers/neuron/neuron.ko.gz", "version": "2.26.10.0",
                      "problem": None}
    assert _summary(report, "runtime") == "not on this node: the runtime and collectives run in its containers"
    for area in ("python-env", "pytorch-stack", "pip-index"):
        assert _summary(report, area).startswith("not on this node: Python environments run in its containers")
    assert "ND-OS-001" not in findings_by_id(report)  # Bottlerocket is no OS the runtime's table lists: not judged


def test_near_miss_the_same_driver_only_packages_on_a_plain_ubuntu_host(tmp_path: Path) -> None:
    """No image says it is a container node, and no OCI hook: a host without its runtime is missing it."""
    _, report = _check(tmp_path, runtime_library=False, collectives_library=False,
                       package_versions={"aws-neuronx-runtime-lib": None, "aws-neuronx-collectives": None})
    assert report["facts"]["host"]["snapshot"]["node_role"] is None
    assert [finding["severity"] for finding in findings_by_id(report)["ND-RT-003"]] == ["error"]


def test_a_host_with_the_oci_hook_and_no_runtime_is_a_container_host(tmp_path: Path) -> None:
    """The Neuron OCI hook hands devices to containers that bring their runtime (containers/tutorials/
    tutorial-oci-hook): such a host is clean without aws-neuronx-runtime-lib."""
    _, report = _check(tmp_path, release="2.33.1", runtime_library=False, collectives_library=False,
                       package_versions={"aws-neuronx-runtime-lib": None, "aws-neuronx-collectives": None},
                       extra_packages={"aws-neuronx-oci-hook": "2.19.74.0"})
    assert report["facts"]["host"]["snapshot"]["node_role"]["platform"] == "oci-hook"
    assert report["findings"] == [] and report["health"]["state"] == "ok"


def test_an_eks_accelerated_ami_node_of_july_2026_is_explained_not_alarmed(tmp_path: Path) -> None:
    code, report = _check(tmp_path, **EKS_TRN1)
    assert code == 0 and report["health"]["state"] == "ok"
    assert [finding["id"] for finding in report["findings"]] == ["ND-DRV-005"]
    info = report["findings"][0]
    assert "Neuron 2.31.0/2.31.1 (2.29.0.0); Neuron 2.33.1 ships 2.31.8.0" in info["title"]
    # driver 2.29 refuses runtimes before 2.33 (runtime.rst 2.31): containers of 2.30.0 and older fail on it
    assert "containers of Neuron 2.30.0 or older" in info["detail"]
    assert info["fix"][0].startswith("# move the node group to a newer EKS optimized accelerated AMI")
    assert _summary(report, "runtime").endswith("; tools 2.31.15.0")
    assert report["facts"]["host"]["snapshot"]["node_role"]["evidence"] == ["/etc/eks/release",
                                                                            "/etc/eks/neuron-kmod-load.sh"]


def test_near_miss_an_eks_node_with_the_runtime_installed_is_a_full_host(tmp_path: Path) -> None:
    """Someone installed runtime-lib and collectives on the node: it runs the stack itself, judged as a host."""
    root = build_host(tmp_path / "node", HostSpec(**EKS_TRN1))  # type: ignore[arg-type]
    (root / "opt/aws/neuron/lib").mkdir(parents=True, exist_ok=True)
    (root / "opt/aws/neuron/lib/libnrt.so.1").write_text("ELF")
    _, report, _ = check_json(["--root", str(root)], env=cli_env({"HOME": str(tmp_path / "operator")}))
    assert report["facts"]["host"]["snapshot"]["node_role"] is None
    assert "ND-DRV-005" not in findings_by_id(report)
    assert _summary(report, "runtime") != "not on this node: the runtime and collectives run in its containers"


def test_an_ecs_neuron_ami_node_on_the_current_release_is_clean(tmp_path: Path) -> None:
    code, report = _check(tmp_path, **ECS_INF2)
    assert code == 0 and report["findings"] == [] and report["health"]["state"] == "ok"
    role = report["facts"]["host"]["snapshot"]["node_role"]
    assert role["platform"] == "ecs" and "aws-neuronx-oci-hook 2.19.74.0 installed" in role["evidence"]


def test_bottlerocket_with_the_module_not_loaded(tmp_path: Path) -> None:
    code, report = _check(tmp_path, **BOTTLEROCKET_INF2, driver_loaded=False)
    finding = findings_by_id(report)["ND-DRV-002"][0]
    assert finding["severity"] == "error" and code == 1
    assert "/lib/modules/6.1.161/kernel/drivers/neuron/neuron.ko.gz" in finding["title"]
    assert finding["fix"] == [_REBOOT.format("the module is still not loaded")]
    assert "ND-DRV-001" not in findings_by_id(report)  # the driver is there: not "no driver installed"


def test_near_miss_bottlerocket_with_the_module_loaded(tmp_path: Path) -> None:
    _, report = _check(tmp_path, **BOTTLEROCKET_INF2)
    assert "ND-DRV-002" not in findings_by_id(report) and "error" not in _severities(report)


def test_bottlerocket_without_the_neuron_driver(tmp_path: Path) -> None:
    """An nvidia variant carries no Neuron kernel kit module (kmod-6.1-neuron.spec conflicts with that flavor)."""
    root = build_host(tmp_path / "node", HostSpec(**{**BOTTLEROCKET_INF2, "variant": "aws-k8s-1.33-nvidia"},
                                                  driver_loaded=False))  # type: ignore[arg-type]
    for module in root.rglob("neuron.ko*"):
        module.unlink()
    _, report, _ = check_json(["--root", str(root)], env=cli_env({"HOME": str(tmp_path / "operator")}))
    finding = findings_by_id(report)["ND-DRV-001"][0]
    assert "aws-k8s-1.33-nvidia" in finding["title"]
    assert finding["fix"] == ["# launch this node from a Bottlerocket aws-k8s or aws-ecs variant that is not an "
                              "nvidia one"]


def test_near_miss_bottlerocket_on_an_instance_without_neuron(tmp_path: Path) -> None:
    """Every aws variant stores the kernel kit's module; on an m7i nothing Neuron is judged."""
    code, report = _check(tmp_path, **{**BOTTLEROCKET_INF2, "instance_type": "m7i.xlarge"}, driver_loaded=False)
    assert code == 0 and report["findings"] == []


def test_bottlerocket_devices_missing(tmp_path: Path) -> None:
    _, report = _check(tmp_path, **BOTTLEROCKET_INF2, device_nodes=0)
    assert [finding["severity"] for finding in findings_by_id(report)["ND-DEV-001"]] == ["error"]


def test_a_zst_module_without_a_sysfs_version_is_not_known_in_one_line(tmp_path: Path) -> None:
    """Python 3.11's standard library has no zstd decoder: loaded, with no /sys/module/neuron/version in the
    snapshot, the driver's version is said not to be known, and nothing is alarmed."""
    code, report = _check(tmp_path, **BOTTLEROCKET_INF2, module_suffix=".zst", sysfs_version=False)
    assert code == 0 and report["findings"] == [] and report["health"]["state"] == "ok"
    summary = _summary(report, "driver")
    assert "loaded, its version not shown" in summary
    assert ("the version of /lib/modules/6.1.161/kernel/drivers/neuron/neuron.ko.zst is not known: it is "
            "zstd-compressed, which Python's standard library cannot read, kernel 6.1.161: built for it") in summary


def test_near_miss_a_gz_module_without_a_sysfs_version_is_read_from_the_file(tmp_path: Path) -> None:
    _, report = _check(tmp_path, **BOTTLEROCKET_INF2, sysfs_version=False)
    assert [finding["id"] for finding in report["findings"]] == ["ND-DRV-005"]
    assert report["findings"][0]["evidence"]["read_from"].endswith("/neuron.ko.gz")
    assert "module /lib/modules/6.1.161/kernel/drivers/neuron/neuron.ko.gz 2.26.10.0" in _summary(report, "driver")


def test_a_node_driver_older_than_any_release_the_data_knows(tmp_path: Path) -> None:
    """Neuron 2.3.0's 2.5.41.0 is the oldest driver AWS's manifest lists; one before it is of unknown use."""
    code, report = _check(tmp_path, **BOTTLEROCKET_INF2, loaded_version="2.4.8.0")
    warning = findings_by_id(report)["ND-DRV-006"][0]
    assert warning["severity"] == "warning" and warning["category"] == "unknown-version"
    assert "older than any release the data knows" in warning["title"]
    assert "2.5.41.0 (Neuron 2.3.0)" in warning["detail"] and code == 0


def test_near_miss_the_oldest_driver_the_data_knows(tmp_path: Path) -> None:
    _, report = _check(tmp_path, **BOTTLEROCKET_INF2, loaded_version="2.5.41.0")
    assert "ND-DRV-006" not in findings_by_id(report)
    assert [finding["severity"] for finding in findings_by_id(report)["ND-DRV-005"]] == ["info"]


# Bottlerocket on inf1.xlarge: the kernel kit's Inf1 build (kmod-6.1-neuron.spec `neuron_2_24`), 2.24.13.0 in pull
# request 389 and 2.21.37.0 in pull request 250; drivers after 2.24 do not support Inf1
# (announce-correction-neuron-driver-support-inf1), so the way forward there is the 2.24 line, not the newest release.
BOTTLEROCKET_INF1 = {"instance_type": "inf1.xlarge", "release": None, "kernel": "6.1.161", "node": "bottlerocket",
                     "module_recording": "bottlerocket-inf1-2.24.13.0.txt"}


def test_an_inf1_bottlerocket_node_on_an_older_inf1_driver(tmp_path: Path) -> None:
    _, report = _check(tmp_path, **BOTTLEROCKET_INF1, loaded_version="2.21.37.0")
    info = findings_by_id(report)["ND-DRV-005"][0]
    assert info["severity"] == "info" and info["title"].endswith("the newest driver for Inf1 is 2.24.7.0")
    assert "Neuron 2.33.1" not in info["title"] and "error" not in _severities(report)


def test_near_miss_an_inf1_bottlerocket_node_on_the_2_24_line(tmp_path: Path) -> None:
    """2.24.13.0, the Inf1 patch for kernel 6.18 (Neuron facts §9), is newer than any 2.24 the release data lists:
    not behind, not judged."""
    _, report = _check(tmp_path, **BOTTLEROCKET_INF1, loaded_version="2.24.13.0")
    assert "ND-DRV-005" not in findings_by_id(report) and "ND-DRV-006" not in findings_by_id(report)
    assert "error" not in _severities(report) and "warning" not in _severities(report)


def test_near_miss_a_removed_packages_leftover_module_is_no_driver(tmp_path: Path) -> None:
    """On Ubuntu (a package database) a neuron.ko left in updates/dkms after aws-neuronx-dkms was removed is not an
    installed driver: ND-DRV-001 with the install, not ND-DRV-002."""
    root = build_host(tmp_path / "node", HostSpec(package_versions={"aws-neuronx-dkms": None}, driver_loaded=False))
    (root / "lib/modules/6.8.0-1015-aws/updates/dkms").mkdir(parents=True)
    (root / "lib/modules/6.8.0-1015-aws/updates/dkms/neuron.ko").write_bytes(b"\x7fELF")
    _, report, _ = check_json(["--root", str(root)], env=cli_env({"HOME": str(tmp_path / "operator")}))
    assert "ND-DRV-001" in findings_by_id(report) and "ND-DRV-002" not in findings_by_id(report)


# The ECS and EKS images' Inf1 pin (tests/host_fixture.py IMAGE_INF1_PINS): at boot on Inf1 each installs the
# aws-neuronx-dkms-2.21.* package it cached at build time (2.21.37.0, the newest 2.21 the release data lists).
ECS_INF1 = {**ECS_INF2, "instance_type": "inf1.6xlarge", "inf1_pin": True,
            "package_versions": {"aws-neuronx-dkms": "2.21.37.0"}, "loaded_version": "2.21.37.0"}


def test_an_ecs_inf1_node_on_the_driver_its_image_pins_is_explained_not_alarmed(tmp_path: Path) -> None:
    code, report = _check(tmp_path, **ECS_INF1)
    assert code == 0 and set(_severities(report)) == {"info"}, report["findings"]
    (finding,) = findings_by_id(report)["ND-DRV-005"]
    assert finding["title"] == ("this ECS node (ECS optimized AMI) runs the driver its image puts on Inf1, 2.21.37.0 "
                                "(Neuron 2.23.0's); the newest driver for Inf1 is 2.24.7.0")
    assert finding["evidence"]["image_inf1_pin"] == {
        "unit": "neuron-inf1-downgrade.service", "script": "/var/lib/ecs/scripts/neuron-inf1-downgrade.sh",
        "cached": ["2.21.37.0"]}
    assert "announce-correction-neuron-driver-support-inf1" in finding["detail"]
    assert all(line.startswith("#") for line in finding["fix"]) and "update-pciids" in finding["fix"][1]


def test_an_eks_inf1_node_on_the_driver_its_image_pins(tmp_path: Path) -> None:
    code, report = _check(tmp_path, **{**EKS_TRN1, **{key: ECS_INF1[key] for key in (
        "instance_type", "inf1_pin", "package_versions", "loaded_version")}})
    assert code == 0 and set(_severities(report)) == {"info"}, report["findings"]
    (finding,) = findings_by_id(report)["ND-DRV-005"]
    assert finding["evidence"]["image_inf1_pin"]["unit"] == "neuron-package-install.service"
    assert finding["evidence"]["image_inf1_pin"]["cached"] == ["2.21.37.0"]


def test_an_ecs_inf1_node_whose_pin_did_not_run_is_told_to_run_the_images_service(tmp_path: Path) -> None:
    code, report = _check(tmp_path, **{**ECS_INF1, "package_versions": {}, "loaded_version": None})
    assert code == 1
    (finding,) = findings_by_id(report)["ND-INST-002"]
    assert "sudo systemctl restart neuron-inf1-downgrade.service" in finding["fix"]
    assert finding["fix"][0].startswith("# first set this container instance to DRAINING")
    assert "neuron-inf1-downgrade.service" in finding["detail"]


def test_near_miss_an_ecs_inf2_node_with_the_images_inf1_service_is_clean(tmp_path: Path) -> None:
    """Every ECS Neuron AMI carries the Inf1 service; on Inf2 it does nothing and the node is current."""
    code, report = _check(tmp_path, **{**ECS_INF2, "inf1_pin": True})
    assert code == 0 and report["findings"] == [], report["findings"]


def test_near_miss_an_inf1_ecs_node_without_the_images_service_keeps_the_plain_wording(tmp_path: Path) -> None:
    code, report = _check(tmp_path, **{**ECS_INF1, "inf1_pin": False})
    assert code == 0
    (finding,) = findings_by_id(report)["ND-DRV-005"]
    assert finding["title"].startswith("this ECS node (ECS optimized AMI) runs the driver of Neuron 2.23.0")
    assert "image_inf1_pin" not in finding["evidence"]
# --- the fixes a container node can run ---------------------------------------------------------------------------
# Bottlerocket has "No shell or interpreters installed", an "Immutable rootfs backed by dm-verity" and a "Stateless
# tmpfs for /etc" (bottlerocket-os/bottlerocket SECURITY_FEATURES.md): no `sudo rmmod`, `chmod` or udev rule runs or
# lasts there; it loads the module at boot (load-neuron-latest-modules.service). The EKS and ECS AMIs run the
# commands, but their containers hold the devices, and a node launched again from the image keeps the image's files.

def _fix(report: dict[str, Any], finding_id: str) -> list[str]:
    return list(findings_by_id(report)[finding_id][0]["fix"])


def test_bottlerocket_devices_missing_is_fixed_by_a_reboot_not_rmmod(tmp_path: Path) -> None:
    _, report = _check(tmp_path, **BOTTLEROCKET_INF2, device_nodes=0)
    assert _fix(report, "ND-DEV-001") == [_REBOOT.format("devices are still missing")]


def test_near_miss_devices_missing_on_a_plain_host_keep_the_reload(tmp_path: Path) -> None:
    _, report = _check(tmp_path, instance_type="inf2.xlarge", release="2.33.1", device_nodes=0)
    assert _fix(report, "ND-DEV-001") == ["sudo rmmod neuron", "sudo modprobe neuron", "ls -l /dev/neuron*"]


def test_an_eks_node_drains_its_pods_before_the_driver_reload(tmp_path: Path) -> None:
    _, report = _check(tmp_path, **EKS_TRN1, device_nodes=0)
    assert _fix(report, "ND-DEV-001") == [
        "# first move this node's pods away: kubectl drain NODE --ignore-daemonsets (kubectl uncordon NODE after)",
        "sudo rmmod neuron", "sudo modprobe neuron", "ls -l /dev/neuron*", "# or reboot the node"]
    _, stale = _check(tmp_path / "stale", **EKS_TRN1, loaded_version="2.24.7.0")
    assert _fix(stale, "ND-DRV-003")[0].startswith("# first move this node's pods away")
    assert _fix(stale, "ND-DRV-003")[-1] == "# or reboot the node"


def test_an_ecs_node_drains_its_tasks_and_loads_the_module_as_its_image_does(tmp_path: Path) -> None:
    _, report = _check(tmp_path, **ECS_INF2, driver_loaded=False)
    assert _fix(report, "ND-DRV-002") == [
        "sudo modprobe neuron", "# the node's image loads the driver at boot: if it is not loaded after the next "
        "boot, replace the node or move to the image's next release"]
    _, stale = _check(tmp_path / "stale", **ECS_INF2, loaded_version="2.24.7.0")
    assert _fix(stale, "ND-DRV-003")[0].startswith("# first set this container instance to DRAINING")


def test_near_miss_a_plain_host_not_loading_its_driver_writes_modules_load(tmp_path: Path) -> None:
    _, report = _check(tmp_path, instance_type="inf2.xlarge", release="2.33.1", driver_loaded=False)
    assert _fix(report, "ND-DRV-002") == ["sudo modprobe neuron",
                                          "echo neuron | sudo tee /etc/modules-load.d/neuron.conf"]


def test_device_permissions_on_bottlerocket_and_on_an_eks_node(tmp_path: Path) -> None:
    _, bottlerocket = _check(tmp_path, **BOTTLEROCKET_INF2, node_mode=0o600)
    assert _fix(bottlerocket, "ND-DEV-002") == [_REBOOT.format("the mode stays")]
    _, eks = _check(tmp_path / "eks", **EKS_TRN1, node_mode=0o600)
    lines = _fix(eks, "ND-DEV-002")
    assert lines[0].startswith("sudo chmod 0666 /dev/neuron0") and lines[-1].startswith(
        "# a node launched again from its image does not keep this change")


def test_hardware_errors_on_bottlerocket_are_handled_from_outside_the_node(tmp_path: Path) -> None:
    _, report = _check(tmp_path, **BOTTLEROCKET_INF2, ecc={0: {"sram_ecc_uncorrected": 2}})
    assert _fix(report, "ND-HW-001") == ["# from a machine with the AWS CLI, stop and start this instance (or "
                                         "replace the node): its id is not known here"]
    _, eks = _check(tmp_path / "eks", **EKS_TRN1, ecc={0: {"sram_ecc_uncorrected": 2}})
    assert _fix(eks, "ND-HW-001")[0].startswith("aws ec2 stop-instances")  # AL2023 has the CLI and a shell


def test_hardware_errors_on_bottlerocket_with_its_instance_id_read(tmp_path: Path) -> None:
    """With the id read from DMI (the Nitro board asset tag), the stop and start runs anywhere the AWS CLI is."""
    root = build_host(tmp_path / "node", HostSpec(**BOTTLEROCKET_INF2, ecc={0: {"sram_ecc_uncorrected": 2}}))
    (root / "sys/devices/virtual/dmi/id/board_asset_tag").write_text("i-0592464924bd45322\n")
    _, report, _ = check_json(["--root", str(root)], env=cli_env({"HOME": str(tmp_path / "operator")}))
    assert _fix(report, "ND-HW-001") == [
        "# from a machine with the AWS CLI (not on this node), or replace the node:",
        "aws ec2 stop-instances --instance-ids i-0592464924bd45322 && aws ec2 wait instance-stopped --instance-ids "
        "i-0592464924bd45322 && aws ec2 start-instances --instance-ids i-0592464924bd45322"]


def test_a_container_node_in_use_is_not_degraded_by_its_containers(tmp_path: Path) -> None:
    """A pod's process holding a device is the node in use (as a Slurm job's is): an info naming it, never a
    warning that degrades the node; the way to free it is through the orchestrator."""
    holder = [Holder(4121, "python3", "python3 -m vllm.entrypoints.openai.api_server", (0,))]
    code, report = _check(tmp_path, **BOTTLEROCKET_INF2, holders=holder)
    finding = findings_by_id(report)["ND-DEV-003"][0]
    assert finding["severity"] == "info" and code == 0 and report["health"]["state"] == "ok"
    assert finding["fix"] == ["# stop the pod, task or container that runs these processes (a process killed here "
                              "is started again by its orchestrator)"]
    _, eks = _check(tmp_path / "eks", **EKS_TRN1, holders=holder)
    assert _fix(eks, "ND-DEV-003")[1:] == ["# or for a process no orchestrator started (not in a container):",
                                           "kill 4121"]


def test_near_miss_a_holder_on_a_plain_host_is_still_a_warning(tmp_path: Path) -> None:
    holder = [Holder(4121, "python3", "python3 -m ipykernel_launcher", (0,))]
    _, report = _check(tmp_path, instance_type="inf2.xlarge", release="2.33.1", holders=holder)
    finding = findings_by_id(report)["ND-DEV-003"][0]
    assert finding["severity"] == "warning" and finding["fix"] == ["kill 4121"]


# --- kernel minimums and the Inf1 driver line on a node whose driver is its image's module -----------------------
# The driver's minimum kernel (5.10: announce-no-support-al2.rst, compat.json minimum_kernel) and the Inf1 line
# (drivers above 2.24 do not support Inf1: announce-correction-neuron-driver-support-inf1.rst) are about the driver,
# however it was built: they apply to Bottlerocket's module. DKMS's kernel limits do not (the image built the module
# for its kernel), and the driver's OS tables list no Bottlerocket: whether this kernel is tested is not known.


def _driver_summary(report: dict[str, Any]) -> str:
    return _summary(report, "driver")


def test_an_inf1_bottlerocket_node_whose_image_carries_a_driver_after_the_inf1_line(tmp_path: Path) -> None:
    code, report = _check(tmp_path, **{**BOTTLEROCKET_INF1, "module_recording": "bottlerocket-inf2-2.26.10.0.txt"},
                          loaded_version="2.26.10.0")
    finding = findings_by_id(report)["ND-INST-002"][0]
    assert finding["severity"] == "error" and code == 1
    assert finding["title"] == ("the Neuron driver 2.26.10.0 of this node's image does not support Inf1; the last "
                                "driver that does is 2.24.*")
    assert finding["evidence"]["read_from"] == "the Neuron driver (/sys/module/neuron/version)"
    assert finding["fix"] == ["# launch this node from an image release whose driver is of the Inf1 line 2.24 (the "
                              "EKS and ECS AMIs and Bottlerocket pin Inf1 nodes to such a driver)"]


def test_near_miss_an_inf1_bottlerocket_node_on_the_inf1_line_is_not_judged_too_new(tmp_path: Path) -> None:
    _, report = _check(tmp_path, **BOTTLEROCKET_INF1, loaded_version="2.24.13.0")
    assert "ND-INST-002" not in findings_by_id(report)


def test_an_inf1_eks_node_with_a_newer_driver_package_drains_and_installs_the_inf1_line(tmp_path: Path) -> None:
    _, report = _check(tmp_path, **{**EKS_TRN1, "instance_type": "inf1.xlarge"})
    assert _fix(report, "ND-INST-002") == [
        "# first move this node's pods away: kubectl drain NODE --ignore-daemonsets (kubectl uncordon NODE after)",
        "sudo dnf install -y 'aws-neuronx-dkms-2.24.*'", "sudo rmmod neuron", "sudo modprobe neuron",
        "# a node launched again from its image does not keep this change: make it in the image (the node group's "
        "AMI or launch template), or move to the image's next release"]


def test_a_bottlerocket_kernel_below_the_drivers_minimum(tmp_path: Path) -> None:
    code, report = _check(tmp_path, **{**BOTTLEROCKET_INF2, "kernel": "5.4.280"})
    finding = findings_by_id(report)["ND-OS-002"][0]
    assert finding["severity"] == "error" and code == 1 and finding["evidence"]["release"] == "2.28.1"
    assert finding["fix"] == ["# launch this node from an image release whose kernel is 5.10 or newer"]


def test_near_miss_a_bottlerocket_kernel_above_the_minimum_is_said_not_known_in_the_tables(tmp_path: Path) -> None:
    code, report = _check(tmp_path, **BOTTLEROCKET_INF2)
    assert "ND-OS-002" not in findings_by_id(report) and code == 0
    assert _driver_summary(report).endswith("kernel 6.1.161: built for it by the image; whether Neuron tests this "
                                            "driver on it is not known (the driver's OS tables do not list this OS)")


def test_near_miss_an_eks_node_with_its_package_says_nothing_of_the_tables(tmp_path: Path) -> None:
    """The EKS node's driver is a package on Amazon Linux 2023, an OS the driver's tables list: nothing not known."""
    _, report = _check(tmp_path, **EKS_TRN1)
    assert "not known" not in _driver_summary(report)

