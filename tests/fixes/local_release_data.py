"""The release data with its index URLs pointed at 127.0.0.1, so fix lines run verbatim against local indexes.

Fixes name the Neuron repository (sdk.json `repositories.pip`) and the PyTorch CPU index (compat.json
`torch_cpu_index`) from the release data, and the rules know PyPI by `repositories.pypi` (an index-url naming it
is not a mirror). A copy with those URLs replaced, named by NEURONDOCTOR_MANIFESTS, makes `check` print lines a
test can paste into a shell unchanged."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

from neurondoctor.release_data.catalog import bundled_manifest_dir
from tests.conftest import REPO


def local_release_data(target: Path, neuron_index: str, cpu_index: str, pypi_index: str | None = None) -> Path:
    shutil.copytree(bundled_manifest_dir(), target)
    sdk = json.loads((target / "sdk.json").read_text())
    sdk["repositories"]["pip"] = neuron_index
    if pypi_index:
        sdk["repositories"]["pypi"] = pypi_index
    (target / "sdk.json").write_text(json.dumps(sdk, indent=1) + "\n")
    compat = json.loads((target / "compat.json").read_text())
    compat["torch_cpu_index"] = cpu_index
    (target / "compat.json").write_text(json.dumps(compat, indent=1) + "\n")
    return target


NEXT_COMPILER = "2.26.7001.0"  # a hotfix between two known compilers (ND-REL-002, not ND-REL-005)
NEXT_HOST = {"aws-neuronx-dkms": "2.32.4.0", "aws-neuronx-runtime-lib": "2.36.12.0",
             "aws-neuronx-collectives": "2.36.20.0", "aws-neuronx-tools": "2.34.5.0"}  # a synthetic next release


def next_release_manifest(directory: Path, changes: dict[str, str] | None = None) -> Path:
    """AWS's n2-manifest.json with a release 2.40.0 that is 2.32.0 but for `changes` (default: its compiler)."""
    changes = changes or {"neuronx-cc": NEXT_COMPILER}
    document = json.loads((REPO.parent / "shared/reference/n2-manifest.json").read_text())
    newest = next(release for release in document["neuron_releases"] if release["neuron_version"] == "2.32.0")
    following = copy.deepcopy(newest)
    following["neuron_version"] = "2.40.0"
    for package in following["packages"]:
        package["version"] = changes.get(package["name"], package["version"])
    document["neuron_releases"].append(following)
    document["manifest_version"] = "2.40.0"
    directory.mkdir(parents=True)
    (directory / "n2-manifest.json").write_text(json.dumps(document))
    return directory
