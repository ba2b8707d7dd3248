"""Releases AWS's n2-manifest.json does not list yet, kept by hand until it does.

A release ships weeks before the manifest copy we have names it (2.33.0 on 2026-10-19). A hand-kept release is one
file `manifests/hand-kept/X.Y.Z.json` in the manifest's own release-entry shape plus where its facts come from
(`source`, the release-content page) and the manifest date to record. `scripts/regenerate_manifests.py` merges them
into the official manifest before converting it; when the official manifest lists that release, the official
entry wins and the script says the hand-kept file can go.

A release may be known only in part (2.34.0 publishes its TorchNeuron families weeks before its package list): its file
lists what is published and says in `not_known` what is not (`packages`: the names whose version in that release is
not known; `facts`: anything else; `complete_source`: where the whole list will be). The rules judge such a release on
what it lists and say, in one line, what they could not judge (rules/python_stack/partial_release.py).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from neurondoctor.neuron_version import release_tuple
from neurondoctor.release_data.schema import SchemaError

HAND_KEPT_DIR = "hand-kept"


def _check(entry: Any, where: str) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise SchemaError(f"{where}: expected an object")
    for key in ("neuron_version", "source", "manifest_date"):
        if not isinstance(entry.get(key), str) or not entry[key]:
            raise SchemaError(f"{where}.{key}: expected a non-empty string")
    if not str(entry["source"]).startswith("https://"):
        raise SchemaError(f"{where}.source: expected the https:// page the versions come from")
    packages = entry.get("packages")
    if not isinstance(packages, list) or not packages:
        raise SchemaError(f"{where}.packages: expected a non-empty list")
    for index, package in enumerate(packages):
        if not (isinstance(package, dict) and isinstance(package.get("name"), str)
                and isinstance(package.get("version"), str)
                and isinstance(package.get("supported_instances"), list)
                and isinstance(package.get("supported_python_versions"), list)):
            raise SchemaError(f"{where}.packages[{index}]: expected name, version, supported_instances and "
                              "supported_python_versions")
    if "not_known" in entry:
        _check_not_known(entry["not_known"], f"{where}.not_known")
    return entry


def _check_not_known(value: Any, where: str) -> None:
    if not isinstance(value, dict):
        raise SchemaError(f"{where}: expected an object")
    for key in ("packages", "facts"):
        items = value.get(key, [])
        if not isinstance(items, list) or not all(isinstance(item, str) and item for item in items):
            raise SchemaError(f"{where}.{key}: expected a list of non-empty strings")
    if not value.get("packages") and not value.get("facts"):
        raise SchemaError(f"{where}: name what is not known (packages or facts)")
    if not str(value.get("complete_source", "")).startswith("https://"):
        raise SchemaError(f"{where}.complete_source: expected the https:// source that will hold the whole release")


def load_hand_kept(directory: Path) -> list[dict[str, Any]]:
    """Every hand-kept release under `directory`, oldest first; raises SchemaError for a malformed one."""
    entries = []
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        entries.append(_check(json.loads(path.read_text(encoding="utf-8")), path.name))
    return sorted(entries, key=lambda entry: release_tuple(entry["neuron_version"]))


def merge_hand_kept(official: dict[str, Any], kept: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """(the manifest with the hand-kept releases it lacks, the hand-kept releases it already lists). The official
    entry always wins, and the merged manifest records which hand-kept release gave way (`manifests status` says so);
    the merged manifest's version and date are the newest release's."""
    merged = copy.deepcopy(official)
    listed = {entry["neuron_version"] for entry in merged["neuron_releases"]}
    superseded = []
    for entry in kept:
        release = entry["neuron_version"]
        if release in listed:
            superseded.append(release)
            merged.setdefault("hand_kept_superseded", []).append({"release": release, "source": entry["source"]})
            continue
        merged["neuron_releases"].append({"neuron_version": release, "packages": entry["packages"]})
        kept_note = {"release": release, "source": entry["source"]}
        if entry.get("not_shown"):  # what the page did not show (scripts/add_release.py): left out, and said so
            kept_note["not_shown"] = [str(item) for item in entry["not_shown"]]
        if entry.get("not_known"):  # a release known in part: what the rules cannot judge of it
            kept_note["not_known"] = copy.deepcopy(entry["not_known"])
        merged.setdefault("hand_kept", []).append(kept_note)
        if release_tuple(release) > release_tuple(str(merged["manifest_version"])):
            merged["manifest_version"] = release
            merged["manifest_date"] = entry["manifest_date"]
    return merged, superseded
