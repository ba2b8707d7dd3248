"""`check` on a venv with the real torch 2.13.0 CPU wheel: one JSON document, a quiet non-Neuron report."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.conftest import check_json, make_host_root, run_cli


def test_check_json_on_real_torch_venv(torch_cpu_venv: Path, tmp_path: Path) -> None:
    """Off Neuron hardware (a laptop, CI, this machine), a CPU torch venv is a porting start: quiet, one Next."""
    laptop = make_host_root(tmp_path / "laptop", instance_type=None)
    code, report, stderr = check_json(["--root", str(laptop), "--venv", str(torch_cpu_venv)])
    assert code == 0, stderr
    assert report["next_steps"] == [
        "neurondoctor probe ops mymodel.py:build (which ops would fall back to CPU on Trainium) · "
        f"neurondoctor venv create {torch_cpu_venv}-neuron --release 2.33.1 (the environment for it)"]
    environment = report["environments"][0]
    assert environment["torch"] == "2.13.0+cpu"
    assert environment["torch_flavour"] == "cpu"
    assert environment["neuron_packages"] == {}
    assert report["findings"] == []
    site = report["facts"]["environments"][0]["site_dirs"][0]
    names = {dist["name"] for dist in site["distributions"]}
    assert {"torch", "sympy", "filelock"} <= names
    torch = next(dist for dist in site["distributions"] if dist["name"] == "torch")
    assert torch["installer"] == "pip"


def test_live_and_static_agree_on_real_torch(torch_cpu_venv: Path, host_root: Path) -> None:
    _, static, _ = check_json(["--root", str(host_root), "--venv", str(torch_cpu_venv)])
    _, live, _ = check_json(["--python", str(torch_cpu_venv / "bin" / "python")])
    assert live["environments"][0]["torch"] == static["environments"][0]["torch"] == "2.13.0+cpu"
    assert live["environments"][0]["python"] == static["environments"][0]["python"] == ".".join(
        map(str, sys.version_info[:3]))


def test_text_report_on_a_non_neuron_venv(torch_cpu_venv: Path, host_root: Path, tmp_path: Path) -> None:
    laptop = make_host_root(tmp_path / "laptop", instance_type=None)
    quiet = run_cli(["check", "--root", str(laptop), "--venv", str(torch_cpu_venv)])
    assert quiet.returncode == 0 and quiet.stdout.count("Next: neurondoctor probe ops") == 1
    assert "[!]" not in quiet.stdout and "[✗]" not in quiet.stdout and "Healthy: 0 errors." in quiet.stdout
    result = run_cli(["check", "--root", str(host_root), "--venv", str(torch_cpu_venv)])
    assert result.returncode == 0
    assert "torch 2.13.0+cpu (cpu), no Neuron packages" in result.stdout
    # the fixture root says trn1.2xlarge: host areas apply and are clean; on a Trainium the CPU torch venv is not
    # a pass but a framework-missing warning, and no Next line (the finding's fix is the next step)
    assert result.stdout.count("[✓]") == 8 and "ND-FW-001" in result.stdout and "Next:" not in result.stdout
