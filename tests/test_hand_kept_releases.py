"""Hand-kept releases: a release AWS's manifest copy does not list yet joins the generated data with
its source, and an official manifest that lists it wins."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from neurondoctor.release_data.hand_kept import load_hand_kept, merge_hand_kept
from neurondoctor.release_data.n2_conversion import convert_n2_manifest
from neurondoctor.release_data.schema import SchemaError
from tests.conftest import REPO
from tests.fixes.local_release_data import next_release_manifest

SOURCE = "https://awsdocs-neuron.readthedocs-hosted.com/en/v2.40.0/release-notes/releasecontent.html"


def official() -> dict[str, object]:
    return json.loads((REPO.parent / "shared/reference/n2-manifest.json").read_text())  # type: ignore[no-any-return]


def hand_kept_file(directory: Path, compiler: str) -> Path:
    """2.32.0's entry as 2.40.0 with another compiler, in the hand-kept shape."""
    document = official()
    entry = copy.deepcopy(next(release for release in document["neuron_releases"]  # type: ignore[attr-defined]
                               if release["neuron_version"] == "2.32.0"))
    for package in entry["packages"]:
        if package["name"] == "neuronx-cc":
            package["version"] = compiler
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "2.40.0.json"
    path.write_text(json.dumps({"neuron_version": "2.40.0", "source": SOURCE, "manifest_date": "11/30/2026",
                                "packages": entry["packages"]}))
    return path


def test_a_hand_kept_release_joins_the_generated_data(tmp_path: Path) -> None:
    hand_kept_file(tmp_path / "hand-kept", "2.30.1.0")
    merged, superseded = merge_hand_kept(official(), load_hand_kept(tmp_path / "hand-kept"))
    documents = convert_n2_manifest(merged)
    sdk = documents["sdk.json"]
    assert superseded == [] and sdk["manifest_version"] == "2.40.0" and sdk["releases"][0] == "2.40.0"
    assert sdk["source"]["manifest_date"] == "11/30/2026"
    assert sdk["source"]["hand_kept"] == [{"release": "2.40.0", "source": SOURCE}]
    compiler = next(package for package in documents["releases/2.40.0.json"]["packages"]
                    if package["name"] == "neuronx-cc")
    assert compiler["version"] == "2.30.1.0"


def test_the_official_manifest_wins_over_a_hand_kept_release(tmp_path: Path) -> None:
    hand_kept_file(tmp_path / "hand-kept", "2.30.1.0")
    newer = json.loads((next_release_manifest(tmp_path / "official") / "n2-manifest.json").read_text())
    merged, superseded = merge_hand_kept(newer, load_hand_kept(tmp_path / "hand-kept"))
    assert superseded == ["2.40.0"] and "hand_kept" not in merged
    compiler = next(package for package in convert_n2_manifest(merged)["releases/2.40.0.json"]["packages"]
                    if package["name"] == "neuronx-cc")
    assert compiler["version"] != "2.30.1.0"  # the official entry's


def test_a_hand_kept_file_without_its_source_is_refused(tmp_path: Path) -> None:
    path = hand_kept_file(tmp_path / "hand-kept", "2.30.1.0")
    document = json.loads(path.read_text())
    document["source"] = "http://example.invalid/page"
    path.write_text(json.dumps(document))
    with pytest.raises(SchemaError, match=re.escape("2.40.0.json.source: expected the https:// page")):
        load_hand_kept(tmp_path / "hand-kept")


def test_the_official_entry_that_wins_is_recorded(tmp_path: Path) -> None:
    """`manifests status` says which hand-kept release gave way: the merged manifest carries it with its page."""
    hand_kept_file(tmp_path / "hand-kept", "2.30.1.0")
    newer = json.loads((next_release_manifest(tmp_path / "official") / "n2-manifest.json").read_text())
    merged, _ = merge_hand_kept(newer, load_hand_kept(tmp_path / "hand-kept"))
    assert convert_n2_manifest(merged)["sdk.json"]["source"]["superseded_hand_kept"] == [
        {"release": "2.40.0", "source": SOURCE}]


def _packages(release: str) -> dict[tuple[str, str], dict[str, object]]:
    document = json.loads((REPO / "manifests" / "hand-kept" / f"{release}.json").read_text())
    return {(package["name"], package["version"]): package for package in document["packages"]}


def test_2_33_1_is_2_33_0_but_for_the_packages_its_notes_name() -> None:
    """release-notes/2.33.1.rst: "Neuron 2.33.1 updates the following packages. All other packages are the same as
    in Neuron 2.33.0"; each changed package keeps 2.33.0's instances and Pythons, libtorch_neuronx_lite the 2.32.0
    manifest's (Trn2/Trn3)."""
    before, after = _packages("2.33.0"), _packages("2.33.1")
    changed = {"aws-neuronx-collectives": ("2.35.43.0", "2.35.49.0"), "aws-neuronx-dkms": ("2.31.7.0", "2.31.8.0"),
               "aws-neuronx-oci-hook": ("2.19.65.0", "2.19.74.0"),
               "aws-neuronx-runtime-lib": ("2.35.30.0", "2.35.33.0"),
               "jax_neuronx": ("0.10.0.1.0.14198", "0.10.0.1.0.15472"), "libneuronxla": ("3.0.10135.0", "3.0.12293.0"),
               "nrtpy": ("2.35.30", "2.35.33")}
    assert set(before) - set(after) == {(name, old) for name, (old, _) in changed.items()}
    added = set(after) - set(before)
    assert added == {(name, new) for name, (_, new) in changed.items()} | {
        ("libtorch_neuronx_lite", f"{torch}.0.1.0.4089") for torch in ("2.11", "2.12", "2.13")}
    for name, (old, new) in changed.items():
        assert {key: value for key, value in after[(name, new)].items() if key != "version"} == {
            key: value for key, value in before[(name, old)].items() if key != "version"}, name
    assert all(after[key]["supported_instances"] == ["trn2", "trn3"] for key in added if key[0].startswith("libtorch"))


def test_2_34_0_lists_what_is_published_and_names_what_is_not() -> None:
    document = json.loads((REPO / "manifests" / "hand-kept" / "2.34.0.json").read_text())
    assert [(package["name"], package["version"]) for package in document["packages"]] == [
        ("torch-neuronx", "2.13.3.1.*"), ("torch-neuronx", "2.14.3.1.*")]
    assert all(package["supported_python_versions"] == [] for package in document["packages"])  # not restated
    not_known = document["not_known"]
    assert {"aws-neuronx-dkms", "aws-neuronx-runtime-lib", "aws-neuronx-collectives", "aws-neuronx-tools",
            "neuronx-cc", "jax-neuronx", "libneuronxla", "libtorch-neuronx-lite"} <= set(not_known["packages"])
    assert "the Python versions of every package" in not_known["facts"]
    assert not_known["complete_source"].endswith("/v2.34.0/src/helperscripts/n2-manifest.json")
    assert document["sources"]["torch-neuronx 2.13.3.1.* / 2.14.3.1.*"].startswith(
        "https://github.com/aws-neuron/torch-neuronx/releases/tag/v2.34.0")
