"""`manifests status`: which release data a check uses, its newest release and age, and where it came
from: the bundled copy, a `manifests update` copy (from a file here, as on an air-gapped host), an
NEURONDOCTOR_MANIFESTS override, and a cached copy that cannot be read (the bundled one serves)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import cli_env, run_cli
from tests.fixes.local_release_data import next_release_manifest


def status(env: dict[str, str]) -> dict[str, object]:
    done = run_cli(["manifests", "status", "--json"], env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def copies(document: dict[str, object]) -> dict[str, dict[str, object]]:
    return {item["role"]: item for item in document["copies"]}  # type: ignore[attr-defined,index]


def test_the_bundled_data_then_an_updated_copy(tmp_path: Path) -> None:
    env = cli_env({"NEURONDOCTOR_CACHE_DIR": str(tmp_path / "cache")})
    before = status(env)
    assert before["in_use"] == "bundled"
    bundled = copies(before)["bundled"]
    assert (bundled["manifest_version"], bundled["manifest_date"], bundled["releases"]) == ("2.34.0", "11/30/2026", 54)
    assert copies(before)["cached"]["present"] is False
    text = run_cli(["manifests", "status", "-v"], env=env).stdout
    assert "* bundled           Neuron 2.34.0, manifest of 11/30/2026" in text and "In use: bundled" in text
    assert "54 releases from n2-manifest.json + hand-kept 2.33.0, 2.33.1, 2.34.0" in text
    assert bundled["hand_kept"][1] == {"release": "2.33.1", "source": (
        "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/release-notes/2.33.1.html"),
        "not_shown": ["the Python versions of vllm-neuron 0.29.0.1.2.0"]}
    manifest = next_release_manifest(tmp_path / "mirror") / "n2-manifest.json"
    document = json.loads(manifest.read_text())
    document["manifest_date"] = "11/30/2026"
    manifest.write_text(json.dumps(document))
    assert run_cli(["manifests", "update", "--file", str(manifest)], env=env).returncode == 0
    after = status(env)
    cached = copies(after)["cached"]
    assert after["in_use"] == "cached"
    assert (cached["manifest_version"], cached["manifest_date"], cached["releases"], cached["source"]) == (
        "2.40.0", "11/30/2026", 55, str(manifest))  # 2.3.0-2.32.0, the hand-kept 2.33.0-2.34.0, and 2.40.0
    assert str(cached["fetched_at"]).endswith("Z")
    assert "* manifests update  Neuron 2.40.0" in run_cli(["manifests", "status", "-v"], env=env).stdout


def test_an_override_and_an_unreadable_cached_copy(tmp_path: Path) -> None:
    cache = tmp_path / "cache/manifests"
    cache.mkdir(parents=True)
    (cache / "sdk.json").write_text("{not json")
    env = cli_env({"NEURONDOCTOR_CACHE_DIR": str(tmp_path / "cache")})
    broken = status(env)
    assert broken["in_use"] == "bundled"
    assert copies(broken)["cached"]["problem"] == "sdk.json is not a readable JSON object"
    override = cli_env({"NEURONDOCTOR_CACHE_DIR": str(tmp_path / "cache"),
                        "NEURONDOCTOR_MANIFESTS": str(Path(__file__).parents[1] / "manifests")})
    assert status(override)["in_use"] == "override"
    assert "In use: NEURONDOCTOR_MANIFESTS" in run_cli(["manifests", "status", "-v"], env=override).stdout


def test_whole_and_partial_releases_and_the_announcements_it_judges_are_listed(tmp_path: Path) -> None:
    """2.34.0 is known only in part (its TorchNeuron families; release-notes/2.34.0.rst publishes no package list):
    `manifests status` says which releases are whole, what 2.34.0 lacks and where its whole list is (AWS's manifest at
    the v2.34.0 tag), and lists every end-of-support announcement with the release it takes effect."""
    env = cli_env({"HOME": str(tmp_path)})
    document = status(env)
    assert document["releases_without_package_data"] == []
    partial = copies(document)["bundled"]["partial_releases"]
    assert [item["release"] for item in partial] == ["2.34.0"]  # type: ignore[index,union-attr]
    assert {"aws-neuronx-runtime-lib", "neuronx-cc", "jax-neuronx"} <= set(partial[0]["not_known_packages"])  # type: ignore
    assert partial[0]["complete_source"] == (  # type: ignore[index]
        "https://github.com/aws-neuron/aws-neuron-sdk/blob/v2.34.0/src/helperscripts/n2-manifest.json")
    assert copies(document)["bundled"]["superseded_hand_kept"] == []
    ends = {item["id"]: item for item in document["end_of_support"]}  # type: ignore
    assert ends["torch-xla-inference-trn2-trn3"]["ends_in"] == "2.34.0"
    assert ends["torch-xla-inference-trn2-trn3"]["announced_in"] == "2.33.0"
    assert ends["torch-xla-training"]["ends_in"] == "2.30.0"
    assert all(item["source"].startswith("https://") for item in ends.values())
    text = run_cli(["manifests", "status", "-v"], env=env).stdout
    assert "Whole: 53 releases; known only in part: 2.34.0 (ND-REL-006)." in text
    assert ("The whole list: https://github.com/aws-neuron/aws-neuron-sdk/blob/v2.34.0/src/helperscripts/"
            "n2-manifest.json (`neurondoctor manifests update` fetches it).") in text
    assert "Not in the data:" not in text
    assert "  PyTorch/XLA inference (the XLA torch-neuronx) on Trn2 and Trn3: from 2.34.0 (announced in 2.33.0)" in text


def test_the_device_formats_say_which_are_assumed_and_where_a_device_run_records_them(tmp_path: Path) -> None:
    """The 2.31 sysfs tree, neuron-ls 2.34's JSON and Trn2's sysfs core_count stay ASSUMED and say so;
    every format names the member of a device-acceptance archive that shows the real one, and the script writes
    each of those members."""
    env = cli_env({"HOME": str(tmp_path)})
    formats = {item["name"]: item for item in status(env)["device_formats"]}  # type: ignore
    assumed = sorted(name for name, item in formats.items() if item["status"] == "ASSUMED")
    assert assumed == ["neuron-ls --output-format json (tools 2.34)", "sysfs core_count on Trn2/Trn3",
                       "sysfs tree, driver 2.31 and newer"]
    assert {item["status"] for item in formats.values()} == {"ASSUMED", "recorded"}
    script = (Path(__file__).parents[1] / "scripts" / "device-acceptance.sh").read_text()
    for item in formats.values():
        for member in item["confirmed_by"].split(", "):
            assert member.rsplit("/", 1)[-1] in script, member
    text = run_cli(["manifests", "status", "-v"], env=env).stdout
    assert "  ASSUMED  sysfs tree, driver 2.31 and newer: the sysfs guide says nodes moved" in text


def test_users_see_what_they_need_first_and_maintainers_the_rest_with_v(tmp_path: Path) -> None:
    """Without -v: the releases the doctor knows, their age and how to get newer data, in three lines; the copies,
    hand-kept releases, support rules and device formats only with -v, after the same summary."""
    env = cli_env({"NEURONDOCTOR_CACHE_DIR": str(tmp_path / "cache")})
    document = status(env)
    bundled = copies(document)["bundled"]
    short = run_cli(["manifests", "status"], env=env).stdout.splitlines()
    assert short[0] == (f"Release data: Neuron releases up to 2.34.0 (2.34.0 known only in part), 54 releases; AWS's "
                        f"manifest of 11/30/2026, {bundled['age_days']} days old (bundled copy).")
    assert short[1].startswith("Newer data: `neurondoctor manifests update`")
    assert short[2].endswith("`neurondoctor manifests status -v`.") and len(short) == 3
    detailed = run_cli(["manifests", "status", "-v"], env=env).stdout.splitlines()
    assert detailed[:2] == short[:2] and "In use: bundled (marked *)." in detailed
    assert any(line.startswith("Device formats") for line in detailed)
