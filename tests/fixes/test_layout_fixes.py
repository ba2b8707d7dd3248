"""The pip fixes of environments that are not venvs run verbatim with their own interpreter
(a conda install, a Python built into /usr/local), which must run here: tests/layouts.py builds those prefixes
with this machine's interpreter and a standard library linked in, so `PREFIX/bin/python -m pip` installs into the
prefix as it would on the host."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.fixes.conftest import STACK, FixIndexes, fix_setting
from tests.fixes.harness import fix_and_check
from tests.layouts import conda_install, install_into, runnable_installation
from tests.neuron_envs import simple_wheel, stack_wheels, torch_wheel
from tests.wheelhouse import VenvFactory, write_pip_conf


def _with_pip(prefix: Path) -> None:
    subprocess.run([str(prefix / "bin" / "python"), "-m", "ensurepip"], check=True, capture_output=True,
                   timeout=300)


def test_jax_in_a_conda_environment_with_torch_xla(tmp_path: Path, venvs: VenvFactory, indexes: FixIndexes) -> None:
    """A Miniforge install holding the 2.31.1 stack, where `pip install jax-neuronx[stable]` added JAX: the fix is
    the conda Python's own pip, and the check after it is clean."""
    root, env = fix_setting(tmp_path, indexes)
    prefix = conda_install(venvs, tmp_path / "miniforge3", "", [
        *stack_wheels(STACK), simple_wheel("jax-neuronx", "0.10.0.1.0.10466"), simple_wheel("jax", "0.10.0"),
        simple_wheel("jaxlib", "0.10.0")], runnable=True)
    _with_pip(prefix)
    write_pip_conf(prefix, extra_index=indexes.neuron)
    finding = fix_and_check(["--root", str(root), "--python", str(prefix / "bin" / "python")], env, "ND-PIN-002")
    assert finding["fix"] == [f"{prefix}/bin/python -m pip uninstall -y jax jaxlib jax-neuronx"]
    assert not list((prefix / "lib").glob("python*/site-packages/jax*"))


def test_a_newer_torch_in_a_python_built_into_usr_local(tmp_path: Path, venvs: VenvFactory,
                                                        indexes: FixIndexes) -> None:
    """The training DLC's layout (Python built into /usr/local, no venv) after `pip install -U torch`: ND-TORCH-001's
    lines put torch 2.9.0's CPU build back with that Python's pip, from the local CPU index."""
    root, env = fix_setting(tmp_path, indexes)
    prefix = tmp_path / "usr-local"
    version = runnable_installation(prefix)
    install_into(venvs, prefix / "lib" / f"python{version}" / "site-packages",
                 [spec for spec in stack_wheels(STACK) if spec.name != "torch"] + [torch_wheel("2.10.0")])
    _with_pip(prefix)
    write_pip_conf(prefix, extra_index=indexes.neuron)
    finding = fix_and_check(["--root", str(root), "--python", str(prefix / "bin" / "python")], env, "ND-TORCH-001")
    assert str(finding["fix"][0]).startswith(f"{prefix}/bin/python -m pip install")
    assert [path.name for path in prefix.glob("lib/python*/site-packages/torch-*.dist-info")] == [
        "torch-2.9.0+cpu.dist-info"]
