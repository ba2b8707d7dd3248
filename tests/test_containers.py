"""Containers: a root with /.dockerenv is an image whose driver is the host's. The image's runtime is
judged against the loaded driver; a DKMS package in the image is itself the finding; missing devices get the
`--device` fix. Images are shaped like the Neuron DLC Dockerfiles: runtime-lib, collectives and tools from the
Neuron apt repository, no aws-neuronx-dkms."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import check_json, cli_env, findings_by_id, run_cli
from tests.host_fixture import HOST_STACKS, HostSpec, build_host
from tests.neuron_envs import outside_venv
from tests.wheelhouse import VenvFactory


def test_a_dlc_image_on_a_host_with_the_driver_loaded_is_healthy(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "image", HostSpec(instance_type="trn1.32xlarge", container=True))
    code, report, _ = check_json(["--root", str(root), *outside_venv(venvs, "2.31.1")])
    assert report["findings"] == [] and code == 0
    driver = next(check for check in report["checks"] if check["id"] == "driver")
    assert driver["summary"].startswith("host driver 2.29.0.0 loaded (seen from this container")


def test_the_images_runtime_is_judged_against_the_hosts_loaded_driver(tmp_path: Path, venvs: VenvFactory) -> None:
    """A 2.32.0 image (runtime 2.34) on a host still loading the 2.26.1 driver (2.24.7.0)."""
    root = build_host(tmp_path / "image", HostSpec(release="2.32.0", container=True,
                                                   loaded_version=HOST_STACKS["2.26.1"][0]))
    _, report, _ = check_json(["--root", str(root), *outside_venv(venvs, "2.32.0")])
    finding = findings_by_id(report)["ND-RT-001"][0]
    assert finding["category"] == "driver-runtime-mismatch" and "driver 2.24.7.0" in finding["title"]
    assert finding["fix"][0] == "# on the host, not in this container:"
    assert "ND-DRV-001" not in findings_by_id(report) and "ND-DRV-003" not in findings_by_id(report)


def test_a_dkms_package_inside_the_image_is_the_finding(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "image", HostSpec(container=True, image_dkms=True, module_built=False,
                                                   dpkg_states={"aws-neuronx-dkms": "install ok half-configured"}))
    _, report, _ = check_json(["--root", str(root), *outside_venv(venvs)])
    found = findings_by_id(report)
    finding = found["ND-DRV-004"][0]
    assert finding["category"] == "dkms-build" and finding["severity"] == "warning"  # the host's driver works
    assert "inside this container image, where it cannot build or load" in finding["title"]
    assert not {"ND-DRV-001", "ND-DKMS-001", "ND-DKMS-002", "ND-DRV-003"} & set(found)


def test_a_container_on_a_host_without_a_loaded_driver(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "image", HostSpec(container=True, driver_loaded=False))
    code, report, _ = check_json(["--root", str(root), *outside_venv(venvs)])
    finding = findings_by_id(report)["ND-DRV-001"][0]
    assert finding["title"] == "this is a container and the host has no Neuron driver loaded"
    assert finding["fix"][0] == "# on the host, not in this container:" and code == 1


def test_near_miss_a_host_that_is_not_a_container_still_needs_its_package(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "host", HostSpec(package_versions={"aws-neuronx-dkms": None}, driver_loaded=False))
    finding = findings_by_id(check_json(["--root", str(root), *outside_venv(venvs)])[1])["ND-DRV-001"][0]
    assert finding["title"].startswith("no Neuron driver installed")


def test_a_kubernetes_pod_without_devices_gets_the_device_plugin_fix(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "pod", HostSpec(instance_type="trn1.32xlarge", container=True, device_nodes=0))
    (root / "var/run/secrets/kubernetes.io/serviceaccount").mkdir(parents=True)
    finding = findings_by_id(check_json(["--root", str(root), *outside_venv(venvs)])[1])["ND-DEV-001"][0]
    assert finding["title"] == "0 of 16 Neuron device nodes present in this pod"
    assert finding["fix"][0] == "# in the pod spec: resources: {limits: {aws.amazon.com/neuron: 16}}"
    assert finding["fix"][1].startswith("helm upgrade --install neuron-helm-chart")
    with_devices = build_host(tmp_path / "pod-ok", HostSpec(instance_type="trn1.32xlarge", container=True))
    (with_devices / "var/run/secrets/kubernetes.io/serviceaccount").mkdir(parents=True)
    assert "ND-DEV-001" not in findings_by_id(check_json(["--root", str(with_devices), *outside_venv(venvs)])[1])


def test_a_container_given_one_device_of_sixteen_is_a_share_not_a_fault(tmp_path: Path, venvs: VenvFactory) -> None:
    """A public report (tests/recorded/neuron-ls/trn2.48xlarge-one-device-runtime-2.34.10.txt): a container on a
    trn2.48xlarge running vLLM on the one device it was given, while sysfs and PCI show all 16. That is an info (a
    job sized for 16 devices would not fit), never an error, and `health` stays ok; a pod with none is an error."""
    root = build_host(tmp_path / "one", HostSpec(instance_type="trn2.48xlarge", release="2.32.0", container=True,
                                                 device_nodes=1))
    _, report, _ = check_json(["--root", str(root), *outside_venv(venvs)])
    [finding] = findings_by_id(report)["ND-DEV-001"]
    assert (finding["severity"], finding["title"]) == ("info", "this container has 1 of the 16 Neuron devices")
    health = run_cli(["health", "--root", str(root), "--json"])
    assert health.returncode == 0, health.stdout
    (root / "var/run/secrets/kubernetes.io/serviceaccount").mkdir(parents=True)
    [in_pod] = findings_by_id(check_json(["--root", str(root), *outside_venv(venvs)])[1])["ND-DEV-001"]
    assert (in_pod["severity"], in_pod["title"]) == ("info", "this pod has 1 of the 16 Neuron devices")
    assert in_pod["fix"][0] == "# in the pod spec: resources: {limits: {aws.amazon.com/neuron: 16}}"


@pytest.mark.parametrize(("instance_type", "release", "given", "visible", "fix"), [
    # the scheduler extension's own example: `--device=/dev/neuron1 --env NEURON_RT_VISIBLE_CORES=2,3` (trn1: 2 cores
    # per device); the same container told to use cores 0-1 asks the runtime for /dev/neuron0
    ("trn1.32xlarge", "2.31.1", (1,), "2-3", None),
    ("trn1.32xlarge", "2.31.1", (1,), "0-1", "export NEURON_RT_VISIBLE_CORES=2-3"),
    ("trn1.32xlarge", "2.31.1", (1, 2), "2-5", None),
    ("trn1.32xlarge", "2.31.1", (1, 2), "2-7", "export NEURON_RT_VISIBLE_CORES=2-3,4-5"),
    # the public trn2.48xlarge report: one device in a container, 4 logical cores per device at LNC=2
    ("trn2.48xlarge", "2.32.0", (0,), "0-3", None),
    ("trn2.48xlarge", "2.32.0", (0,), "4-7", "export NEURON_RT_VISIBLE_CORES=0-3"),
])
def test_visible_cores_of_a_device_the_container_was_not_given(tmp_path: Path, instance_type: str, release: str,
                                                                given: tuple[int, ...], visible: str,
                                                                fix: str | None) -> None:
    """Core indexes are the instance's (the device plugin passes /dev/neuron1 with NEURON_RT_VISIBLE_CORES=2,3):
    in a container given some devices, cores of another device make the runtime fail to open it (`Could not open
    the nd0`). A warning: the share is the scheduler's."""
    root = build_host(tmp_path / "c", HostSpec(instance_type=instance_type, release=release, container=True,
                                               device_nodes=max(given) + 1))
    for index in range(max(given) + 1):
        if index not in given:
            (root / f"dev/neuron{index}").unlink()
    _, report, _ = check_json(["--root", str(root), "--select", "host-env"],
                              env=cli_env({"NEURON_RT_VISIBLE_CORES": visible}))
    found = findings_by_id(report).get("ND-ENV-001", [])
    if fix is None:
        assert found == [], found
        return
    [finding] = found
    assert finding["severity"] == "warning" and finding["fix"] == [fix], finding
    assert "which this container was not given" in finding["title"]
    health = run_cli(["health", "--root", str(root), "--json"], env=cli_env({"NEURON_RT_VISIBLE_CORES": visible}))
    assert json.loads(health.stdout)["health"]["state"] == "degraded", health.stdout


def test_visible_cores_on_a_host_with_all_devices_are_judged_only_against_the_host(tmp_path: Path) -> None:
    """Near miss: the same value outside a container, or in one given every device, is fine."""
    root = build_host(tmp_path / "h", HostSpec(instance_type="trn1.32xlarge", release="2.31.1"))
    _, report, _ = check_json(["--root", str(root), "--select", "host-env"],
                              env=cli_env({"NEURON_RT_VISIBLE_CORES": "0-1"}))
    assert "ND-ENV-001" not in findings_by_id(report)
