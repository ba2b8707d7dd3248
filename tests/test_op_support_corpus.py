"""The op-support data and how it is measured. Every entry says where it comes from; the measuring
script runs for real on the XLA tier (torch 2.9.0, torch-xla 2.9.0, torchvision 0.24.0 on PJRT_DEVICE=CPU) and
settles every op of a model; torchvision's ResNet and MobileNetV2 (which need that torch) are known at ≤ 5%; a fused
optimizer fails on the XLA device the way the data file says, as one JSON document that `explain` reads."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from neurondoctor.release_data.probe_data import load_compiler_fixes, load_op_support
from tests.conftest import REPO, cli_env, run_cli

MODELS = REPO / "tests" / "models"
STATUSES = {"supported", "cpu-fallback", "unsupported", "sync"}


def test_no_entry_without_a_status_and_a_source() -> None:
    ops = load_op_support()
    assert len(ops) >= 120
    for op, entry in ops.items():
        assert entry["status"] in STATUSES, op
        assert len(entry.get("source", "")) > 20, op  # a measurement or a page, never a bare claim
        if entry["status"] != "supported":
            assert entry.get("what") and entry.get("rewrite"), op  # a problem comes with its way out
    cpu_only = ops["aten::_scaled_dot_product_flash_attention_for_cpu"]
    assert cpu_only["status"] == "supported" and "math path" in cpu_only["xla_sees"]
    assert "never handed to the XLA device" in cpu_only["source"] and "llama" in cpu_only["source"]
    assert all("release" in fix and "source" in fix for fix in load_compiler_fixes())


def test_spellings_on_the_xla_device() -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        from measure_op_support import Measurement, xla_spellings
    finally:
        sys.path.remove(str(REPO / "scripts"))
    assert xla_spellings("aten::add_") == {"aten::add_", "aten::add", "aten::add_copy"}
    assert "aten::view_copy" in xla_spellings("aten::view")
    assert Measurement().status() == "unknown"
    assert Measurement(dispatched=["bert"], fell_back=["t5"]).status() == "cpu-fallback"  # one fallback wins
    assert Measurement(decomposed=["llama"]).status() == "supported"


@pytest.mark.xla
def test_the_measuring_script_settles_every_op_of_a_model(xla_venv: Path) -> None:
    result = subprocess.run([sys.executable, str(REPO / "scripts" / "measure_op_support.py"), "--python",
                             str(xla_venv / "bin" / "python"), f"{MODELS / 'hf_models.py'}:build_vit"],
                            capture_output=True, text=True, timeout=900, env=cli_env({"PJRT_DEVICE": "CPU"}))
    assert result.returncode == 0, result.stderr[-2000:]
    assert "vit: 35 distinct ops, 0 fallback counters, 0 not settled" in result.stdout
    assert "0 ops not yet in op-support.json; left unknown: none" in result.stdout  # the data file has them all


@pytest.mark.xla
@pytest.mark.parametrize("factory", ["build_resnet", "build_mobilenet"])
def test_torchvision_models_are_known(xla_venv: Path, factory: str) -> None:
    result = run_cli(["probe", "ops", f"{MODELS / 'hf_models.py'}:{factory}", "--python",
                      str(xla_venv / "bin" / "python"), "--json"], timeout=600)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    ops = report["probe"]["ops"]
    assert len(ops) >= 25 and len(report["probe"]["unknown"]) <= 0.05 * len(ops), report["probe"]["unknown"]
    assert report["findings"] == []


@pytest.mark.xla
def test_a_fused_optimizer_on_the_xla_device(xla_venv: Path) -> None:
    result = run_cli(["probe", "ops", f"{MODELS / 'porting_patterns.py'}:build_fused_adamw", "--mode", "xla",
                      "--python", str(xla_venv / "bin" / "python"), "--json"], env=cli_env({"PJRT_DEVICE": "CPU"}),
                     timeout=900)
    assert result.returncode == 2, result.stderr
    report = json.loads(result.stdout)  # a failed probe is still one document
    message = report["probe"]["message"]
    assert "`fused=True` requires all the params to be floating point Tensors of supported devices" in message
    explained = subprocess.run([sys.executable, "-m", "neurondoctor", "explain", "-", "--json"],
                               input=f"RuntimeError: {message}\n", capture_output=True, text=True, timeout=60,
                               env=cli_env(), cwd=REPO)
    assert explained.returncode == 0
    answer = json.loads(explained.stdout)
    assert answer["category"] == "unsupported-op"
    assert any("foreach=True" in way for way in answer["ways_out"])
