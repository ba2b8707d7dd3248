"""`manifests update` against a real HTTP server on 127.0.0.1, with AWS's stored n2-manifest.json and a copy extended
in its own format: validated, newer-only, the official entry of a release over the hand-kept one, used by `check`."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, check_json, cli_env, run_cli
from tests.fixes.local_release_data import NEXT_HOST
from tests.host_fixture import HostSpec, build_host
from tests.local_index import serve

SHARED_MANIFEST = REPO.parent / "shared" / "reference" / "n2-manifest.json"


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    served = tmp_path / "served"
    served.mkdir()
    with serve(served) as base:
        yield served, base


def _official() -> dict[str, object]:
    if not SHARED_MANIFEST.exists():
        pytest.skip("needs n2-manifest.json")
    return json.loads(SHARED_MANIFEST.read_text())  # type: ignore[no-any-return]


def _official_entry(release: str, changes: dict[str, str]) -> dict[str, object]:
    """A release entry in AWS's own shape (n2-manifest.json `neuron_releases[]`): the hand-kept file's packages with
    `changes`, so the test sees which copy of a release is in use."""
    kept = json.loads((REPO / "manifests" / "hand-kept" / f"{release}.json").read_text())
    packages = [dict(package, version=changes.get(package["name"], package["version"])) for package in kept["packages"]]
    return {"neuron_version": release, "packages": packages}


# A synthetic 2.34.0 in AWS's shape: AWS's 2.34.0 list is in no source read (docs/neuron-facts.md §10), so these host
# versions are the test's own (tests/fixes/local_release_data.py NEXT_HOST), beside 2.34.0's published TorchNeuron.
SYNTHETIC_2_34 = {"neuron_version": "2.34.0", "packages": [
    *({"name": name, "version": version, "supported_instances": ["trn1", "inf2", "trn2", "trn3"],
       "supported_python_versions": []} for name, version in NEXT_HOST.items()),
    {"name": "neuronx-cc", "version": "2.29.1207.0", "supported_instances": ["trn1", "inf2", "trn2", "trn3"],
     "supported_python_versions": ["3.12", "3.13", "3.14"]},
    *({"name": "torch-neuronx", "version": family, "supported_instances": ["trn2", "trn3"],
       "supported_python_versions": ["3.12", "3.13", "3.14"]} for family in ("2.13.3.1.*", "2.14.3.1.*"))]}


def _extended() -> dict[str, object]:
    """The stored official manifest (2.3.0-2.32.0) extended by 2.33.1 and 2.34.0 entries in its own shape: AWS's
    2.33.1 list as the hand-kept file has it but for one compiler build (2.28.7700.0, the official copy's mark), and
    the synthetic 2.34.0."""
    document = _official()
    releases = document["neuron_releases"]
    assert isinstance(releases, list)
    releases[:0] = [SYNTHETIC_2_34, _official_entry("2.33.1", {"neuronx-cc": "2.28.7700.0"})]
    document["manifest_version"] = "2.34.0"
    document["manifest_date"] = "12/04/2026"
    return document


def test_the_stored_official_manifest_parses_and_is_refused_as_older(mirror: tuple[Path, str],
                                                                     tmp_path: Path) -> None:
    """AWS's n2-manifest.json exactly as stored (51 releases, 2.3.0-2.32.0): it passes the schema and converts, and
    being older than the newest release the data knows whole (2.33.1), it changes nothing."""
    served, base = mirror
    shutil.copyfile(SHARED_MANIFEST, served / "n2-manifest.json")
    cache = tmp_path / "cache"
    env = cli_env({"NEURONDOCTOR_CACHE_DIR": str(cache)})
    result = run_cli(["manifests", "update", "--url", f"{base}/n2-manifest.json"], env=env)
    assert result.returncode == 2
    assert result.stderr.strip() == (f"error: {base}/n2-manifest.json: manifest 2.32.0 is older than the 2.33.1 in "
                                     "use; kept the one in use")
    assert not (cache / "manifests").exists()


def test_update_takes_a_newer_official_manifest_over_the_hand_kept_releases(mirror: tuple[Path, str],
                                                                            tmp_path: Path) -> None:
    """The official entries of 2.33.1 and 2.34.0 replace the hand-kept ones (`manifests status` says so, and 2.34.0 is
    whole from then on); a host of the synthetic 2.34.0 is then that release, with nothing left unjudged; a bad
    document served afterwards changes nothing."""
    served, base = mirror
    (served / "n2-manifest.json").write_text(json.dumps(_extended()))
    cache = tmp_path / "cache"
    env = cli_env({"NEURONDOCTOR_CACHE_DIR": str(cache), "HOME": str(tmp_path)})
    result = run_cli(["manifests", "update", "--url", f"{base}/n2-manifest.json"], env=env)
    assert result.returncode == 0, result.stderr
    assert "release data 2.34.0: 54 releases" in result.stdout  # 51 + 2.33.1 + 2.34.0, and the hand-kept 2.33.0
    listing = run_cli(["manifests", "list"], env=env).stdout.splitlines()
    assert listing[2].split()[:6] == ["2.34.0", *NEXT_HOST.values(), "2.29.1207.0"]  # dkms, runtime, collectives, tools
    assert listing[3].split()[:6] == ["2.33.1", "2.31.8.0", "2.35.33.0", "2.35.49.0", "2.33.38.0", "2.28.7700.0"]
    status = json.loads(run_cli(["manifests", "status", "--json"], env=env).stdout)
    cached = next(item for item in status["copies"] if item["role"] == "cached")
    assert status["in_use"] == "cached" and cached["partial_releases"] == []
    assert [item["release"] for item in cached["superseded_hand_kept"]] == ["2.33.1", "2.34.0"]
    assert [item["release"] for item in cached["hand_kept"]] == ["2.33.0"]
    text = run_cli(["manifests", "status", "-v"], env=env).stdout
    assert "Whole: 54 releases." in text and "known only in part" not in text
    assert ("Hand-kept 2.33.1 gave way to AWS's manifest entry for it (the hand-kept file read "
            "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/release-notes/2.33.1.html).") in text
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release=None,
                                                  package_versions=dict(NEXT_HOST)))
    code, report, _ = check_json(["--root", str(root)], env=env)
    assert report["release"]["host"] == "2.34.0" and report["findings"] == [] and code == 0
    (served / "n2-manifest.json").write_bytes(b'{"manifest_version": "2.35.0", "neuron_rel')
    before = (cache / "manifests" / "sdk.json").read_text()
    refused = run_cli(["manifests", "update", "--url", f"{base}/n2-manifest.json"], env=env)
    assert refused.returncode == 2 and "not a JSON document" in refused.stderr
    assert (cache / "manifests" / "sdk.json").read_text() == before


@pytest.mark.parametrize(("content", "message"), [
    (b'{"manifest_version": "2.33.0", "neuron_rel', "not a JSON document"),
    (b'{"manifest_version": "2.33.0"}', "not a Neuron release manifest"),
    (b"\x89PNG\r\n", "not a JSON document"),
])
def test_malformed_downloads_are_refused(mirror: tuple[Path, str], tmp_path: Path, content: bytes,
                                         message: str) -> None:
    served, base = mirror
    (served / "n2-manifest.json").write_bytes(content)
    cache = tmp_path / "cache"
    env = cli_env({"NEURONDOCTOR_CACHE_DIR": str(cache)})
    result = run_cli(["manifests", "update", "--url", f"{base}/n2-manifest.json"], env=env)
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr
    assert not (cache / "manifests").exists()
    assert "2.34.0 " in run_cli(["manifests", "list"], env=env).stdout.splitlines()[2]


def test_an_older_manifest_does_not_replace_the_bundled_floor(mirror: tuple[Path, str], tmp_path: Path) -> None:
    served, base = mirror
    document = _official()
    document["manifest_version"] = "2.31.1"
    document["neuron_releases"] = document["neuron_releases"][1:]  # type: ignore[index]
    (served / "n2-manifest.json").write_text(json.dumps(document))
    env = cli_env({"NEURONDOCTOR_CACHE_DIR": str(tmp_path / "cache")})
    result = run_cli(["manifests", "update", "--url", f"{base}/n2-manifest.json"], env=env)
    assert result.returncode == 2 and "older than the 2.33.1 in use" in result.stderr


def test_plain_http_off_loopback_and_missing_files_are_refused(mirror: tuple[Path, str], tmp_path: Path) -> None:
    _, base = mirror
    env = cli_env({"NEURONDOCTOR_CACHE_DIR": str(tmp_path / "cache")})
    insecure = run_cli(["manifests", "update", "--url", "http://manifests.example.invalid/n2.json"], env=env)
    assert insecure.returncode == 2 and "only https://" in insecure.stderr
    missing = run_cli(["manifests", "update", "--url", f"{base}/nothing.json", "--timeout", "5"], env=env)
    assert missing.returncode == 2 and "download failed" in missing.stderr
    # one line, its cause and a next step, never requests' nested exception chain
    assert missing.stderr.strip() == (f"error: {base}/nothing.json: download failed: the server answered 404 File not "
                                      "found; next: check the URL, the proxy or the network; an air-gapped host uses "
                                      "--file")
