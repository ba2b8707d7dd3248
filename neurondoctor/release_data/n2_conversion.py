"""Turns AWS's `n2-manifest.json` into the project's `manifests/` documents.

One converter serves both `scripts/regenerate_manifests.py` (the committed files) and
`neurondoctor manifests update` (a downloaded newer manifest), so both produce the same shape.
"""

from __future__ import annotations

import json
from typing import Any

from neurondoctor.neuron_version import release_tuple
from neurondoctor.release_data.schema import RELEASE_SCHEMA, SDK_SCHEMA, check_n2_manifest

_REPO_KINDS = {"whl": "pip", "deb": "apt", "rpm": "yum"}
PYPI_INDEX = "https://pypi.org/simple"


def _unique(items: list[str]) -> list[str]:
    """The manifest repeats instances (`trn2, trn2` in 2.26.1); keep the first of each."""
    return list(dict.fromkeys(items))


def _release_document(entry: dict[str, Any]) -> dict[str, Any]:
    packages = [
        {
            "name": package["name"],
            "version": package["version"],
            "instances": _unique(list(package.get("supported_instances", []))),
            "python": _unique(list(package.get("supported_python_versions", []))),
        }
        for package in entry["packages"]
    ]
    return {"schema": RELEASE_SCHEMA, "release": entry["neuron_version"], "packages": packages}


def _sdk_document(doc: dict[str, Any], releases: list[str]) -> dict[str, Any]:
    repositories = {
        _REPO_KINDS[repo["repo_type"]]: repo["repo_url"].rstrip("/")
        for repo in doc["repos_n2"]
        if repo["repo_type"] in _REPO_KINDS
    }
    repositories["pypi"] = PYPI_INDEX  # not in the manifest: the index pip uses when none is configured
    major_pins = {
        prop["name"]: {key: value for key, value in prop.items() if key != "name" and value}
        for prop in doc.get("major_version_properties", [])
    }
    packages = {
        prop["name"]: {
            "component": prop.get("component", ""),
            "category": prop.get("category", ""),
            "type": prop.get("package_type", "na") if prop.get("package_type") in ("pip", "os") else "na",
            "pin_major": str(prop.get("pin_major", "false")).lower() == "true",
        }
        for prop in doc["package_properties"]
    }
    return {
        "schema": SDK_SCHEMA,
        "source": {
            "file": "n2-manifest.json",
            "manifest_version": doc["manifest_version"],
            "manifest_date": doc.get("manifest_date", ""),
            **({"hand_kept": doc["hand_kept"]} if doc.get("hand_kept") else {}),  # release_data/hand_kept.py
            **({"superseded_hand_kept": doc["hand_kept_superseded"]} if doc.get("hand_kept_superseded") else {}),
        },
        "manifest_version": doc["manifest_version"],
        "releases": releases,
        "latest_by_instance": {item["instance"]: item["version"] for item in doc.get("latest_release", [])},
        "repositories": repositories,
        "operating_systems": [
            {"os": item["os"], "default_python": item.get("default_python_version", "")}
            for item in doc.get("os_properties", [])
        ],
        "major_pins": major_pins,
        "packages": packages,
    }


def convert_n2_manifest(doc: Any) -> dict[str, Any]:
    """Map of relative path (`sdk.json`, `releases/2.31.1.json`) to document; raises SchemaError."""
    check_n2_manifest(doc)
    entries = sorted(doc["neuron_releases"], key=lambda entry: release_tuple(entry["neuron_version"]),
                     reverse=True)
    releases = [entry["neuron_version"] for entry in entries]
    documents: dict[str, Any] = {"sdk.json": _sdk_document(doc, releases)}
    for entry in entries:
        documents[f"releases/{entry['neuron_version']}.json"] = _release_document(entry)
    return documents


def render_document(document: Any) -> str:
    """JSON text with one package per line, so a regenerated release reads well in a diff."""
    if isinstance(document, dict) and isinstance(document.get("packages"), list):
        head = {key: value for key, value in document.items() if key != "packages"}
        lines = [json.dumps(package, ensure_ascii=False) for package in document["packages"]]
        head_text = json.dumps(head, indent=1, ensure_ascii=False)[:-2]
        return head_text + ',\n "packages": [\n  ' + ",\n  ".join(lines) + "\n ]\n}\n"
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"
