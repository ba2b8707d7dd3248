"""Attack class: inputs aimed at the published support rules (manifests/support-ranges.json). A placed record whose
version carries shell text, beside the Neuron package a range or family rule looks for, must not become a finding's
fix word; a support file that is a FIFO or a nesting bomb is one error line, and the rest of the report comes out."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from neurondoctor.release_data.catalog import bundled_manifest_dir
from tests.conftest import check_json, cli_env
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import HEALTHY_STACKS, jax_stack_wheels, stack_wheels
from tests.wheelhouse import VenvFactory


def _place(venv: Path, name: str, version: str) -> None:
    """A dist-info written by hand, as no installer would write it."""
    record = next(venv.glob("lib/python*/site-packages")) / f"{name.replace('-', '_')}-0.dist-info"
    record.mkdir()
    (record / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n")


def test_a_version_with_shell_text_is_never_judged_or_a_fix_word(tmp_path: Path, venvs: VenvFactory) -> None:
    """jax `0.11.2; touch /tmp/pwned` beside jax-neuronx, vllm-neuron `0.29.0.1.0 $(reboot)` on a trn1: neither is a
    PEP 440 version, so no range or family is judged from them and no printed line carries their text."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge", release="2.31.1"))
    venv = venvs.create("sup-placed")
    venvs.install(venv, [spec for spec in jax_stack_wheels("0.10.0") if spec.name not in ("jax", "jaxlib")])
    _place(venv, "jax", "0.11.2; touch /tmp/pwned")
    _place(venv, "vllm-neuron", "0.29.0.1.0 $(reboot)")
    _, report, stderr = check_json(["--root", str(root), "--venv", str(venv)])
    assert "Traceback" not in stderr
    assert not [item for item in report["findings"] if item["id"].startswith("ND-SUP")]
    lines = [line for item in report["findings"] for line in item["fix"]]
    assert not [line for line in lines if "touch" in line or "reboot" in line], lines


def test_a_support_file_that_is_a_fifo_or_a_nesting_bomb(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge", release="2.31.1"))
    venv = venvs.create("sup-data")
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.31.1"]))
    for name, plant in (("fifo", lambda path: os.mkfifo(path)),
                        ("bomb", lambda path: path.write_text("[" * 100_000 + "]" * 100_000))):
        manifests = tmp_path / name
        shutil.copytree(bundled_manifest_dir(), manifests)
        target = manifests / "support-ranges.json"
        target.unlink()
        plant(target)
        code, report, stderr = check_json(["--root", str(root), "--venv", str(venv)],
                                          env=cli_env({"NEURONDOCTOR_MANIFESTS": str(manifests)}))
        assert code == 2 and "Traceback" not in stderr
        (line,) = stderr.strip().splitlines()
        assert line.startswith(f"error: {target}: ")
        assert {check["id"] for check in report["checks"]} >= {"driver", "runtime", "neuron-release"}
