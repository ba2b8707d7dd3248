"""`manifests update` against a real HTTP server on 127.0.0.1: validated, newer-only, used by `check`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, cli_env, run_cli
from tests.local_index import serve

SHARED_MANIFEST = REPO.parent / "shared" / "reference" / "n2-manifest.json"


@pytest.fixture
def mirror(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    served = tmp_path / "served"
    served.mkdir()
    with serve(served) as base:
        yield served, base


def _newer_manifest() -> dict[str, object]:
    """The 2.32.0 manifest plus a 2.33.0 release, as AWS would publish the next one."""
    if not SHARED_MANIFEST.exists():
        pytest.skip("needs n2-manifest.json")
    document = json.loads(SHARED_MANIFEST.read_text())
    newest = json.loads(json.dumps(document["neuron_releases"][0]))
    newest["neuron_version"] = "2.33.0"
    for package in newest["packages"]:
        if package["name"] == "neuronx-cc":
            package["version"] = "2.28.1000.0"
    document["neuron_releases"].insert(0, newest)
    document["manifest_version"] = "2.33.0"
    return document


def test_update_installs_a_newer_manifest_that_check_then_uses(mirror: tuple[Path, str], tmp_path: Path) -> None:
    served, base = mirror
    (served / "n2-manifest.json").write_text(json.dumps(_newer_manifest()))
    env = cli_env({"NEURONDOCTOR_CACHE_DIR": str(tmp_path / "cache")})
    result = run_cli(["manifests", "update", "--url", f"{base}/n2-manifest.json"], env=env)
    assert result.returncode == 0, result.stderr
    assert "release data 2.33.0: 52 releases" in result.stdout
    listing = run_cli(["manifests", "list"], env=env)
    assert listing.stdout.splitlines()[2].startswith("2.33.0 ")
    assert "2.28.1000.0" in listing.stdout


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
    assert "2.33.0 " in run_cli(["manifests", "list"], env=env).stdout.splitlines()[2]


def test_an_older_manifest_does_not_replace_the_bundled_floor(mirror: tuple[Path, str], tmp_path: Path) -> None:
    served, base = mirror
    document = _newer_manifest()
    document["manifest_version"] = "2.31.1"
    document["neuron_releases"] = document["neuron_releases"][3:]
    (served / "n2-manifest.json").write_text(json.dumps(document))
    env = cli_env({"NEURONDOCTOR_CACHE_DIR": str(tmp_path / "cache")})
    result = run_cli(["manifests", "update", "--url", f"{base}/n2-manifest.json"], env=env)
    assert result.returncode == 2 and "older than the 2.33.0 in use" in result.stderr


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
