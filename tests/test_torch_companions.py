"""torchvision / torchaudio that do not match torch: another X.Y (pytorch.org's pairs) or another
build (PyPI's CUDA torchvision beside a CPU torch). `import torchvision` then fails with `operator torchvision::nms
does not exist`. Wheels carry torchvision's real version.py layout; fixes are run against the local index."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import check_json
from tests.hf_index import pip, run_fix
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import simple_wheel, torch_wheel, torchvision_wheel
from tests.wheelhouse import VenvFactory, add_pip, venv_python, write_pip_conf

CPU_INDEX = "https://download.pytorch.org/whl/cpu"


def companion_findings(root: Path, venv: Path) -> list[dict[str, object]]:
    static = check_json(["--root", str(root), "--venv", str(venv)])[1]["findings"]
    live = check_json(["--root", str(root), "--python", str(venv_python(venv))])[1]["findings"]

    def picked(findings: list[dict[str, object]]) -> list[tuple[object, ...]]:
        return [(item["id"], item["title"], tuple(item["fix"])) for item in findings  # type: ignore[arg-type]
                if item["id"] in ("ND-TORCH-005", "ND-TORCH-006")]

    assert picked(static) == picked(live)
    return [item for item in static if item["id"] in ("ND-TORCH-005", "ND-TORCH-006")]


def _venv_with_pip(venvs: VenvFactory, name: str) -> Path:
    venv = venvs.create(name)
    add_pip(venv)
    return venv


def test_a_torchvision_for_another_torch_x_y(venvs: VenvFactory, hf_index_url: str, tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec(release="2.26.1"))
    venv = _venv_with_pip(venvs, "companion-xy")
    pip(venv, hf_index_url, "optimum-neuron[neuronx]==0.4.5")  # torch 2.8.0 (CPU) + torchvision 0.23.0+cpu
    write_pip_conf(venv)
    assert companion_findings(root, venv) == []
    venvs.install(venv, [torchvision_wheel("0.24.0", "cu128", "2.9.0")])  # `pip install torchvision` from PyPI
    found = companion_findings(root, venv)
    assert [(item["id"], item["severity"], item["title"]) for item in found] == [
        ("ND-TORCH-005", "error",
         "torchvision 0.24.0+cu128 is built for another torch than torch 2.8.0+cpu (torchvision 0.23 is)")]
    assert found[0]["fix"] == [f"{venv_python(venv)} -m pip install --force-reinstall --no-deps 'torchvision==0.23.*' "
                               f"--index-url {CPU_INDEX}"]
    run_fix(str(found[0]["fix"][0]).replace(f"--index-url {CPU_INDEX}", ""), hf_index_url)
    assert companion_findings(root, venv) == []


def test_a_cuda_torchvision_beside_a_cpu_torch(venvs: VenvFactory, hf_index_url: str, tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec(release="2.31.1"))
    venv = _venv_with_pip(venvs, "companion-build")
    venvs.install(venv, [torch_wheel("2.9.0"), torchvision_wheel("0.24.0", "cu128", "2.9.0"),
                         simple_wheel("numpy", "1.26.4"), simple_wheel("pillow", "11.3.0")])
    found = companion_findings(root, venv)
    assert [(item["id"], item["title"]) for item in found] == [
        ("ND-TORCH-006", "torchvision 0.24.0+cu128 is a CUDA build beside torch 2.9.0+cpu, a CPU build")]
    assert found[0]["fix"] == [f"{venv_python(venv)} -m pip install --force-reinstall --no-deps "
                               f"'torchvision==0.24.0+cpu' --index-url {CPU_INDEX}"]
    run_fix(str(found[0]["fix"][0]).replace(f"--index-url {CPU_INDEX}", ""), hf_index_url)
    assert companion_findings(root, venv) == []


def test_near_miss_torch_2_13_with_torchvision_0_28_and_a_matching_torchaudio(venvs: VenvFactory,
                                                                              tmp_path: Path) -> None:
    laptop = build_host(tmp_path / "laptop", HostSpec(release=None, instance_type=None, pci=False))
    venv = venvs.create("companion-2-13")
    venvs.install(venv, [torch_wheel("2.13.0"), torchvision_wheel("0.28.0+cpu", "cpu", "2.13.0"),
                         simple_wheel("torchaudio", "2.13.0+cpu")])
    assert companion_findings(laptop, venv) == []
