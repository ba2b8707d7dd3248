"""The package world every fix-execution test installs from (issue 13 §1): PyPI with the Neuron repository's
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
from tests.local_index import served_index
from tests.neuron_envs import HEALTHY_STACKS, simple_wheel, stack_wheels, torch_wheel
from tests.wheelhouse import VenvFactory, WheelSpec, add_pip, write_pip_conf

STACK = HEALTHY_STACKS["2.31.1"]


@dataclass(frozen=True)
class FixIndexes:
    pypi: str  # PyPI and the Neuron repository in one
    cpu: str  # the PyTorch CPU index
    team: tuple[str, str]  # the user's own two extra indexes


@pytest.fixture(scope="session")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixIndexes]:
    root = tmp_path_factory.mktemp("fix-indexes")
    pypi_wheels = [spec for spec in stack_wheels(STACK) if spec.name != "torch"]  # torch: the CPU index's
    with served_index(root / "pypi", pypi_wheels) as pypi, \
            served_index(root / "cpu", [torch_wheel("2.9.0+cpu")]) as cpu, \
            served_index(root / "team-a", [simple_wheel("team-tools", "1.0")]) as team_a, \
            served_index(root / "team-b", [simple_wheel("team-models", "1.0")]) as team_b:
        yield FixIndexes(pypi, cpu, (team_a, team_b))


def fix_setting(tmp_path: Path, indexes: FixIndexes) -> tuple[Path, dict[str, str]]:
    """A Neuron 2.31.1 fixture host, and the user's environment: release data naming the local indexes, PyPI as
    the default index."""
    manifests = local_release_data(tmp_path / "manifests", neuron_index=indexes.pypi, cpu_index=indexes.cpu)
    env = {**user_env(tmp_path), "NEURONDOCTOR_MANIFESTS": str(manifests), "PIP_INDEX_URL": indexes.pypi}
    return build_host(tmp_path / "host", HostSpec(release="2.31.1")), env


def broken_venv(venvs: VenvFactory, name: str, pypi: str, replace: dict[str, list[WheelSpec]]) -> Path:
    """A 2.31.1 venv with pip, some of its packages swapped for `replace[name]` (what the user's install did)."""
    venv = venvs.create(name)
    add_pip(venv)
    wheels = [spec for spec in stack_wheels(STACK) if spec.name not in replace]
    venvs.install(venv, wheels + [spec for specs in replace.values() for spec in specs])
    write_pip_conf(venv, extra_index=pypi)
    return venv
