"""The fixes of AWS's published support rules (manifests/support-ranges.json), run verbatim on a 2.31.1 trn1: the
pin back into a release's JAX range (ND-SUP-001) and the removal of a line its pages say does not run on this
family (ND-SUP-002)."""

from __future__ import annotations

from pathlib import Path

from tests.fixes.conftest import FixIndexes, broken_venv, fix_setting
from tests.fixes.harness import fix_and_check
from tests.neuron_envs import jax_stack_wheels, simple_wheel
from tests.wheelhouse import VenvFactory, add_pip, venv_python, write_pip_conf


def test_a_jax_above_the_releases_range_is_pinned_back(tmp_path: Path, venvs: VenvFactory,
                                                      indexes: FixIndexes) -> None:
    """`pip install -U jax` in the DLAMI's JAX venv of 2.31.1 took JAX 0.11.2; the 2.31 JAX NeuronX notes support
    0.7.0 to 0.10.0, and the printed pin brings jax and its jaxlib back to 0.10.0."""
    root, env = fix_setting(tmp_path, indexes)
    venv = venvs.create("fix-sup-001")
    add_pip(venv)
    venvs.install(venv, jax_stack_wheels("0.11.2"))
    write_pip_conf(venv, extra_index=indexes.neuron)
    finding = fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-SUP-001")
    assert finding["fix"] == [f"{venv_python(venv)} -m pip install 'jax==0.10.0'"]
    site = next(venv.glob("lib/python*/site-packages"))
    assert sorted(path.name for path in site.glob("jax*-*.dist-info")) == [
        "jax-0.10.0.dist-info", "jax_neuronx-0.10.0.1.0.10466.dist-info", "jaxlib-0.10.0.dist-info"]


def test_vllm_neuron_on_trn1_is_removed(tmp_path: Path, venvs: VenvFactory, indexes: FixIndexes) -> None:
    """vLLM Neuron of 2.33's line (0.29.0.1.x, which the release data does not list) installed into a 2.31.1 venv on
    a trn1: it runs on Trn2/Trn3 only, so the line removes it and the environment checks clean."""
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "fix-sup-002", indexes, {"vllm-neuron": [simple_wheel("vllm-neuron", "0.29.0.1.0")]})
    finding = fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-SUP-002")
    assert finding["severity"] == "error"
    assert finding["fix"] == [f"{venv_python(venv)} -m pip uninstall -y vllm-neuron"]
