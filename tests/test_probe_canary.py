"""`probe canary`: the real code path against a test double of torch_neuronx's documented trace API, on real
CPU torch; device-only checks are marked and skip without a Neuron device."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from neurondoctor.rules.probes.canary import result_findings
from tests.conftest import cli_env, run_cli
from tests.doubles.torch_neuronx_double import DOUBLE_SOURCE
from tests.doubles.torchneuron_double import DOUBLE_SOURCE as TORCHNEURON_SOURCE
from tests.host_fixture import HostSpec, build_host
from tests.wheelhouse import VenvFactory, WheelSpec

DOUBLE = WheelSpec("torch-neuronx", "2.9.0.2.15.32035", files=(("torch_neuronx/__init__.py", DOUBLE_SOURCE),))
# TorchNeuron 2.13 pairs with torch 2.13, this machine's real CPU torch; its wheels are for Python 3.12-3.14, the
# double runs on this machine's 3.11 (nothing in the canary asks the Python version).
NATIVE_DOUBLE = WheelSpec("torch-neuronx", "2.13.3.0.1024",
                          files=(("torch_neuronx/__init__.py", TORCHNEURON_SOURCE),))


def _double_venv(venvs: VenvFactory, torch_cpu_venv: Path, name: str, double: WheelSpec) -> Path:
    """A venv seeing the real torch 2.13.0 (through a .pth file) with a double of torch_neuronx installed by pip."""
    venv = venvs.create(name)
    site = next(venv.glob("lib/python*/site-packages"))
    torch_site = next(torch_cpu_venv.glob("lib/python*/site-packages"))
    (site / "real_torch.pth").write_text(f"{torch_site}\n")
    venvs.install(venv, [double])
    return venv


@pytest.fixture(scope="module")
def canary_venv(venvs: VenvFactory, torch_cpu_venv: Path) -> Path:
    """The PyTorch/XLA torch_neuronx double (`trace`)."""
    return _double_venv(venvs, torch_cpu_venv, "canary-double", DOUBLE)


@pytest.fixture(scope="module")
def native_canary_venv(venvs: VenvFactory, torch_cpu_venv: Path) -> Path:
    """The TorchNeuron double (the `neuron` device)."""
    return _double_venv(venvs, torch_cpu_venv, "canary-torchneuron-double", NATIVE_DOUBLE)


@pytest.fixture(scope="module")
def device_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_host(tmp_path_factory.mktemp("device-host") / "root", HostSpec(instance_type="trn1.2xlarge"))


def canary(venv: Path, root: Path, behaviour: str = "ok", *extra: str) -> tuple[int, dict[str, object], str]:
    result = run_cli(["probe", "canary", "--python", str(venv / "bin" / "python"), "--root", str(root), "--json",
                      "--runs", "20", *extra], env=cli_env({"FAKE_TORCH_NEURONX": behaviour}), timeout=600)
    return result.returncode, (json.loads(result.stdout) if result.stdout.strip() else {}), result.stderr


def finding_of(report: dict[str, object]) -> dict[str, object]:
    findings = report["findings"]
    assert isinstance(findings, list) and findings
    return findings[0]


def test_canary_passes_and_reports_compile_time_and_latency(canary_venv: Path, device_root: Path) -> None:
    code, report, stderr = canary(canary_venv, device_root)
    assert code == 0, stderr
    probe = report["probe"]
    assert isinstance(probe, dict)
    assert probe["status"] == "ok" and probe["traced_type"] in ("TopLevelTracedModule", "RecursiveScriptModule")
    assert probe["matches_cpu"] is True and probe["roundtrip_matches"] is True
    latency = probe["latency_ms"]
    assert isinstance(latency, dict) and latency["runs"] == 20 and latency["p50"] <= latency["p99"]


def test_cpu_backend_compiles_without_a_device(canary_venv: Path, tmp_path: Path) -> None:
    code, report, _ = canary(canary_venv, tmp_path, "ok", "--cpu-backend")
    probe = report["probe"]
    assert code == 0 and isinstance(probe, dict) and probe["cpu_backend"] is True and "latency_ms" not in probe


def test_compile_failure_names_the_unsupported_op(canary_venv: Path, device_root: Path) -> None:
    code, report, _ = canary(canary_venv, device_root, "compile-error")
    finding = finding_of(report)
    assert (finding["category"], finding["severity"]) == ("unsupported-op", "error")
    assert "NCC_EVRF001" in str(finding["title"]) and "triangular_solve" in str(finding["detail"])
    assert code == 1


def test_runtime_failure_is_classified(canary_venv: Path, device_root: Path) -> None:
    code, report, _ = canary(canary_venv, device_root, "runtime-error")
    finding = finding_of(report)
    assert finding["category"] == "cores-busy" and "canary failed at run" in str(finding["title"])
    assert code == 1


def test_import_failure_is_explained_by_check(canary_venv: Path, device_root: Path) -> None:
    code, report, _ = canary(canary_venv, device_root, "import-error")
    findings = report["findings"]
    assert isinstance(findings, list)
    assert findings[0]["category"] == "stock-torch-conflict"
    assert "ND-TORCH-001" in {finding["id"] for finding in findings}  # check: torch 2.13 vs torch-neuronx 2.9
    assert code == 1


def test_wrong_output_is_an_error(canary_venv: Path, device_root: Path) -> None:
    code, report, _ = canary(canary_venv, device_root, "wrong-output")
    assert finding_of(report)["id"] == "ND-CAN-002" and code == 1


def test_skips_without_device_or_torch_neuronx(canary_venv: Path, torch_cpu_venv: Path, device_root: Path,
                                               tmp_path: Path) -> None:
    code, _, stderr = canary(canary_venv, tmp_path)
    assert code == 4 and stderr.splitlines()[-1].startswith("skipped: no Neuron device under")
    code, _, stderr = canary(torch_cpu_venv, device_root)
    assert code == 4 and "torch-neuronx is not installed here" in stderr
    assert "next: name the environment that has it with --python PATH" in stderr.splitlines()[-1]


def _real_neuron_python() -> str | None:
    python = os.environ.get("NEURONDOCTOR_DEVICE_PYTHON")
    return python if python and Path("/dev/neuron0").exists() else None


@pytest.mark.device
@pytest.mark.skipif(_real_neuron_python() is None,
                    reason="needs a Neuron device (/dev/neuron0) and NEURONDOCTOR_DEVICE_PYTHON naming a "
                           "torch-neuronx interpreter; this machine has none")
def test_canary_on_a_real_neuroncore() -> None:
    python = _real_neuron_python()
    assert python is not None
    result = subprocess.run([sys.executable, "-m", "neurondoctor", "probe", "canary", "--python", python, "--json"],
                            capture_output=True, text=True, timeout=1800)
    report = json.loads(result.stdout)
    assert result.returncode == 0 and report["probe"]["matches_cpu"] is True


def test_a_round_trip_that_changes_the_output_is_an_error() -> None:
    """torch.jit.save/load must give the same model back; the judgment of a finished run, on its document."""
    findings = result_findings({"status": "ok", "matches_cpu": True, "roundtrip_matches": False})
    assert [(finding.id, finding.category, finding.severity) for finding in findings] == [
        ("ND-CAN-003", "compile-failure", "error")]
    assert result_findings({"status": "ok", "matches_cpu": True, "roundtrip_matches": True}) == []


def native_canary(venv: Path, root: Path, log: Path, behaviour: str = "ok",
                  *extra: str) -> tuple[int, dict[str, object], str]:
    result = run_cli(["probe", "canary", "--python", str(venv / "bin" / "python"), "--root", str(root), "--json",
                      "--runs", "20", *extra],
                     env=cli_env({"FAKE_TORCH_NEURONX": behaviour, "FAKE_TORCHNEURON_LOG": str(log)}), timeout=600)
    return result.returncode, (json.loads(result.stdout) if result.stdout.strip() else {}), result.stderr


def test_the_native_canary_runs_eagerly_on_the_neuron_device_then_compiled(
        native_canary_venv: Path, device_root: Path, tmp_path: Path) -> None:
    """TorchNeuron: the model and its input moved to `neuron`, run eagerly and compared with the CPU,
    then torch.compile with the `neuron` backend; never `torch_neuronx.trace` (the double has none)."""
    log = tmp_path / "steps.log"
    code, report, stderr = native_canary(native_canary_venv, device_root, log)
    assert code == 0, stderr
    probe = report["probe"]
    assert isinstance(probe, dict)
    assert (probe["path"], probe["device"], probe["torch_neuronx"]) == ("native", "neuron", "2.13.3.0.1024")
    assert probe["matches_cpu"] is True and probe["compiled_matches_cpu"] is True and report["findings"] == []
    assert probe["latency_ms"]["runs"] == 20 and "traced_type" not in probe  # type: ignore[index]
    steps = log.read_text().splitlines()
    assert "to:neuron" in steps and steps[-1] == "compile:neuron"
    text = run_cli(["probe", "canary", "--python", str(native_canary_venv / "bin" / "python"), "--root",
                    str(device_root), "--runs", "5"]).stdout
    assert "[✓] canary ran on the neuron device (TorchNeuron 2.13.3.0.1024): eager, then torch.compile" in text


@pytest.mark.parametrize(("behaviour", "stage", "category"), [
    ("device-error", "device", "cores-busy"), ("compile-error", "compile", "unsupported-op")])
def test_a_native_canary_failure_names_its_stage_and_cause(native_canary_venv: Path, device_root: Path,
                                                           tmp_path: Path, behaviour: str, stage: str,
                                                           category: str) -> None:
    code, report, _ = native_canary(native_canary_venv, device_root, tmp_path / "steps.log", behaviour)
    finding = finding_of(report)
    assert (finding["id"], finding["category"]) == ("ND-CAN-001", category)
    assert str(finding["title"]).startswith(f"canary failed at {stage}:") and code == 1


def test_a_native_output_off_the_cpu_is_an_error_eager_and_compiled(native_canary_venv: Path, device_root: Path,
                                                                   tmp_path: Path) -> None:
    code, report, _ = native_canary(native_canary_venv, device_root, tmp_path / "steps.log", "wrong-output")
    titles = [str(finding["title"]) for finding in report["findings"]]  # type: ignore[union-attr]
    assert [title.split(" differs")[0] for title in titles] == [
        "the model's eager output on the neuron device", "the torch.compile(backend='neuron') output"]
    assert code == 1


def test_the_native_canary_has_no_compile_only_mode(native_canary_venv: Path, tmp_path: Path) -> None:
    code, _, stderr = native_canary(native_canary_venv, tmp_path, tmp_path / "steps.log", "ok", "--cpu-backend")
    assert code == 4 and "TorchNeuron has no compile-only mode" in stderr
