"""ND-REL-002's, ND-REL-005's and ND-REL-006's fix, `neurondoctor manifests update`, run verbatim: a compiler
hotfix the bundled data does not list, an Inf1 compiler above every known one, and a host of the release the data
knows only in part (2.34.0: its host packages are not published in it) are judged once the manifest that lists them
is fetched, here from an organisation's mirror on 127.0.0.1 (NEURONDOCTOR_MANIFEST_URL) holding AWS's manifest plus a
synthetic next release."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import check_json
from tests.fixes.harness import fix_and_check, user_env, working_python
from tests.fixes.local_release_data import NEXT_COMPILER, NEXT_HOST, next_release_manifest
from tests.host_fixture import HostSpec, build_host
from tests.local_index import serve
from tests.neuron_envs import simple_wheel
from tests.wheelhouse import VenvFactory, write_pip_conf


def test_a_compiler_hotfix_the_release_data_lacks(tmp_path: Path, venvs: VenvFactory) -> None:
    venv = venvs.create("fix-rel-002")
    venvs.install(venv, [simple_wheel("neuronx-cc", NEXT_COMPILER, ("protobuf>3",)),
                         simple_wheel("protobuf", "3.20.3")])
    write_pip_conf(venv)
    with serve(next_release_manifest(tmp_path / "mirror")) as mirror:
        env = {**user_env(tmp_path), "NEURONDOCTOR_CACHE_DIR": str(tmp_path / "cache"),
               "NEURONDOCTOR_MANIFEST_URL": f"{mirror}/n2-manifest.json"}
        finding = fix_and_check(["--venv", str(venv)], env, "ND-REL-002")
    assert finding["fix"] == ["neurondoctor manifests update"]


def test_a_host_of_the_release_known_in_part(tmp_path: Path) -> None:
    """ND-REL-006's `manifests update` from the mirror: the host's release is then known whole, and nothing is left."""
    root = build_host(tmp_path / "host", HostSpec(release=None, package_versions=dict(NEXT_HOST)))
    with serve(next_release_manifest(tmp_path / "mirror", NEXT_HOST)) as mirror:
        env = {**user_env(tmp_path), "NEURONDOCTOR_CACHE_DIR": str(tmp_path / "cache"),
               "NEURONDOCTOR_MANIFEST_URL": f"{mirror}/n2-manifest.json"}
        finding = fix_and_check(["--root", str(root)], env, "ND-REL-006")
        after = check_json(["--root", str(root)], env=env)[1]
    assert finding["fix"] == ["neurondoctor manifests update"]
    assert after["findings"] == [] and after["release"]["host"] == "2.40.0"


def test_a_component_newer_than_every_release(tmp_path: Path, venvs: VenvFactory) -> None:
    """ND-REL-005: Inf1's neuron-cc above every known one (2.32.0 lists 1.24.0.0); no release known in part explains
    it (2.34.0 does not say it leaves Inf1's compiler out by name), so it is newer than the data until the mirror's
    manifest lists it."""
    venv = venvs.create("fix-rel-005", python=str(working_python(tmp_path / "bin", "3.10")))  # neuron-cc: 3.9, 3.10
    venvs.install(venv, [simple_wheel("neuron-cc", "1.25.0.0", ("protobuf>3",)), simple_wheel("protobuf", "3.20.3")])
    write_pip_conf(venv)
    with serve(next_release_manifest(tmp_path / "mirror", {"neuron-cc": "1.25.0.0"})) as mirror:
        env = {**user_env(tmp_path), "NEURONDOCTOR_CACHE_DIR": str(tmp_path / "cache"),
               "NEURONDOCTOR_MANIFEST_URL": f"{mirror}/n2-manifest.json"}
        finding = fix_and_check(["--venv", str(venv)], env, "ND-REL-005")
        after = check_json(["--venv", str(venv)], env=env)[1]
    assert finding["fix"] == ["neurondoctor manifests update"]
    assert after["release"]["environments"][str(venv)] == "2.40.0"
