"""`scripts/add_release.py`: the text of a release-content page becomes a hand-kept release file.

The inputs are the pages' own tables (tests/recorded/release-content, with SOURCES.md). The skeleton of the 2.33.0
Trn1 list is held to the hand-kept 2.33.0 file (the check of that file against the v2.33.1 page), and the routine
is run end to end: the skeleton merged into AWS's manifest, converted, loaded as release data, and shown by
`manifests status` with what its page left out.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from neurondoctor.release_data.hand_kept import load_hand_kept, merge_hand_kept
from neurondoctor.release_data.n2_conversion import convert_n2_manifest, render_document
from tests.conftest import REPO, cli_env, run_cli

RECORDED = REPO / "tests" / "recorded" / "release-content"
PREV_PAGE = "https://awsdocs-neuron.readthedocs-hosted.com/en/v2.33.1/release-notes/prev/content.html"
SHARED_MANIFEST = REPO.parent / "shared" / "reference" / "n2-manifest.json"


def add_release(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO / "scripts" / "add_release.py"), *args], capture_output=True,
                          text=True, input=stdin, timeout=60, cwd=str(REPO))


def test_the_2_33_0_trn1_list_agrees_with_the_hand_kept_release() -> None:
    """Every package of the page's 2.33.0 Trn1 list is in the hand-kept 2.33.0 file for trn1 at the same version,
    and the file lists nothing else for trn1 but the EFA installer (which AWS's manifests carry, not the page)."""
    done = add_release(str(RECORDED / "v2.33.1-prev-content-2.33.0-trn1.txt"), "--release", "2.33.0",
                       "--source", PREV_PAGE)
    assert done.returncode == 0, done.stderr
    skeleton = json.loads(done.stdout)
    assert (skeleton["neuron_version"], skeleton["manifest_date"]) == ("2.33.0", "10/19/2026")
    page = {(item["name"], item["version"]) for item in skeleton["packages"]}
    assert len(page) == 18 and all(item["supported_instances"] == ["trn1"] for item in skeleton["packages"])
    (kept,) = [entry for entry in load_hand_kept(REPO / "manifests" / "hand-kept")
               if entry["neuron_version"] == "2.33.0"]
    kept_trn1 = {(item["name"], item["version"]) for item in kept["packages"] if "trn1" in item["supported_instances"]}
    assert page <= kept_trn1 and kept_trn1 - page == {("efa-installer", "1.47")}
    assert skeleton["not_shown"] == ["the trn2 package list", "the trn3 package list", "the inf2 package list",
                                     "the inf1 package list", "the trn1 supported Python versions"]
    collectives = next(item for item in skeleton["packages"] if item["name"] == "aws-neuronx-collectives")
    assert collectives["supported_python_versions"] == []  # an OS package


def test_an_addition_heading_and_a_wheel_file_name() -> None:
    """The 2.32.0 page opens with `Neuron 2.32.0 — vLLM Neuron Beta`, whose Trn2/Trn3 table names a wheel file:
    its name and version are read, for trn2 and trn3, and the addition is named in the sources."""
    page = "https://awsdocs-neuron.readthedocs-hosted.com/en/v2.32.0/release-notes/releasecontent.html"
    done = add_release(str(RECORDED / "v2.32.0-releasecontent-head.txt"), "--release", "2.32.0", "--source", page)
    skeleton = json.loads(done.stdout)
    vllm = next(item for item in skeleton["packages"] if item["name"] == "vllm_neuron")
    assert (vllm["version"], vllm["supported_instances"]) == ("0.24.0.1.1.0+e8242a9", ["trn2", "trn3"])
    assert skeleton["manifest_date"] == "08/17/2026"
    assert skeleton["sources"]["additions"] == f"{page}: vLLM Neuron Beta"
    gpsimd = next(item for item in skeleton["packages"] if item["name"] == "aws-neuronx-gpsimd-tools")
    assert gpsimd["version"] == "14.09.x"


def test_python_versions_a_page_gives_go_to_its_pip_packages_only(tmp_path: Path) -> None:
    text = ("Neuron 2.99.0 (12/24/2026)#\n\nInf2 packages#\n\nComponent   Package\n"
            "Driver                              aws-neuronx-dkms-2.40.1.0 \n"
            "Compiler                            neuronx-cc-2.40.1.0 \n\n"
            "Inf2 supported Python versions#\n\nPython 3.12\nPython 3.13\n")
    done = add_release("-", "--release", "2.99.0", "--source", "https://example.invalid/page", stdin=text)
    packages = {item["name"]: item for item in json.loads(done.stdout)["packages"]}
    assert packages["neuronx-cc"]["supported_python_versions"] == ["3.12", "3.13"]
    assert packages["aws-neuronx-dkms"]["supported_python_versions"] == []


def test_refusals_are_one_line_and_never_overwrite(tmp_path: Path) -> None:
    page = str(RECORDED / "v2.33.1-prev-content-2.33.0-trn1.txt")
    assert "no package list for Neuron 2.34.0" in add_release(page, "--release", "2.34.0", "--source",
                                                               PREV_PAGE).stderr
    assert add_release(page, "--release", "2.33.0", "--source", "http://plain.example/").returncode == 2
    earlier = tmp_path / "2.33.0.json"
    earlier.write_text("mine\n")
    done = add_release(page, "--release", "2.33.0", "--source", PREV_PAGE, "-o", str(earlier))
    assert done.returncode != 0 and earlier.read_text() == "mine\n"


@pytest.mark.skipif(not SHARED_MANIFEST.exists(), reason="needs AWS's n2-manifest.json (the development copy)")
def test_the_routine_end_to_end(tmp_path: Path) -> None:
    """A page of a release the manifest lacks (here 2.33.0's Trn1 table headed 2.99.0) → add_release.py → merged
    into AWS's manifest and converted → loaded: the release is known for trn1, and `manifests status` says what its
    page did not show."""
    text = (RECORDED / "v2.33.1-prev-content-2.33.0-trn1.txt").read_text().replace("2.33.0", "2.99.0")
    kept = tmp_path / "hand-kept"
    kept.mkdir()
    done = add_release("-", "--release", "2.99.0", "--source", "https://example.invalid/2.99.0", "-o",
                       str(kept / "2.99.0.json"), stdin=text)
    assert done.returncode == 0 and "not shown: the trn2 package list" in done.stderr
    merged, _ = merge_hand_kept(json.loads(SHARED_MANIFEST.read_text()), load_hand_kept(kept))
    data = tmp_path / "manifests"
    for relative, document in convert_n2_manifest(merged).items():
        (data / relative).parent.mkdir(parents=True, exist_ok=True)
        (data / relative).write_text(render_document(document))
    for name in ("compat.json", "instances.json", "os-support.json", "end-of-support.json", "env-vars.json",
                 "support-ranges.json", "package-fixes.json"):
        (data / name).write_text((REPO / "manifests" / name).read_text())
    env = cli_env({"NEURONDOCTOR_MANIFESTS": str(data), "HOME": str(tmp_path)})
    shown = run_cli(["manifests", "show", "2.99.0"], env=env)
    assert shown.returncode == 0 and "neuronx-cc" in shown.stdout and "2.28.7631.0" in shown.stdout
    status = run_cli(["manifests", "status", "-v"], env=env).stdout
    assert "Hand-kept 2.99.0 leaves out what its page did not show: the trn2 package list;" in status
