"""`probe ops --mode xla` on real torch 2.9.0 + torch-xla 2.9.0 (PJRT_DEVICE=CPU): the fallbacks the XLA
frontend really takes, per phase, and the comparison with the inventory's prediction."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import REPO, cli_env, run_cli

pytestmark = pytest.mark.xla
MODEL = REPO / "tests" / "models" / "filtering_model.py"


def probe_xla(venv: Path, factory: str) -> tuple[int, dict[str, object]]:
    result = run_cli(["probe", "ops", f"{MODEL}:{factory}", "--mode", "xla", "--python",
                      str(venv / "bin" / "python"), "--json"], env=cli_env({"PJRT_DEVICE": "CPU"}), timeout=900)
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def test_nonzero_falls_back_in_forward_and_backward(xla_venv: Path) -> None:
    code, report = probe_xla(xla_venv, "build")
    probe = report["probe"]
    assert isinstance(probe, dict) and probe["pjrt_device"] == "CPU" and probe["torch_xla"] == "2.9.0"
    ops = {op["op"]: op for op in probe["ops"]}
    assert ops["aten::nonzero"]["phases"]["forward"] >= 1 and ops["aten::nonzero"]["phases"]["backward"] >= 1
    assert "aten::_unique2" in ops
    assert probe["comparison"] == {"available": True, "predicted_not_observed": [], "observed_not_predicted": []}
    findings = report["findings"]
    assert isinstance(findings, list)
    assert all(finding["category"] == "cpu-fallback" for finding in findings)
    assert code == 0


def test_rewritten_model_has_no_fallbacks(xla_venv: Path) -> None:
    code, report = probe_xla(xla_venv, "build_rewritten")
    probe = report["probe"]
    assert isinstance(probe, dict)
    assert [op["op"] for op in probe["ops"] if op["status"] != "sync"] == []
    assert code == 0
