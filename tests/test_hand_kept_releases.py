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
