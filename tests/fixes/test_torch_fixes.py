"""ND-TORCH-001's fix, run verbatim: PyPI's CUDA torch 2.10 over torch-neuronx 2.9 (with its four nvidia-* packages)
becomes the pinned torch's CPU build. The old fix reinstalled PyPI's `torch==2.9.0`, a CUDA build that *requires* the
nvidia-* packages it then removed."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import check_json, findings_by_id
from tests.fixes.conftest import FixIndexes, broken_venv, fix_setting
from tests.fixes.harness import bad_findings, fix_and_check, run_verbatim
from tests.neuron_envs import cuda_torch_wheels, simple_wheel, torch_wheel
from tests.wheelhouse import VenvFactory, venv_python


def test_cuda_torch_over_torch_neuronx_becomes_the_pinned_cpu_torch(tmp_path: Path, venvs: VenvFactory,
                                                                     indexes: FixIndexes) -> None:
    cpu = indexes.cpu
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "fix-torch-001", indexes, {"torch": cuda_torch_wheels("2.10.0")})
    before = check_json(["--root", str(root), "--venv", str(venv)], env=env)[1]
    finding = findings_by_id(before)["ND-TORCH-001"][0]
    python = venv_python(venv)
    assert finding["fix"][:2] == [
        f"{python} -m pip install --force-reinstall --no-deps 'torch==2.9.0+cpu' --index-url {cpu}",
        f"{python} -m pip install 'torch-xla==2.9.0'"]
    for line in finding["fix"]:
        run_verbatim(line, env)
    after = check_json(["--root", str(root), "--venv", str(venv)], env=env)[1]
    assert bad_findings(after) == set(), bad_findings(after)  # ND-TORCH-001 gone, no ND-TORCH-002 either
    assert after["environments"][0]["torch"] == "2.9.0+cpu"
    assert not list(next(venv.glob("lib/python*/site-packages")).glob("nvidia_*"))


def test_the_right_torch_as_pypis_cuda_build(tmp_path: Path, venvs: VenvFactory, indexes: FixIndexes) -> None:
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "fix-torch-002", indexes, {"torch": cuda_torch_wheels("2.9.0")})
    fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-TORCH-002")
    assert not list(next(venv.glob("lib/python*/site-packages")).glob("nvidia_*"))


def test_a_torch_xla_of_another_release(tmp_path: Path, venvs: VenvFactory, indexes: FixIndexes) -> None:
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "fix-torch-003", indexes,
                       {"torch-xla": [simple_wheel("torch-xla", "2.8.1", ("torch==2.8.0",))]})
    fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-TORCH-003")


def test_two_torch_records_in_one_site(tmp_path: Path, venvs: VenvFactory, indexes: FixIndexes) -> None:
    """An interrupted replace: torch 2.10.0's dist-info left beside 2.9.0's."""
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "fix-torch-004", indexes, {})
    other = venvs.create("fix-torch-004-source")
    venvs.install(other, [torch_wheel("2.10.0")])
    site = next(venv.glob("lib/python*/site-packages"))
    shutil.copytree(next(next(other.glob("lib/python*/site-packages")).glob("torch-2.10.0.dist-info")),
                    site / "torch-2.10.0.dist-info")
    fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-TORCH-004")
    assert [path.name for path in site.glob("torch-*.dist-info")] == ["torch-2.9.0+cpu.dist-info"]


def test_a_libneuronxla_from_another_release(tmp_path: Path, venvs: VenvFactory, indexes: FixIndexes) -> None:
    root, env = fix_setting(tmp_path, indexes)
    loose = simple_wheel("libneuronxla", "2.2.16974.0")  # 2.30's, which a loose `libneuronxla<3` pin took
    venv = broken_venv(venvs, "fix-pin-001", indexes, {"libneuronxla": [loose]})
    fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-PIN-001")


def test_torch_neuronx_without_torch_and_torch_xla(tmp_path: Path, venvs: VenvFactory,
                                                   indexes: FixIndexes) -> None:
    """`pip install --no-deps torch-neuronx …`: the fix installs the pinned torch's CPU build, then torch-xla."""
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "fix-pin-003", indexes, {"torch": [], "torch-xla": []})
    finding = fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-PIN-003")
    assert finding["fix"] == [f"{venv_python(venv)} -m pip install 'torch==2.9.0+cpu' --index-url {indexes.cpu}",
                              f"{venv_python(venv)} -m pip install 'torch-xla==2.9.0'"]
