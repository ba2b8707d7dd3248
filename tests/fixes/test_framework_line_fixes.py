"""Failures users reported on the issue trackers for the framework lines beside
torch-neuronx, each diagnosed with its category and its printed lines run verbatim against local indexes, then the
check again (nothing left that is a warning or an error). The healthy fixtures and near misses of each line are in
tests/test_framework_lines.py."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import check_json, findings_by_id
from tests.fixes.conftest import FixIndexes, broken_venv, fix_setting
from tests.fixes.harness import bad_findings, fix_and_check, run_verbatim, user_env, working_python
from tests.fixes.local_release_data import local_release_data
from tests.host_fixture import pinned_inf1_host
from tests.local_index import served_index
from tests.neuron_envs import simple_wheel, torch_wheel
from tests.wheelhouse import VenvFactory, add_pip, venv_python, write_pip_conf

# The Inf1 PyTorch line as AWS's Inf1 page installs it (frameworks/torch/torch-neuron/setup/pytorch-install.rst:
# `torch-neuron neuron-cc[tensorflow] "protobuf<4"`), at the versions the release data lists from 2.20 on.
TORCH_NEURON = [simple_wheel("torch-neuron", "1.13.1.2.11.13.0", ("torch==1.13.1",)), torch_wheel("1.13.1"),
                simple_wheel("neuron-cc", "1.24.0.0", ("numpy<1.24",)), simple_wheel("numpy", "1.23.5"),
                simple_wheel("protobuf", "3.20.3")]
# What `pip install tensorflow-neuron` added (aws-neuron-sdk#440: "you installed tensorflow-neuron which brought in
# tensorflow==2.8.0"), at the Inf1 versions the release data lists for 2.20-2.33.
TENSORFLOW_NEURON = [simple_wheel("tensorflow-neuron", "2.10.1.2.12.2.0"), simple_wheel("tensorflow", "2.10.1")]


def test_tensorflow_2_under_torch_neuron(tmp_path: Path, venvs: VenvFactory) -> None:
    """aws-neuron-sdk#440 and #598: `torch.neuron.trace` fails in neuron-cc ("PyTorch to TF conversion failed")
    because tensorflow-neuron brought TensorFlow 2 into a torch-neuron environment. AWS: TensorFlow 2 is not
    compatible with torch-neuron (#462), tensorflow-neuron does not belong there (#440), TensorFlow 1.15 comes with
    neuron-cc[tensorflow] (#598). Two findings, both errors; their lines run in the order printed; then clean."""
    python310 = working_python(tmp_path / "bin", "3.10")
    root = pinned_inf1_host(tmp_path / "inf1")
    venv = venvs.create("inf1-torch-tf2", python=str(python310))
    add_pip(venv)
    venvs.install(venv, [*TORCH_NEURON, *TENSORFLOW_NEURON])
    with served_index(tmp_path / "neuron-index", [simple_wheel("tensorflow", "1.15.5.post1")]) as neuron_url, \
            served_index(tmp_path / "cpu-index", [torch_wheel("1.13.1+cpu")]) as cpu_url:
        write_pip_conf(venv, extra_index=neuron_url)
        manifests = local_release_data(tmp_path / "manifests", neuron_index=neuron_url, cpu_index=cpu_url)
        env = {**user_env(tmp_path), "NEURONDOCTOR_MANIFESTS": str(manifests), "PIP_INDEX_URL": cpu_url}
        args = ["--root", str(root), "--venv", str(venv)]
        found = findings_by_id(check_json(args, env=env)[1])
        conflict, tensorflow = found["ND-PIN-002"][0], found["ND-REQ-003"][0]
        assert (conflict["category"], conflict["severity"]) == ("framework-pin-mismatch", "error")
        assert conflict["fix"] == [f"{venv_python(venv)} -m pip uninstall -y tensorflow-neuron"]
        assert (tensorflow["category"], tensorflow["severity"]) == ("framework-pin-mismatch", "error")
        assert tensorflow["title"] == ("torch-neuron 1.13.1.2.11.13.0 beside neuron-cc needs tensorflow==1.15.*, "
                                       "which its metadata does not declare; tensorflow has 2.10.1")
        assert tensorflow["fix"] == [f"{venv_python(venv)} -m pip install 'tensorflow==1.15.*' "
                                     f"--extra-index-url {neuron_url}"]
        assert "ND-FW-001" not in found
        for line in [*conflict["fix"], *tensorflow["fix"]]:
            run_verbatim(str(line), env)
        after = check_json(args, env=env)[1]
    assert bad_findings(after) == set()
    site = next(venv.glob("lib/python3.10/site-packages"))
    assert sorted(path.name for path in site.glob("tensorflow*.dist-info")) == ["tensorflow-1.15.5.post1.dist-info"]


def test_jax_neuronx_installed_into_the_dlami_pytorch_venv(tmp_path: Path, venvs: VenvFactory,
                                                           indexes: FixIndexes) -> None:
    """aws-neuron-sdk#1050: the JAX setup page's `pip install jax-neuronx[stable]`, run inside the DLAMI's PyTorch
    venv (`aws_neuronx_venv_pytorch_2_1`). JAX beside torch-xla breaks `import torch_xla` (the training
    troubleshooting page); the way out removes jax-neuronx with JAX, never JAX alone (which would leave jax-neuronx
    without its framework). Here at the harness host's release, 2.31.1: jax-neuronx 0.10.0.1.0.10466, JAX 0.10.0."""
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "aws_neuronx_venv_pytorch_2_9", indexes, {
        "jax-neuronx": [simple_wheel("jax-neuronx", "0.10.0.1.0.10466")],
        "jax": [simple_wheel("jax", "0.10.0", ("jaxlib<=0.10.0,>=0.10.0",)), simple_wheel("jaxlib", "0.10.0")]})
    finding = fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-PIN-002")
    assert finding["fix"] == [f"{venv_python(venv)} -m pip uninstall -y jax jaxlib jax-neuronx"]
    assert finding["severity"] == "error"


def test_tensorflow_neuronx_installed_beside_torch_xla(tmp_path: Path, venvs: VenvFactory,
                                                       indexes: FixIndexes) -> None:
    """The same documented break for the TensorFlow line on Trn1/Inf2 (archive/nxd-training/training-
    troubleshooting.rst: TensorFlow in a torch-xla environment gives `generic_type: type "IrValue" is already
    registered!`): tensorflow-neuronx goes with TensorFlow. No tracker report of this pair was found; the page is
    AWS's own."""
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "trn1-torch-and-tf", indexes, {
        "tensorflow-neuronx": [simple_wheel("tensorflow-neuronx", "2.10.1.2.1.0", ("tensorflow==2.10.1",))],
        "tensorflow": [simple_wheel("tensorflow", "2.10.1")]})
    finding = fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-PIN-002")
    assert finding["fix"] == [f"{venv_python(venv)} -m pip uninstall -y tensorflow tensorflow-neuronx"]
