"""ND-RT-006: a host on aws-neuronx-runtime-lib 2.35.30.0 (Neuron 2.33.0) is told that 2.35.33.0 (2.33.1) fixes a DMA
race that can hang the chip (release-notes/2.33.1.rst; manifests/package-fixes.json), as an info with the upgrade to
2.33.1's host packages. Near misses: a 2.33.1 host, and a 2.32.0 host whose runtime (2.34.10.0) the notes say
nothing of, are told nothing; the rule reads the data, so a fixes entry for another package fires the same way."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, check_json, cli_env
from tests.host_fixture import HostSpec, build_host

TITLE = ("aws-neuronx-runtime-lib 2.35.30.0: 2.35.33.0 (Neuron 2.33.1) fixes a race between hardware DGE DMA "
         "(DmaDirect2d, DmaTranspose) and other transpose DMA such as collectives, which can hang the chip's TPB AXI "
         "fabric")


@pytest.mark.parametrize(("os_name", "manager"), [("ubuntu24", "apt-get"), ("al2023", "dnf")])
def test_a_2_33_0_host_is_told_of_the_runtime_fix(tmp_path: Path, os_name: str, manager: str) -> None:
    kernel = {"kernel": "6.1.115-126.197.amzn2023.x86_64"} if os_name == "al2023" else {}
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release="2.33.0", os=os_name,
                                                  **kernel))
    code, report, _ = check_json(["--root", str(root)], env=cli_env())
    found = [item for item in report["findings"] if item["id"] == "ND-RT-006"]
    assert [(item["severity"], item["category"], item["title"]) for item in found] == [("info", "known-bug", TITLE)]
    finding = found[0]
    assert finding["evidence"] == {"package": "aws-neuronx-runtime-lib", "version": "2.35.30.0",
                                   "affected": ">=2.35.30.0,<2.35.33.0", "fixed_in": "2.35.33.0", "release": "2.33.1",
                                   "fix_id": "runtime-hwdge-dma-race"}
    assert "a job whose execution or collectives hang on this runtime" in finding["detail"]
    assert "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/release-notes/2.33.1.html" in finding["detail"]
    if manager == "apt-get":
        assert finding["fix"] == ["sudo apt-get install -y --allow-change-held-packages 'aws-neuronx-dkms=2.31.8.0*' "
                                  "'aws-neuronx-runtime-lib=2.35.33.0*' 'aws-neuronx-collectives=2.35.49.0*' "
                                  "'aws-neuronx-tools=2.33.38.0*'", "sudo rmmod neuron", "sudo modprobe neuron"]
    else:
        assert finding["fix"][0].startswith("sudo dnf install -y 'aws-neuronx-dkms-2.31.8.0*' "
                                            "'aws-neuronx-runtime-lib-2.35.33.0*'")
    assert code == 0 and report["health"]["state"] == "ok"


@pytest.mark.parametrize("release", ["2.33.1", "2.32.0"])
def test_near_miss_hosts_the_notes_say_nothing_of(tmp_path: Path, release: str) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.2xlarge", release=release))
    _, report, _ = check_json(["--root", str(root)], env=cli_env())
    assert "ND-RT-006" not in {item["id"] for item in report["findings"]}


def test_the_rule_is_the_data(tmp_path: Path) -> None:
    """A fixes entry of another package (the collectives of 2.33.0, a made-up entry of this test) fires from the data
    alone; with the entries gone, the 2.33.0 host is told nothing."""
    data = tmp_path / "manifests"
    shutil.copytree(REPO / "manifests", data)
    fixes = json.loads((data / "package-fixes.json").read_text())
    made_up = dict(fixes["fixes"][0], id="test-collectives", package="aws-neuronx-collectives",
                   affected="==2.35.43.0", fixed_in="2.35.49.0", what="a test's own bug", symptom="nothing real")
    (data / "package-fixes.json").write_text(json.dumps({**fixes, "fixes": [made_up]}))
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.2xlarge", release="2.33.0"))
    env = cli_env({"NEURONDOCTOR_MANIFESTS": str(data)})
    _, report, _ = check_json(["--root", str(root)], env=env)
    assert [item["title"] for item in report["findings"] if item["id"] == "ND-RT-006"] == [
        "aws-neuronx-collectives 2.35.43.0: 2.35.49.0 (Neuron 2.33.1) fixes a test's own bug"]
    (data / "package-fixes.json").write_text(json.dumps({**fixes, "fixes": []}))
    assert "ND-RT-006" not in {item["id"] for item in check_json(["--root", str(root)], env=env)[1]["findings"]}
