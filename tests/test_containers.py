"""Containers (issue 11 §2): a root with /.dockerenv is an image whose driver is the host's. The image's runtime is
judged against the loaded driver; a DKMS package in the image is itself the finding; missing devices get the
`--device` fix. Images are shaped like the Neuron DLC Dockerfiles: runtime-lib, collectives and tools from the
Neuron apt repository, no aws-neuronx-dkms."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import check_json, findings_by_id, run_cli
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
