"""The package world every fix-execution test installs from: PyPI with the Neuron repository's
packages, the PyPI placeholders, and the PyTorch CPU index, each a PEP 503 index on 127.0.0.1; and two team
indexes of the user's own, which every fix must keep."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fixes.harness import user_env
from tests.fixes.local_release_data import local_release_data
from tests.host_fixture import HostSpec, build_host
from tests.local_index import serve, served_index
from tests.neuron_envs import (
    HEALTHY_STACKS,
    jax_stack_wheels,
    placeholder_wheel,
    simple_wheel,
    stack_wheels,
    torch_wheel,
)
from tests.wheelhouse import VenvFactory, WheelSpec, add_pip, write_pip_conf

STACK = HEALTHY_STACKS["2.31.1"]


@dataclass(frozen=True)
class FixIndexes:
    pypi: str  # PyPI, with the Neuron repository's packages too
    neuron: str  # the same packages as the Neuron repository (another URL, as pip sees two indexes)
    cpu: str  # the PyTorch CPU index
    team: tuple[str, str]  # the user's own two extra indexes


@pytest.fixture(scope="session")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixIndexes]:
    root = tmp_path_factory.mktemp("fix-indexes")
    newest = HEALTHY_STACKS["2.33.0"]  # what a host without a release is offered
    others = [simple_wheel("starlette", "0.38.6"), simple_wheel("typing-extensions", "4.12.2"),
              simple_wheel("nki", "0.5.0"), *jax_stack_wheels("0.10.0")[3:]]  # the JAX 2.31.1 supports
    pypi_wheels = list({(spec.name, spec.version): spec for spec in [*stack_wheels(STACK), *stack_wheels(newest),
                                                                      *others]
                        if spec.name != "torch"}.values())  # torch: the CPU index's
    with served_index(root / "pypi", pypi_wheels) as pypi, serve(root / "pypi/index") as neuron, \
            served_index(root / "cpu", [torch_wheel("2.9.0+cpu")]) as cpu, \
            served_index(root / "team-a", [simple_wheel("team-tools", "1.0")]) as team_a, \
            served_index(root / "team-b", [simple_wheel("team-models", "1.0")]) as team_b:
        yield FixIndexes(pypi, f"{neuron}/simple", cpu, (team_a, team_b))


def fix_setting(tmp_path: Path, indexes: FixIndexes) -> tuple[Path, dict[str, str]]:
    """A Neuron 2.31.1 fixture host, and the user's environment: release data naming the local indexes, PyPI as
    the default index."""
    manifests = local_release_data(tmp_path / "manifests", neuron_index=indexes.neuron, cpu_index=indexes.cpu,
                                   pypi_index=indexes.pypi)
    env = {**user_env(tmp_path), "NEURONDOCTOR_MANIFESTS": str(manifests), "PIP_INDEX_URL": indexes.pypi}
    return build_host(tmp_path / "host", HostSpec(release="2.31.1")), env


def broken_venv(venvs: VenvFactory, name: str, indexes: FixIndexes, replace: dict[str, list[WheelSpec]]) -> Path:
    """A 2.31.1 venv with pip, some of its packages swapped for `replace[name]` (what the user's install did)."""
    venv = venvs.create(name)
    add_pip(venv)
    wheels = [spec for spec in stack_wheels(STACK) if spec.name not in replace]
    venvs.install(venv, wheels + [spec for specs in replace.values() for spec in specs])
    write_pip_conf(venv, extra_index=indexes.neuron)
    return venv


PLACEHOLDERS = (("torch-neuronx", "1.0"), ("neuronx-cc", "1.0.post1"), ("libneuronxla", "1.0"),
                ("transformers-neuronx", "0.1"))


def placeholder_venv(venvs: VenvFactory, name: str, indexes: FixIndexes) -> Path:
    """`pip install torch-neuronx neuronx-cc libneuronxla transformers-neuronx` without the Neuron repository: the
    four PyPI placeholders, in a venv whose pip.conf names the user's two team indexes and nothing else."""
    venv = venvs.create(name)
    add_pip(venv)
    venvs.install(venv, [placeholder_wheel(package, version) for package, version in PLACEHOLDERS])
    (venv / "pip.conf").write_text(f"[global]\nextra-index-url = {indexes.team[0]}\n    {indexes.team[1]}\n")
    return venv
