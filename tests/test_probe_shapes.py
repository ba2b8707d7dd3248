"""`probe shapes`: graph compilations per input shape, measured on real torch 2.9.0 + torch-xla 2.9.0
(PJRT_DEVICE=CPU), and the verdict on them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neurondoctor.rules.probes.shapes import bucket_edges, judge_shapes, varying_axes
from tests.conftest import REPO, cli_env, run_cli

MODEL = REPO / "tests" / "models" / "call_forms.py"


def shapes(venv: Path, factory: str) -> tuple[int, dict[str, object]]:
    result = run_cli(["probe", "shapes", f"{MODEL}:{factory}", "--python", str(venv / "bin" / "python"), "--json"],
                     env=cli_env({"PJRT_DEVICE": "CPU"}), timeout=900)
    return result.returncode, json.loads(result.stdout)


@pytest.mark.xla
def test_two_sequence_lengths_compile_two_graphs_and_get_a_bucket_plan(xla_venv: Path) -> None:
    code, report = shapes(xla_venv, "two_lengths")
    probe = report["probe"]
    assert isinstance(probe, dict) and probe["graphs"] == 2 and probe["torch_xla"] == "2.9.0"
    assert [run["shapes"]["input_ids"] for run in probe["shapes"]] == [[2, 8], [2, 13]]
    assert [run["measured_compiles"] for run in probe["shapes"]] == [1, 0]  # the 2nd shape: its warm-up compiled
    [finding] = report["findings"]
    assert (finding["id"], finding["category"]) == ("ND-SHAPE-001", "dynamic-shape")
    assert finding["evidence"]["bucket_plan"] == {"sequence length": [8, 16]}
    assert code == 0


@pytest.mark.xla
def test_one_fixed_shape_is_one_graph(xla_venv: Path) -> None:
    code, report = shapes(xla_venv, "fixed_shape")
    assert report["probe"]["graphs"] == 1 and report["findings"] == [] and code == 0  # type: ignore[index]


@pytest.mark.xla
def test_without_a_list_the_probe_varies_batch_and_sequence(xla_venv: Path) -> None:
    code, report = shapes(xla_venv, "build_dict")
    probe = report["probe"]
    assert isinstance(probe, dict) and code == 0
    assert [run["variant"] for run in probe["shapes"]] == ["example", "batch", "sequence"]
    assert probe["graphs"] == 3
    assert report["findings"][0]["evidence"]["varying"] == {"batch": [2, 4], "sequence length": [8, 16]}  # type: ignore


def test_the_verdict_on_a_probe_document() -> None:
    """The rule on what scripts/xla_shapes.py emits (the measurement itself is the XLA tier's)."""
    runs = [{"variant": "listed", "shapes": {"input_ids": [2, length], "labels": [2]}, "graphs": 1}
            for length in (8, 13, 100)]
    [finding] = judge_shapes({"shapes": runs}, "m.py:f")
    assert finding.title == ("3 input shapes compiled 3 graphs (sequence length 8, 13, 100): every new shape "
                             "recompiles the step")
    assert finding.evidence["bucket_plan"] == {"sequence length": [8, 16, 128]}
    assert judge_shapes({"shapes": runs[:1]}, "m.py:f") == []
    assert bucket_edges([1, 2, 3, 64, 65]) == [1, 2, 4, 64, 128]
    assert varying_axes([{"x": [1, 2]}, {"x": [1, 2, 3]}]) == {}  # another rank: not one axis varying


def test_without_torch_xla_it_is_skipped(torch_cpu_venv: Path) -> None:
    result = run_cli(["probe", "shapes", f"{MODEL}:two_lengths", "--python", str(torch_cpu_venv / "bin" / "python"),
                      "--json"], timeout=300)
    assert result.returncode == 4 and json.loads(result.stdout)["probe"]["status"] == "skipped"
    assert result.stderr.splitlines()[-1].startswith("skipped: torch_xla is not importable here")
