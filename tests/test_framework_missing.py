"""framework-missing: torch environments with nothing Neuron in them, built by real pip from the local
index (tests/hf_index.py). `pip install optimum-neuron` as PyPI serves it brings optimum's `torch>=1.11` (a CUDA
build with nvidia-* packages) and no Neuron package; a CPU torch venv on a laptop stays quiet unless judged with
`--release`. Static `--venv` and live `--python` agree."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import check_json, findings_by_id, run_cli
from tests.hf_index import pip, run_fix
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import torch_wheel
from tests.wheelhouse import VenvFactory, add_pip, venv_python, write_pip_conf

NEURON_REPO_FIX = "--extra-index-url https://pip.repos.neuron.amazonaws.com"


def framework_findings(root: Path, venv: Path, *extra: str) -> tuple[int, list[dict[str, object]]]:
    code, static, _ = check_json(["--root", str(root), "--venv", str(venv), *extra])
    _, live, _ = check_json(["--root", str(root), "--python", str(venv_python(venv)), *extra])

    def picked(report: dict[str, object]) -> list[dict[str, object]]:
        return [finding for finding in report["findings"] if str(finding["id"]).startswith("ND-FW-")]  # type: ignore[union-attr]

    assert [(item["id"], item["severity"], item["title"]) for item in picked(static)] == [
        (item["id"], item["severity"], item["title"]) for item in picked(live)]
    return code, picked(static)


def test_optimum_neuron_from_pypi_without_its_neuronx_extra(venvs: VenvFactory, hf_index_url: str,
                                                            tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec(release="2.31.1"))
    venv = venvs.create("fw-optimum-neuron")
    add_pip(venv)
    pip(venv, hf_index_url, "optimum-neuron==0.4.5")  # what the optimum-neuron README's `pip install` leaves
    write_pip_conf(venv)
    code, found = framework_findings(root, venv)
    assert [(item["id"], item["severity"]) for item in found] == [("ND-FW-002", "error")]  # not also ND-FW-001
    finding = found[0]
    assert finding["title"] == ("optimum-neuron 0.4.5 is installed without its [neuronx] extra: no neuronx-cc, "
                                "torch-neuronx, neuronx-distributed, libneuronxla")
    assert "Its [neuronx] extra pins the Neuron 2.26.1 packages, not this host's 2.31.1." in str(finding["detail"])
    assert finding["fix"] == [f"{venv_python(venv)} -m pip install 'optimum-neuron[neuronx]==0.4.5' {NEURON_REPO_FIX}"]
    assert code == 1
    run_fix(str(finding["fix"][0]), hf_index_url)
    _, after = framework_findings(root, venv)
    assert after == []
    report = check_json(["--root", str(root), "--venv", str(venv)])[1]
    assert "ND-REL-004" in findings_by_id(report)  # now a Neuron 2.26.1 venv on a 2.31.1 host: said, not hidden


def test_a_cpu_torch_venv_off_neuron_hardware_is_quiet_unless_judged_with_a_release(venvs: VenvFactory,
                                                                                    tmp_path: Path) -> None:
    laptop = build_host(tmp_path / "laptop", HostSpec(release=None, instance_type=None, pci=False))
    venv = venvs.create("fw-cpu-torch")
    venvs.install(venv, [torch_wheel("2.13.0")])
    code, found = framework_findings(laptop, venv)
    assert found == [] and code == 0
    judged_code, judged = framework_findings(laptop, venv, "--release", "2.31.1")
    assert [(item["id"], item["severity"]) for item in judged] == [("ND-FW-001", "error")]
    assert judged[0]["title"] == f"{venv} has torch 2.13.0+cpu (CPU build) and no Neuron framework"
    assert "Neuron 2.31.1 needs torch 2.9 + torch-neuronx 2.9.0.2.15.32035 + torch-xla 2.9.0" in str(
        judged[0]["detail"])
    assert judged[0]["fix"] == [f"neurondoctor venv create {venv}-neuron --release 2.31.1"]
    assert judged_code == 1  # --release R on an environment without R's torch fails
    text = run_cli(["check", "--root", str(laptop), "--venv", str(venv), "--release", "2.31.1"]).stdout
    assert "Neuron release       no Neuron packages installed" in text  # not "every package is in that release"


def test_near_miss_a_neuron_venv_has_no_framework_missing(venvs: VenvFactory, tmp_path: Path) -> None:
    from tests.neuron_envs import outside_venv

    root = build_host(tmp_path / "host", HostSpec(release="2.31.1"))
    report = check_json(["--root", str(root), *outside_venv(venvs)])[1]
    assert not [finding for finding in report["findings"] if finding["id"].startswith("ND-FW-")]
