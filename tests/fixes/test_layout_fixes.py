"""The pip fixes of environments that are not venvs run verbatim with their own interpreter
(a conda install, a Python built into /usr/local), which must run here: tests/layouts.py builds those prefixes
with this machine's interpreter and a standard library linked in, so `PREFIX/bin/python -m pip` installs into the
prefix as it would on the host."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.conftest import check_json
from tests.fixes.conftest import STACK, FixIndexes, fix_setting
from tests.fixes.harness import bad_findings, fix_and_check
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


def test_a_conda_prefix_whose_python_moved_on(tmp_path: Path, venvs: VenvFactory, indexes: FixIndexes) -> None:
    """`conda install python=3.11` in a Miniforge prefix whose Neuron stack pip had installed under Python 3.10:
    conda moves its own packages, pip's stay in lib/python3.10/site-packages, where 3.11 never looks. Judged live:
    the prefix's own pip installs them again for the Python it runs, and the old folder is moved aside, kept."""
    root, env = fix_setting(tmp_path, indexes)
    prefix = conda_install(venvs, tmp_path / "miniforge3", "", stack_wheels(STACK), runnable=True)
    site = next(prefix.glob("lib/python3.*/site-packages"))
    old = prefix / "lib/python3.10/site-packages"
    old.parent.mkdir()
    site.rename(old)
    site.mkdir()
    _with_pip(prefix)
    write_pip_conf(prefix, extra_index=indexes.neuron)
    finding = fix_and_check(["--root", str(root), "--python", str(prefix / "bin" / "python")], env, "ND-VENV-005")
    lines = [str(line) for line in finding["fix"]]  # type: ignore[attr-defined]
    assert lines[0].startswith(f"{prefix}/bin/python -m pip install ") and lines[1].startswith(f"mv {old} {old}.")
    assert list(site.glob("torch_neuronx-*.dist-info")) and not old.exists()
    assert list(old.parent.glob("site-packages.neurondoctor-*/torch_neuronx-*.dist-info"))


def test_near_miss_a_conda_prefix_with_an_empty_folder_of_its_old_python(tmp_path: Path, venvs: VenvFactory,
                                                                         indexes: FixIndexes) -> None:
    """What conda leaves when every package moved with it: an empty lib/python3.10/site-packages. Clean."""
    root, env = fix_setting(tmp_path, indexes)
    prefix = conda_install(venvs, tmp_path / "miniforge3", "", stack_wheels(STACK), runnable=True)
    (prefix / "lib/python3.10/site-packages").mkdir(parents=True)
    _with_pip(prefix)
    write_pip_conf(prefix, extra_index=indexes.neuron)
    _, report, _ = check_json(["--root", str(root), "--python", str(prefix / "bin" / "python")], env=env)
    assert bad_findings(report) == set()
