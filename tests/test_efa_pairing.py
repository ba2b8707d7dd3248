"""Which Neuron device lost its EFA interface: fixture hosts whose PCI tree is laid out as on a
trn2.48xlarge (/sys/bus/pci/devices links into /sys/devices/pci0000:00/…, two devices and their two EFA functions
behind each PCIe switch). ND-RES-004 names the devices whose switch has no EFA left, only where the instance pairs
an interface with each device and only when interfaces are missing: a healthy node is never flagged for its tree."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import check_json, findings_by_id
from tests.host_fixture import HostSpec, build_host


def _efa(tmp_path: Path, **spec: Any) -> list[dict[str, Any]]:
    root = build_host(tmp_path / "root", HostSpec(pci_tree=True, **spec))
    _, document, _ = check_json(["--root", str(root)])
    assert len(document["facts"]["host"]["snapshot"]["pci"]) >= 1
    return findings_by_id(document).get("ND-RES-004", [])


def test_a_whole_trn2_tree_is_healthy(tmp_path: Path) -> None:
    root = build_host(tmp_path / "root", HostSpec(instance_type="trn2.48xlarge", pci_tree=True))
    _, document, _ = check_json(["--root", str(root)])
    snapshot = document["facts"]["host"]["snapshot"]
    assert snapshot["efa_functions"] == 16 and len(snapshot["efa_paths"]) == 16
    assert snapshot["pci"][0]["sysfs_path"] == "/sys/devices/pci0000:00/0000:00:01.0/0000:20:00.0/0000:21:00.0/" \
                                               "0000:22:00.0"
    assert "ND-RES-004" not in findings_by_id(document)


def test_a_switch_without_its_two_efa_names_its_two_devices(tmp_path: Path) -> None:
    [finding] = _efa(tmp_path, instance_type="trn2.48xlarge", efa_missing=(6, 7))
    assert finding["title"] == ("14 of 16 EFA interfaces on this trn2.48xlarge; no EFA behind the PCIe switch of the "
                                "Neuron device(s) at 0000:2e:00.0, 0000:2e:01.0")
    assert finding["evidence"]["unpaired_devices"] == ["0000:2e:00.0", "0000:2e:01.0"]


def test_one_of_a_switchs_two_efa_missing_leaves_both_devices_paired(tmp_path: Path) -> None:
    [finding] = _efa(tmp_path, instance_type="trn2.48xlarge", efa_missing=(6,))
    assert finding["title"] == "15 of 16 EFA interfaces on this trn2.48xlarge"
    assert finding["evidence"]["unpaired_devices"] == []


def test_trn1_pairs_no_interface_with_each_device(tmp_path: Path) -> None:
    """trn1.32xlarge: 8 EFA for 16 devices, so half the switches hold none on a healthy node."""
    assert _efa(tmp_path, instance_type="trn1.32xlarge") == []
    [finding] = _efa(tmp_path / "short", instance_type="trn1.32xlarge", efa_missing=(0,))
    assert finding["title"] == "7 of 8 EFA interfaces on this trn1.32xlarge"
    assert "unpaired_devices" not in finding["evidence"]


def test_a_flat_copy_of_the_tree_says_nothing_about_pairing(tmp_path: Path) -> None:
    root = build_host(tmp_path / "root", HostSpec(instance_type="trn1n.32xlarge", efa_missing=(3,)))
    _, document, _ = check_json(["--root", str(root)])
    [finding] = findings_by_id(document)["ND-RES-004"]
    assert finding["title"] == "15 of 16 EFA interfaces on this trn1n.32xlarge"
    assert "unpaired_devices" not in finding["evidence"]
