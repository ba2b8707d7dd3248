"""ND-TORCH-001's fix, run verbatim: PyPI's CUDA torch 2.10 over torch-neuronx 2.9 (with its four nvidia-* packages)
becomes the pinned torch's CPU build. The old fix reinstalled PyPI's `torch==2.9.0`, a CUDA build that *requires* the
nvidia-* packages it then removed (issue 13)."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import check_json, findings_by_id
from tests.fixes.local_release_data import local_release_data
from tests.fixes.test_pip_config_fixes import bad_findings, run_verbatim, user_env
from tests.host_fixture import HostSpec, build_host
from tests.local_index import build_index, serve
from tests.neuron_envs import HEALTHY_STACKS, cuda_torch_wheels, simple_wheel, stack_wheels, torch_wheel
from tests.wheelhouse import VenvFactory, venv_python, write_pip_conf

STACK = HEALTHY_STACKS["2.31.1"]


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """(PyPI + the Neuron repository, the PyTorch CPU index), each a PEP 503 index on 127.0.0.1."""
    root = tmp_path_factory.mktemp("torch-fix-indexes")
    build_index(root / "pypi", [simple_wheel("torch-xla", "2.9.0", ("torch==2.9.0",)), simple_wheel("numpy", "1.26.4")],
                [])
    build_index(root / "cpu", [torch_wheel("2.9.0+cpu")], [])
    with serve(root / "pypi" / "index") as pypi, serve(root / "cpu" / "index") as cpu:
        yield f"{pypi}/simple", f"{cpu}/simple"


def test_cuda_torch_over_torch_neuronx_becomes_the_pinned_cpu_torch(tmp_path: Path, venvs: VenvFactory,
                                                                     indexes: tuple[str, str]) -> None:
    pypi, cpu = indexes
    manifests = local_release_data(tmp_path / "manifests", neuron_index=pypi, cpu_index=cpu)
    env = {**user_env(tmp_path), "NEURONDOCTOR_MANIFESTS": str(manifests), "PIP_INDEX_URL": pypi}
    root = build_host(tmp_path / "host", HostSpec(release="2.31.1"))
    cuda = cuda_torch_wheels("2.10.0")
    venv = venvs.create("fix-torch-001")
    subprocess.run([str(venv_python(venv)), "-m", "ensurepip"], check=True, capture_output=True, timeout=300)
    wheels = [spec for spec in stack_wheels(STACK) if spec.name != "torch"] + cuda
    venvs.install(venv, wheels)
    write_pip_conf(venv, extra_index=pypi)
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
