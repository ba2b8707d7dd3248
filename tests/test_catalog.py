"""The release catalog: loading, schema checks, release lookup, carryover, neighbours, regeneration."""

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurondoctor.release_data.catalog import ReleaseCatalog, bundled_manifest_dir, load_catalog
from neurondoctor.release_data.hand_kept import HAND_KEPT_DIR, load_hand_kept, merge_hand_kept
from neurondoctor.release_data.n2_conversion import convert_n2_manifest, render_document
from neurondoctor.release_data.schema import SchemaError, check_n2_manifest
from tests.conftest import REPO

SHARED_MANIFEST = REPO.parent / "shared" / "reference" / "n2-manifest.json"


def test_all_releases_load(catalog: ReleaseCatalog) -> None:
    # 2.3.0-2.32.0 from AWS's manifest, 2.33.0 and 2.33.1 hand-kept, 2.34.0 hand-kept and known only in part
    assert len(catalog.releases) == 54
    assert catalog.release_names[0] == "2.34.0" and catalog.release_names[-1] == "2.3.0"
    assert catalog.latest == "2.34.0" and catalog.whole_latest == "2.33.1" and list(catalog.partial) == ["2.34.0"]
    assert catalog.pip_repository == "https://pip.repos.neuron.amazonaws.com"


def test_release_lookup_normalises_suffixes(catalog: ReleaseCatalog) -> None:
    assert catalog.releases_with("neuronx-cc", "2.26.6360.0+bd4c5f4b") == ["2.31.1", "2.31.0"]
    assert catalog.releases_with("neuronx_cc", "2.27.5334.0") == ["2.32.0"]
    assert catalog.releases_with("aws-neuronx-dkms", "2.26.10.0-dkms") == ["2.28.1"]
    assert catalog.releases_with("torch-neuronx", "2.9.0.2.99.1") == []


def test_232_carries_the_231_torch_neuronx(catalog: ReleaseCatalog) -> None:
    # setup/pytorch/manual.rst (2.32): the 2.32 compiler is installed with torch-neuronx 2.9.0.2.15.32035.
    assert catalog.releases_with("torch-neuronx", "2.9.0.2.15.32035") == [
        "2.33.1", "2.33.0", "2.32.0", "2.31.1", "2.31.0"]
    carried = catalog.entries("2.32.0", "torch-neuronx")
    assert [(entry.version, entry.carried_from) for entry in carried] == [("2.9.0.2.15.32035", "2.31.1")]
    assert {entry.version for entry in catalog.entries("2.32.0", "libneuronxla")} == {"3.0.5356.0", "2.2.17544.0"}


def test_neighbours_of_an_unknown_version(catalog: ReleaseCatalog) -> None:
    neighbours = catalog.neighbours("torch-neuronx", "2.9.0.2.14.30000")
    assert neighbours.lower == ("2.9.0.2.14.27725", ("2.30.0",))
    assert neighbours.higher == ("2.9.0.2.15.32035", ("2.33.1", "2.33.0", "2.32.0", "2.31.1", "2.31.0"))


def _copy_manifests(tmp_path: Path) -> Path:
    target = tmp_path / "manifests"
    shutil.copytree(bundled_manifest_dir(), target)
    return target


def test_truncated_release_file_is_named_and_skipped(tmp_path: Path) -> None:
    manifests = _copy_manifests(tmp_path)
    broken = manifests / "releases" / "2.31.1.json"
    broken.write_bytes(broken.read_bytes()[:300])
    loaded = load_catalog(manifests)
    assert [problem.path for problem in loaded.problems] == [str(broken)]
    assert "truncated" in loaded.problems[0].message
    assert "2.31.1" not in loaded.releases and "2.31.0" in loaded.releases


def test_corrupt_sdk_file_still_loads_releases(tmp_path: Path) -> None:
    manifests = _copy_manifests(tmp_path)
    (manifests / "sdk.json").write_text('{"schema": "neurondoctor.sdk/1", "releases": 7}')
    loaded = load_catalog(manifests)
    assert len(loaded.problems) == 1 and "sdk" in loaded.problems[0].message
    assert len(loaded.releases) == 54


def test_wrong_shape_is_refused_with_a_path(tmp_path: Path) -> None:
    manifests = _copy_manifests(tmp_path)
    document = json.loads((manifests / "releases" / "2.30.0.json").read_text())
    document["packages"][2]["instances"] = "trn1"
    (manifests / "releases" / "2.30.0.json").write_text(json.dumps(document))
    loaded = load_catalog(manifests)
    assert "release.packages[2].instances" in loaded.problems[0].message


@pytest.mark.skipif(not SHARED_MANIFEST.exists(), reason="needs n2-manifest.json")
def test_committed_manifests_are_what_the_script_generates(tmp_path: Path) -> None:
    merged, _ = merge_hand_kept(json.loads(SHARED_MANIFEST.read_text()),
                                load_hand_kept(REPO / "manifests" / HAND_KEPT_DIR))
    documents = convert_n2_manifest(merged)
    assert len(documents) == 52 + len(merged.get("hand_kept", []))
    for relative, document in documents.items():
        assert (REPO / "manifests" / relative).read_text() == render_document(document), relative


def test_regenerate_script_rejects_a_malformed_source(tmp_path: Path) -> None:
    source = tmp_path / "n2-manifest.json"
    source.write_text('{"manifest_version": "2.33.0", "neuron_releases": []}')
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "regenerate_manifests.py"), str(source)],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert "missing key" in result.stderr or "non-empty" in result.stderr


def test_n2_schema_refuses_plain_http_repositories() -> None:
    document = {"manifest_version": "2.33.0", "package_properties": [],
                "repos_n2": [{"repo_type": "whl", "repo_url": "http://example.invalid/"}],
                "neuron_releases": [{"neuron_version": "2.33.0", "packages": []}]}
    with pytest.raises(SchemaError, match="https"):
        check_n2_manifest(document)


@settings(max_examples=60, deadline=None)
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=8), children,
                                                                                       max_size=3), max_leaves=12))
def test_n2_schema_never_crashes_on_garbage(document: object) -> None:
    with contextlib.suppress(SchemaError):
        convert_n2_manifest(document)


def test_instance_facts_come_from_one_data_file(catalog: ReleaseCatalog) -> None:
    """manifests/instances.json: what the device, env-var and resource rules judge against, and what
    the fixture hosts are built from agree with it."""
    from tests.host_fixture import INSTANCES

    assert catalog.instances["trn1.32xlarge"]["devices"] == 16 and catalog.instances["trn1.32xlarge"][
        "efa_interfaces"] == 8
    assert catalog.instances["trn2.48xlarge"]["logical_nc_configs"] == [1, 2]
    for name, (device_id, devices, cores_per_device, efa) in INSTANCES.items():
        data = catalog.instances[name]
        # Trn2/Trn3 fixtures write the physical cores per chip; the table's `cores` are logical ones at LNC=2
        physical = data.get("physical_cores_per_device", data["cores_per_device"])
        assert (data["pci_device_id"], data["devices"], physical, data["efa_interfaces"]) == (
            device_id, devices, cores_per_device, efa), name
        assert data["cores"] == data["devices"] * data["cores_per_device"]
        assert data["cores"] == data["devices"] * physical // data["default_logical_nc_config"]


def test_a_corrupt_instances_file_is_one_error_line(tmp_path: Path) -> None:
    manifests = tmp_path / "manifests"
    shutil.copytree(bundled_manifest_dir(), manifests)
    (manifests / "instances.json").write_text('{"schema": "neurondoctor.instances/1", "instances": {"x.y": {}}}')
    loaded = load_catalog(manifests)
    assert [problem.path for problem in loaded.problems] == [str(manifests / "instances.json")]
    assert loaded.instances == {} and loaded.releases  # the rest still loads
