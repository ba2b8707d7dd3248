"""`probe ops` on real Hugging Face models: BERT, GPT-2, T5, Llama and ViT from tiny configs with
random weights, called `model(**batch)` on real CPU torch 2.13.0 with transformers. At most 5% of each model's
distinct ops are unknown (op-support.json was measured over this corpus by scripts/measure_op_support.py); the
optimizer's CPU step counters are never a sync finding; the forward syncs that remain are named at the model's own
line and the library line under it, with the way out the data file knows. A fused optimizer is an error with its
alternative; a foreach one is clean."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, run_cli

MODELS = REPO / "tests" / "models"
HF = MODELS / "hf_models.py"
UNKNOWN_SHARE = 0.05


def probe_json(venv: Path, spec: str) -> tuple[int, dict[str, Any], str]:
    result = run_cli(["probe", "ops", spec, "--python", str(venv / "bin" / "python"), "--json"], timeout=600)
    return result.returncode, json.loads(result.stdout), result.stderr


@pytest.mark.parametrize("factory", ["build_bert", "build_gpt2", "build_t5", "build_llama", "build_vit"])
def test_hugging_face_models_are_known_and_only_forward_syncs_are_reported(torch_cpu_venv: Path, factory: str
                                                                           ) -> None:
    code, report, stderr = probe_json(torch_cpu_venv, f"{HF}:{factory}")
    assert code == 0, stderr
    ops = report["probe"]["ops"]
    unknown = [op["op"] for op in ops if op["status"] == "unknown"]
    assert len(ops) >= 30  # a real transformer step, not a stub
    assert len(unknown) <= UNKNOWN_SHARE * len(ops), unknown
    assert "aten::_scaled_dot_product_flash_attention_for_cpu" not in unknown
    for finding in report["findings"]:
        assert finding["id"] == "ND-OP-003", finding  # no fallback, no unsupported op in these models
        phases = finding["evidence"]["phases"]
        assert "optimizer" not in phases, finding  # AdamW's step counters live on the CPU: no device sync
        sites = finding["evidence"]["sites"]
        assert sites and all(site["where"].startswith("modeling_") and " via masking_utils.py:" in site["where"]
                             for site in sites), sites
        assert "without attention_mask" in finding["detail"]


def test_the_mask_check_sync_goes_away_without_an_attention_mask(torch_cpu_venv: Path) -> None:
    """The way out the data file gives for transformers' mask check, run: the same Llama step without
    attention_mask reads nothing on the host."""
    code, report, stderr = probe_json(torch_cpu_venv, f"{HF}:build_llama_unmasked")
    assert code == 0, stderr
    assert report["findings"] == []
    assert not any(op["op"] == "aten::_local_scalar_dense" for op in report["probe"]["ops"])


def test_a_fused_optimizer_is_named_with_its_alternative(torch_cpu_venv: Path) -> None:
    code, report, stderr = probe_json(torch_cpu_venv, f"{MODELS / 'porting_patterns.py'}:build_fused_adamw")
    assert code == 1, stderr
    [finding] = report["findings"]
    assert finding["id"] == "ND-OP-002" and finding["category"] == "unsupported-op"
    assert finding["evidence"]["op"] == "aten::_fused_adamw_" and finding["evidence"]["phases"] == {"optimizer": 1}
    assert "AdamW(fused=True)" in finding["title"] and "RuntimeError" in finding["title"]
    assert "foreach=True" in finding["detail"] and "torch_xla.amp.syncfree.AdamW" in finding["detail"]
    assert "measured" in finding["evidence"]["source"]


def test_a_foreach_optimizer_is_clean(torch_cpu_venv: Path) -> None:
    code, report, stderr = probe_json(torch_cpu_venv, f"{MODELS / 'porting_patterns.py'}:build_foreach_adamw")
    assert code == 0, stderr
    assert report["findings"] == [] and report["probe"]["unknown"] == []
    assert any(op["op"].startswith("aten::_foreach_") for op in report["probe"]["ops"])
