"""Environment-level fixes run verbatim (issue 13 §1): a shadowing copy in the user site, a package for another
instance family, the Neuron repository as the only index, a venv whose base interpreter was removed."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from tests.conftest import check_json
from tests.fixes.harness import fix_and_check, user_env
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import HEALTHY_STACKS, NEURON_REPO, simple_wheel, stack_wheels, torch_wheel
from tests.wheelhouse import VenvFactory, add_pip, venv_python, write_pip_conf

STACK = HEALTHY_STACKS["2.31.1"]


def test_a_torch_copy_in_the_user_site(tmp_path: Path, venvs: VenvFactory) -> None:
    """`pip install --user torch==2.10.0` once, and every venv with the system site packages imports it."""
    env = user_env(tmp_path)
    venv = venvs.create("fix-shadow-001", system_site=True)
    venvs.install(venv, stack_wheels(STACK))
    write_pip_conf(venv)
    python = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    venvs.install(venv, [torch_wheel("2.10.0")], target=tmp_path / f"home/.local/lib/{python}/site-packages")
    areas = ["--select", "python-env", "--select", "pytorch-stack"]  # this machine's own host areas aside
    fix = fix_and_check(["--venv", str(venv), *areas], env, "ND-SHADOW-001")["fix"]
    assert str(fix[0]).startswith(f"rm -rf {tmp_path}/home/.local/lib/")


def test_torch_neuron_beside_torch_neuronx_on_trn1(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "host", HostSpec(release="2.31.1"))
    venv = venvs.create("fix-inst-001")
    add_pip(venv)
    venvs.install(venv, [*stack_wheels(STACK), simple_wheel("torch-neuron", "1.13.1.2.11.13.0")])
    write_pip_conf(venv)
    fix_and_check(["--root", str(root), "--venv", str(venv)], user_env(tmp_path), "ND-INST-001")


def test_the_neuron_repository_as_the_only_index(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "host", HostSpec(release="2.31.1"))
    venv = venvs.create("fix-pip-003")
    venvs.install(venv, stack_wheels(STACK))
    (venv / "pip.conf").write_text(f"[global]\nindex-url = {NEURON_REPO}\nfind-links = /srv/wheels\n")
    fix_and_check(["--root", str(root), "--venv", str(venv)], user_env(tmp_path), "ND-PIP-003")
    assert (venv / "pip.conf").read_text() == f"[global]\nextra-index-url = {NEURON_REPO}\nfind-links = /srv/wheels\n"


def test_a_venv_whose_base_interpreter_was_removed(tmp_path: Path, venvs: VenvFactory) -> None:
    """The printed `pythonX.Y -m venv --upgrade DIR` uses the pythonX.Y on PATH, as the user's shell would."""
    base = tmp_path / "python-base" / "bin"
    base.mkdir(parents=True)
    interpreter = base / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    interpreter.symlink_to(Path(sys.executable).resolve())
    venv = venvs.create("fix-venv-001", python=str(interpreter))
    venvs.install(venv, stack_wheels(STACK))
    write_pip_conf(venv)
    shutil.rmtree(tmp_path / "python-base")
    root = build_host(tmp_path / "host", HostSpec(release="2.31.1"))
    env = user_env(tmp_path)  # its PATH has this machine's python3.11
    fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-VENV-001")
    assert venv_python(venv).resolve().exists()


def test_the_neuron_repository_as_the_only_index_before_anything_is_installed(tmp_path: Path,
                                                                               venvs: VenvFactory) -> None:
    """Issue 26 §6: a fresh venv on an image whose pip.conf replaces PyPI with the Neuron repository (a cloud-init
    that wrote `index-url` where the install page says `extra-index-url`). Nothing Neuron is installed yet, which
    is exactly when `pip install torch-neuronx` cannot resolve torch: it is judged all the same."""
    root = build_host(tmp_path / "host", HostSpec(release="2.31.1"))
    venv = venvs.create("fix-pip-003-empty")
    (venv / "pip.conf").write_text(f"[global]\nindex-url = {NEURON_REPO}\n")
    fix_and_check(["--root", str(root), "--venv", str(venv)], user_env(tmp_path), "ND-PIP-003")
    assert (venv / "pip.conf").read_text() == f"[global]\nextra-index-url = {NEURON_REPO}\n"
    (venv / "pip.conf").write_text(f"[global]\nextra-index-url = {NEURON_REPO}\n")  # near miss: as the docs say
    assert check_json(["--root", str(root), "--venv", str(venv)], env=user_env(tmp_path))[1]["findings"] == []
