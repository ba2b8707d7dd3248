"""`probe ops --mode inventory` on real CPU torch 2.13.0: flagged ops, rewrites, and clear errors for bad models."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from neurondoctor.release_data.probe_data import load_op_support
from neurondoctor.rules.probes.ops import classify
from tests.conftest import REPO, run_cli

MODELS = REPO / "tests" / "models"


def probe(venv: Path, spec: str, *extra: str) -> tuple[int, str, str]:
    result = run_cli(["probe", "ops", spec, "--python", str(venv / "bin" / "python"), *extra], timeout=600)
    return result.returncode, result.stdout, result.stderr


def test_mask_indexing_nonzero_and_unique_are_flagged_and_einsum_is_not(torch_cpu_venv: Path) -> None:
    code, stdout, stderr = probe(torch_cpu_venv, f"{MODELS / 'filtering_model.py'}:build", "--json")
    assert code == 0, stderr
    report = json.loads(stdout)
    flagged = {finding["evidence"]["op"]: finding for finding in report["findings"] if finding["id"] == "ND-OP-001"}
    assert {"aten::index (bool mask)", "aten::nonzero", "aten::_unique2"} <= set(flagged)
    assert "torch.where" in flagged["aten::index (bool mask)"]["detail"]
    assert flagged["aten::nonzero"]["evidence"]["phases"] == {"forward": 1}
    assert flagged["aten::index_put (bool mask)"]["evidence"]["phases"] == {"backward": 1}
    assert all(finding["category"] == "cpu-fallback" for finding in flagged.values())
    assert not any("einsum" in finding["title"] or "bmm" in finding["title"] for finding in report["findings"])
    ops = {op["op"]: op for op in report["probe"]["ops"]}
    assert ops["aten::mul"]["status"] == "supported"  # the einsum decomposes to documented ops
    assert "aten::round" in report["probe"]["unknown"]  # no data: listed, not assumed fine


def test_rewritten_model_has_no_fallbacks(torch_cpu_venv: Path) -> None:
    code, stdout, _ = probe(torch_cpu_venv, f"{MODELS / 'filtering_model.py'}:build_rewritten", "--json")
    report = json.loads(stdout)
    assert report["findings"] == []  # no fallback, and the optimizer's CPU step counters are no sync
    assert code == 0


def test_builtin_models_and_module_specs(torch_cpu_venv: Path) -> None:
    code, stdout, _ = probe(torch_cpu_venv, "builtin:transformer")
    assert code == 0 and "distinct aten ops in forward + backward + optimizer step" in stdout
    code, stdout, _ = probe(torch_cpu_venv, "tests.models.filtering_model:build_rewritten")
    assert code == 0, stdout


def test_syntax_error_is_reported_with_file_and_line(torch_cpu_venv: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken_syntax.py"
    broken.write_text("import torch\n\ndef build(:\n    return None\n")
    code, stdout, stderr = probe(torch_cpu_venv, f"{broken}:build")
    assert code == 2 and stdout == ""
    assert stderr.splitlines()[-1].startswith("error: ") and "could not load the model: SyntaxError" in stderr
    assert "broken_syntax.py:3" in stderr and "Traceback" not in stderr


def test_factory_that_raises(torch_cpu_venv: Path) -> None:
    code, _, stderr = probe(torch_cpu_venv, f"{MODELS / 'filtering_model.py'}:explode")
    assert code == 2
    assert "the factory raised: RuntimeError: boom while building the model" in stderr


def test_model_that_hangs_is_stopped(torch_cpu_venv: Path) -> None:
    code, _, stderr = probe(torch_cpu_venv, f"{MODELS / 'filtering_model.py'}:hang", "--timeout", "8")
    assert code == 2 and "did not finish within 8 s and was stopped" in stderr


def test_environment_without_torch_is_skipped(tmp_path: Path) -> None:
    import subprocess

    venv = tmp_path / "no-torch"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    code, _, stderr = probe(venv, "builtin:mlp")
    assert code == 4 and stderr.splitlines()[-1].startswith("skipped: torch is not importable here")
    assert "next: name the environment that has it with --python PATH" in stderr.splitlines()[-1]
    assert "done in" not in stderr  # a probe that did not run is not "done"


def test_missing_factory_and_bad_spec(torch_cpu_venv: Path) -> None:
    code, _, stderr = probe(torch_cpu_venv, f"{MODELS / 'filtering_model.py'}:nothing")
    assert code == 2 and "has no nothing" in stderr
    code, _, stderr = probe(torch_cpu_venv, "no-colon-here")
    assert code == 2 and "MODEL_SPEC must be" in stderr


def test_an_op_the_compiler_cannot_lower_is_an_error() -> None:
    """The shipped op data marks `aten::triangular_solve` unsupported (NCC_EVRF001): an error, with its rewrite."""
    inventory = classify([{"op": "aten::triangular_solve", "count": 2, "phases": {"forward": 2}}],
                         load_op_support(), "model.py:build")
    finding = inventory.findings[0]
    assert (finding.id, finding.category, finding.severity) == ("ND-OP-002", "unsupported-op", "error")
    assert "forward ×2" in finding.title and finding.detail.startswith("Rewrite: ")


def test_inputs_as_users_write_them(torch_cpu_venv: Path) -> None:
    """A dict (`model(**batch)`), `(args, kwargs)` and one tensor."""
    for factory in ("build_dict", "build_args_kwargs", "build_tensor"):
        code, stdout, stderr = probe(torch_cpu_venv, f"{MODELS / 'call_forms.py'}:{factory}", "--json")
        assert code in (0, 1), (factory, stderr)
        ops = {entry["op"] for entry in json.loads(stdout)["probe"]["ops"]}
        assert {"aten::embedding", "aten::mean"} <= ops, (factory, ops)
    _, stdout, _ = probe(torch_cpu_venv, f"{MODELS / 'call_forms.py'}:build_dict", "--json")
    assert "aten::nll_loss_forward" in {entry["op"] for entry in json.loads(stdout)["probe"]["ops"]}


def test_a_probe_that_cannot_run_still_prints_one_json_document(torch_cpu_venv: Path, tmp_path: Path) -> None:
    code, stdout, stderr = probe(torch_cpu_venv, f"{MODELS / 'filtering_model.py'}:explode", "--json")
    document = json.loads(stdout)
    assert code == 2 and document["schema"] == "neurondoctor.probe-report/1" and document["kind"] == "ops"
    assert document["health"]["state"] == "unknown" and document["findings"] == []
    assert "the factory raised: RuntimeError: boom" in document["probe"]["message"]
    assert stderr.splitlines()[-1].startswith("error: ") and len(stdout.splitlines()) == 1
    import subprocess

    venv = tmp_path / "no-torch"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    code, stdout, _ = probe(venv, "builtin:mlp", "--json")
    assert code == 4 and json.loads(stdout)["probe"]["status"] == "skipped"


def _line(marker: str) -> int:
    lines = (MODELS / "porting_patterns.py").read_text().splitlines()
    return next(number for number, line in enumerate(lines, start=1) if f"# {marker}" in line)


def test_branches_and_item_in_forward_are_host_syncs_at_the_users_lines(torch_cpu_venv: Path) -> None:
    code, stdout, stderr = probe(torch_cpu_venv, f"{MODELS / 'porting_patterns.py'}:build_branching", "--json")
    assert code == 0, stderr
    syncs = [finding for finding in json.loads(stdout)["findings"] if finding["id"] == "ND-OP-003"]
    assert len(syncs) == 1 and (syncs[0]["category"], syncs[0]["severity"]) == ("host-sync", "warning")
    title = syncs[0]["title"]
    assert f"porting_patterns.py:{_line('BRANCH')} (forward)" in title, title
    assert f"porting_patterns.py:{_line('ITEM')} (forward)" in title, title
    assert "optimizer" not in title  # AdamW's step counters live on the CPU: no device sync


def test_optimizer_step_counters_are_not_a_sync(torch_cpu_venv: Path) -> None:
    for spec in ("builtin:transformer", f"{MODELS / 'filtering_model.py'}:build_rewritten"):
        _, stdout, _ = probe(torch_cpu_venv, spec, "--json")
        assert not [finding for finding in json.loads(stdout)["findings"] if finding["id"] == "ND-OP-003"], spec


def test_a_sparse_product_is_unsupported(torch_cpu_venv: Path) -> None:
    code, stdout, _ = probe(torch_cpu_venv, f"{MODELS / 'porting_patterns.py'}:build_sparse", "--json")
    report = json.loads(stdout)
    sparse = [finding for finding in report["findings"] if finding["evidence"]["op"].endswith(" (sparse)")]
    assert sparse and all((finding["id"], finding["category"]) == ("ND-OP-002", "unsupported-op")
                          for finding in sparse), [finding["title"] for finding in report["findings"]]
    assert "pytorch/xla#6853" in sparse[0]["evidence"]["source"] and code == 1


def test_the_probe_says_what_it_is_doing(torch_cpu_venv: Path) -> None:
    """Plain timestamped lines on stderr when it is not a terminal, stdout untouched."""
    code, stdout, stderr = probe(torch_cpu_venv, "builtin:mlp", "--json")
    steps = [line.split("] ", 1)[1] for line in stderr.splitlines() if re.match(r"^\[\d\d:\d\d:\d\d\] ", line)]
    assert steps[:4] == ["importing torch", "loading builtin:mlp", "building the model",
                         "recording the ops of one training step"], stderr
    assert steps[-1].startswith("done in ") and code == 0 and json.loads(stdout)["kind"] == "ops"
