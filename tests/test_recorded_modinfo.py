"""Driver versions as `modinfo neuron` printed them on real hosts (tests/recorded/modinfo/).

The `version:` line is what `/sys/module/neuron/version` shows for the loaded module, where the doctor reads it.
Each recorded version goes there, under a container whose image carries Neuron 2.30.0's runtime (2.32.31.0): a
release's driver older than 2.27 is the documented incompatible pair (runtime.rst 2.30), and `2.x.<build>.0`, which
names no release, is compared with nothing and said so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from neurondoctor.neuron_version import names_a_release
from tests.conftest import check_json, empty_folder, findings_by_id
from tests.host_fixture import HostSpec, build_host

RECORDED = Path(__file__).parent / "recorded" / "modinfo"
# file -> (the version line, whether it names a release, the sysfs layout the doctor reads for it)
EXPECTED = {
    "bottlerocket-inf1-2.21.37.0.txt": ("2.21.37.0", True, "classic"),
    "bottlerocket-trn1-2.23.9.0.txt": ("2.23.9.0", True, "classic"),
    "bottlerocket-inf1-2.24.13.0.txt": ("2.24.13.0", True, "classic"),
    "bottlerocket-2.26.5.0.txt": ("2.26.5.0", True, "classic"),
    "bottlerocket-inf2-2.26.10.0.txt": ("2.26.10.0", True, "classic"),
    "bottlerocket-2.x.7693.0.txt": ("2.x.7693.0", False, "unknown"),
    "bottlerocket-2.x.8072.0.txt": ("2.x.8072.0", False, "unknown"),
}
FIELDS = {"filename", "alias", "version", "license", "description", "import_ns", "srcversion", "depends",
          "retpoline", "name", "vermagic", "sig_id", "signer", "sig_key", "sig_hashalgo", "signature", "parm"}


def _fields(text: str) -> dict[str, list[str]]:
    fields: dict[str, list[str]] = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        fields.setdefault(key, []).append(value.strip())
    return fields


def test_every_recording_has_expectations() -> None:
    assert sorted(path.name for path in RECORDED.glob("*.txt")) == sorted(EXPECTED)
    sources = (RECORDED / "SOURCES.md").read_text()
    assert all(f"| {name} |" in sources for name in EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_recorded_driver_version_under_a_container(tmp_path: Path, name: str) -> None:
    fields = _fields((RECORDED / name).read_text())
    assert set(fields) <= FIELDS, set(fields) - FIELDS  # a new modinfo field is noticed
    version, release, layout = EXPECTED[name]
    assert fields["version"] == [version]
    assert names_a_release(version) is release
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge", release="2.30.0", container=True,
                                                  loaded_version=version, sysfs_layout="classic"))
    assert (root / "sys/module/neuron/version").read_text().strip() == version
    _, report, _ = check_json(["--root", str(root), "--venv", empty_folder(tmp_path)])
    snapshot = report["facts"]["host"]["snapshot"]
    assert snapshot["loaded_driver_version"] == version
    assert snapshot["sysfs_layout"] == layout
    assert [device["device_name"] for device in snapshot["sysfs_devices"]] == ["Trainium1"] * 16
    summary = next(check["summary"] for check in report["checks"] if check["id"] == "driver")
    assert summary.startswith(f"host driver {version} loaded")
    assert ("names no release" in summary) is not release
    incompatible = findings_by_id(report).get("ND-RT-001", [])
    if release:  # every recorded release is older than 2.27: runtime 2.32 on it is the documented break
        assert [finding["severity"] for finding in incompatible] == ["error"]
        assert version in incompatible[0]["title"]
    else:
        assert incompatible == []
