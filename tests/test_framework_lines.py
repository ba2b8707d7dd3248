"""The framework lines beside torch-neuronx: for each, an environment built from what AWS
publishes (a DLC Dockerfile, the DLAMI's environment list, the release data) that checks clean, the failures users
reported diagnosed with the right category, and near misses beside them. The pip fixes of those failures run
verbatim in tests/fixes/test_framework_line_fixes.py; the host fix of aws-neuron-sdk#1071 runs here, in the
recording simulator."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import check_json, findings_by_id
from tests.fixes.harness import bad_findings, user_env
from tests.host_fixture import HostSpec, build_host, pinned_inf1_host
from tests.host_simulator import HostSimulator
from tests.layouts import conda_install, source_built_python
from tests.neuron_envs import HEALTHY_STACKS, NEURON_REPO, jax_stack_wheels, simple_wheel, stack_wheels, torch_wheel
from tests.wheelhouse import VenvFactory, WheelSpec, image_venv


def _image(tmp_path: Path, instance_type: str, packages: dict[str, str], runtime: bool) -> Path:
    """A DLC image on a host whose driver is loaded: the image's OS packages only (no DKMS package)."""
    return build_host(tmp_path / "image", HostSpec(
        instance_type=instance_type, release=None, container=True, extra_packages=packages,
        runtime_library=runtime, collectives_library=runtime, device_nodes=1,
        loaded_version="2.24.7.0" if instance_type.startswith("inf1") else "2.15.9.0"))


# --- TensorFlow on Inf1 (tensorflow-neuron) ---------------------------------------------------------------------
# aws/deep-learning-containers tensorflow/inference/docker/2.10/py3/sdk2.17.0/Dockerfile.neuron: Python 3.10.12
# built into /usr/local, the tensorflow-model-server-neuronx 2.10.1.2.10.8.* and aws-neuronx-tools 2.17.* debs (no
# runtime-lib: Inf1's frameworks bundle theirs), `pip install tensorflow-neuron[cc]==2.10.1.2.10.8.*` (neuron-cc
# 1.21.0.0 in release 2.17.0) and tensorboard-plugin-neuron 2.4.6.*, with `protobuf<4`.
TF_INF1_IMAGE = {"tensorflow-model-server-neuronx": "2.10.1.2.10.8.0", "aws-neuronx-tools": "2.17.0.0"}
TF_INF1_WHEELS = [simple_wheel("tensorflow-neuron", "2.10.1.2.10.8.0"), simple_wheel("tensorflow", "2.10.1"),
                  simple_wheel("neuron-cc", "1.21.0.0"), simple_wheel("tensorboard-plugin-neuron", "2.4.6.0"),
                  simple_wheel("protobuf", "3.20.3")]


# aws-neuron-sdk#1071: tensorflow-neuron for Inf1 (2.20.2's) does not run on the runtime-lib 2.21 brought for
# Trn1/Inf2 ("TDRV:arch_init Architecture not found"); AWS's way out is the runtime packages of Inf1's own line.
# Release 2.21.0 lists runtime-lib 2.12.23.0 and collectives 2.12.35.0 for inf1, 2.23.110.0 / 2.23.133.0 for the rest.
INF1_2_21 = {"aws-neuronx-dkms": "2.19.64.0", "aws-neuronx-tools": "2.20.204.0",
             "aws-neuronx-runtime-lib": "2.12.23.0", "aws-neuronx-collectives": "2.12.35.0"}
TF_INF1_2_21 = [simple_wheel("tensorflow-neuron", "2.10.1.2.12.2.0"), simple_wheel("tensorflow", "2.10.1"),
                simple_wheel("neuron-cc", "1.24.0.0", ("numpy<1.24",)), simple_wheel("numpy", "1.23.5")]


def _inf1_tensorflow_host(tmp_path: Path, venvs: VenvFactory, packages: dict[str, str]) -> Path:
    root = build_host(tmp_path / "inf1", HostSpec(instance_type="inf1.6xlarge", release=None,
                                                  package_versions=packages, loaded_version="2.19.64.0"))
    image_venv(venvs, root, root / "home" / "ubuntu", "aws_neuron_venv_tensorflow_inf1", "3.10", TF_INF1_2_21)
    return root


def test_the_trn_runtime_under_tensorflow_neuron_on_inf1(tmp_path: Path, venvs: VenvFactory) -> None:
    """aws-neuron-sdk#1071, and its fix run verbatim in the recording simulator: the Inf1 line put back."""
    trn_runtime = {**INF1_2_21, "aws-neuronx-runtime-lib": "2.23.110.0-9b5179492",
                   "aws-neuronx-collectives": "2.23.133.0-3e70920f2"}
    root = _inf1_tensorflow_host(tmp_path, venvs, trn_runtime)
    simulator = HostSimulator(root, tmp_path / "sim")
    env = simulator.env(user_env(tmp_path))
    before = check_json(["--root", str(root)], env=env)[1]
    found = {item["evidence"]["package"]: item for item in findings_by_id(before)["ND-INST-003"]}
    runtime = found["aws-neuronx-runtime-lib"]
    assert (runtime["category"], runtime["severity"]) == ("instance-unsupported", "error")
    assert runtime["title"] == ("aws-neuronx-runtime-lib 2.23.110.0 is built for inf2, trn1, trn2, not for this "
                                "inf1.6xlarge")
    assert runtime["fix"] == ["sudo apt-get install -y --allow-change-held-packages --allow-downgrades "
                              "'aws-neuronx-runtime-lib=2.12.23.0*'"]
    for item in found.values():
        for line in item["fix"]:
            done = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env, timeout=60)
            assert done.returncode == 0, (line, done.stderr)
    after = check_json(["--root", str(root)], env=env)[1]
    assert "ND-INST-003" not in findings_by_id(after)
    assert bad_findings(after) == set()
    assert simulator.commands()


def test_near_miss_the_inf1_runtime_line_under_tensorflow_neuron(tmp_path: Path, venvs: VenvFactory) -> None:
    root = _inf1_tensorflow_host(tmp_path, venvs, INF1_2_21)
    code, report, _ = check_json(["--root", str(root)])
    assert bad_findings(report) == set() and code == 0
    assert report["environments"][0]["holds"].startswith("TensorFlow")


def test_near_miss_tensorflow_2_under_tensorflow_neuron_is_its_own_framework(tmp_path: Path,
                                                                            venvs: VenvFactory) -> None:
    """TensorFlow 1.15 is torch-neuron's need, through neuron-cc; tensorflow-neuron 2.x runs on TensorFlow 2.x
    beside the same neuron-cc (the TF DLC above): the torch-neuron entry never judges it."""
    root = _inf1_tensorflow_host(tmp_path, venvs, INF1_2_21)
    assert "ND-REQ-003" not in findings_by_id(check_json(["--root", str(root)])[1])


# --- PyTorch on Inf1 (torch-neuron) with its compiler's TensorFlow: near misses of aws-neuron-sdk#440/#598 -------
TORCH_NEURON = [simple_wheel("torch-neuron", "1.13.1.2.11.13.0", ("torch==1.13.1",)), torch_wheel("1.13.1"),
                simple_wheel("neuron-cc", "1.24.0.0", ("numpy<1.24",)), simple_wheel("numpy", "1.23.5")]


def _inf1_torch_host(tmp_path: Path, venvs: VenvFactory, wheels: list[WheelSpec]) -> dict[str, list[dict[str, object]]]:
    root = pinned_inf1_host(tmp_path / "inf1")
    image_venv(venvs, root, root / "home" / "ubuntu", "aws_neuron_venv_pytorch_inf1", "3.10", wheels)
    return findings_by_id(check_json(["--root", str(root)])[1])


def test_near_miss_tensorflow_1_15_from_the_neuron_repository(tmp_path: Path, venvs: VenvFactory) -> None:
    """What neuron-cc[tensorflow] brings on Python 3.8+ (tensorflow 1.15.5.post1, the Neuron repository's)."""
    found = _inf1_torch_host(tmp_path, venvs, [*TORCH_NEURON, simple_wheel("tensorflow", "1.15.5.post1")])
    assert not {"ND-REQ-003", "ND-PIN-002"} & set(found)


def test_near_miss_no_tensorflow_is_a_serving_environment(tmp_path: Path, venvs: VenvFactory) -> None:
    """The Inf1 PyTorch inference DLC installs neuron-cc without its extra: it runs precompiled models, and a
    TensorFlow that is not there is not judged."""
    assert "ND-REQ-003" not in _inf1_torch_host(tmp_path, venvs, TORCH_NEURON)


def test_near_miss_tensorflow_2_without_the_compiler(tmp_path: Path, venvs: VenvFactory) -> None:
    """TensorFlow 1.15 is the compiler's need: without neuron-cc, a TensorFlow 2 for other work is not judged."""
    wheels = [spec for spec in TORCH_NEURON if spec.name not in ("neuron-cc", "numpy")]
    assert "ND-REQ-003" not in _inf1_torch_host(tmp_path, venvs, [*wheels, simple_wheel("tensorflow", "2.10.1")])


def test_the_trn_compiler_in_the_inf1_pytorch_image(tmp_path: Path, venvs: VenvFactory) -> None:
    """aws/deep-learning-containers#3082: pytorch-inference-neuron:1.13.1-neuron-py38-sdk2.10.0 shipped neuronx-cc
    2.6.0.19 and neuronx-hwm where Inf1 needs neuron-cc[tensorflow]. The Trn/Inf2 compiler is for another family
    (its release entries list trn1 and inf2), and the image has no Inf1 compiler."""
    root = _image(tmp_path, "inf1.xlarge", {"aws-neuronx-tools": "2.10.1.0"}, runtime=False)
    conda_install(venvs, root / "opt" / "conda", "3.8", [
        simple_wheel("torch-neuron", "1.13.1.2.7.1.0", ("torch==1.13.1",)), torch_wheel("1.13.1"),
        simple_wheel("neuronx-cc", "2.6.0.19+3d819e565"), simple_wheel("neuronx-hwm", "2.6.0.0+826e77395")])
    found = findings_by_id(check_json(["--root", str(root)])[1])
    wrong = {item["evidence"]["package"]: item for item in found["ND-INST-001"]}
    assert wrong["neuronx-cc"]["title"] == ("neuronx-cc 2.6.0.19+3d819e565 is built for inf2, trn1, not for this "
                                            "inf1.xlarge")
    assert wrong["neuronx-cc"]["category"] == "instance-unsupported"
    assert wrong["neuronx-cc"]["fix"][0].endswith("-m pip uninstall -y neuronx-cc")


# --- TensorFlow on Trn1/Inf2 (tensorflow-neuronx) ----------------------------------------------------------------
# aws/deep-learning-containers tensorflow/inference/docker/2.10/py3/sdk2.17.0/Dockerfile.neuronx: runtime-lib and
# collectives 2.20.*, tools 2.17.*, the model server deb, `pip install neuronx-cc==2.12.* tensorflow-neuronx==
# 2.10.1.2.1.*` and tensorboard-plugin-neuronx 2.6.10.* (release 2.17.0: neuronx-cc 2.12.68.0, runtime-lib and
# collectives 2.20.11.0). The image pins the model server at 2.10.1.2.10.2.* (release 2.15's); 2.17.0 lists 2.10.8.
TF_NEURONX_IMAGE = {"aws-neuronx-runtime-lib": "2.20.11.0-b7d33e68b", "aws-neuronx-collectives": "2.20.11.0-c101c322e",
                    "aws-neuronx-tools": "2.17.0.0", "tensorflow-model-server-neuronx": "2.10.1.2.10.2.0"}
TF_NEURONX_WHEELS = [simple_wheel("tensorflow-neuronx", "2.10.1.2.1.0"), simple_wheel("tensorflow", "2.10.1"),
                     simple_wheel("neuronx-cc", "2.12.68.0"), simple_wheel("tensorboard-plugin-neuronx", "2.6.10.0"),
                     simple_wheel("protobuf", "3.20.3")]


@pytest.mark.parametrize(("instance_type", "image", "wheels"), [
    ("inf1.xlarge", TF_INF1_IMAGE, TF_INF1_WHEELS), ("inf2.xlarge", TF_NEURONX_IMAGE, TF_NEURONX_WHEELS)])
def test_the_tensorflow_dlc_images_are_clean(tmp_path: Path, venvs: VenvFactory, instance_type: str,
                                             image: dict[str, str], wheels: list[WheelSpec]) -> None:
    """Both TensorFlow DLCs of release 2.17.0, each on its family: the Inf1 one without a runtime-lib."""
    root = _image(tmp_path, instance_type, image, runtime="aws-neuronx-runtime-lib" in image)
    prefix = source_built_python(venvs, root, "3.10", wheels, NEURON_REPO)
    code, report, _ = check_json(["--root", str(root)])
    assert bad_findings(report) == set() and code == 0
    assert report["release"]["environments"] == {str(prefix): "2.17.0"}
    assert report["environments"][0]["holds"].startswith("TensorFlow")


# --- JAX (jax-neuronx) ------------------------------------------------------------------------------------------
# The DLAMI's JAX venv (dlami/index.rst: `/opt/aws_neuronx_venv_jax_0_9` in 2.31, `…_jax_0_10` from 2.32) with
# release 2.31.1's JAX line and JAX 0.10.0, on Python 3.11.
JAX_2_31 = jax_stack_wheels("0.10.0")


def test_the_dlami_jax_venv_is_clean(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "trn1", HostSpec(instance_type="trn1.32xlarge", release="2.31.1"))
    image_venv(venvs, root, root / "opt", "aws_neuronx_venv_jax_0_9", "3.11", JAX_2_31)
    code, report, _ = check_json(["--root", str(root)])
    assert bad_findings(report) == set() and code == 0
    assert report["environments"][0]["holds"].startswith("JAX")


def test_near_miss_the_jax_venv_beside_the_pytorch_venv(tmp_path: Path, venvs: VenvFactory) -> None:
    """JAX and torch-xla each in a venv of their own, as the DLAMI ships them: no conflict."""
    root = build_host(tmp_path / "trn1", HostSpec(instance_type="trn1.32xlarge", release="2.31.1"))
    for name, wheels in (("aws_neuronx_venv_jax_0_9", JAX_2_31),
                         ("aws_neuronx_venv_pytorch_2_9", stack_wheels(HEALTHY_STACKS["2.31.1"]))):
        image_venv(venvs, root, root / "opt", name, "3.11", wheels)
    code, report, _ = check_json(["--root", str(root)])
    assert bad_findings(report) == set() and code == 0


# --- MXNet on Inf1 (mx-neuron) ----------------------------------------------------------------------------------
# aws/deep-learning-containers mxnet/inference/docker/1.8.0/py3/Dockerfile.neuron: conda at /opt/conda, `pip install
# neuron-cc[tensorflow]`, aws_mx 1.8.0 (`--no-deps`), then `pip install mx-neuron`. Its 2021 versions predate the
# release data; these are the recipe at release 2.17.0's: mx_neuron 1.8.0.2.4.40.0, neuron-cc 1.21.0.0 (the
# extra's TensorFlow 1.15.5.post1).
MXNET_INF1 = [simple_wheel("mx-neuron", "1.8.0.2.4.40.0"), simple_wheel("aws-mx", "1.8.0"),
              simple_wheel("neuron-cc", "1.21.0.0"), simple_wheel("tensorflow", "1.15.5.post1")]


def test_the_mxnet_inf1_dlc_recipe_is_clean(tmp_path: Path, venvs: VenvFactory) -> None:
    root = _image(tmp_path, "inf1.xlarge", {"aws-neuronx-tools": "2.17.0.0"}, runtime=False)
    prefix = conda_install(venvs, root / "opt" / "conda", "3.10", MXNET_INF1)
    code, report, _ = check_json(["--root", str(root)])
    assert bad_findings(report) == set() and code == 0
    assert report["release"]["environments"][str(prefix)].endswith("2.17.0")
    assert report["environments"][0]["holds"].startswith("MXNet")


def test_near_miss_mx_neuron_on_trn1_is_for_another_family(tmp_path: Path, venvs: VenvFactory) -> None:
    """The same environment on a Trn1: mx-neuron is built for Inf1 (the release data's instances)."""
    root = build_host(tmp_path / "trn1", HostSpec(instance_type="trn1.2xlarge", release="2.31.1"))
    conda_install(venvs, root / "opt" / "conda", "3.10", MXNET_INF1)
    found = findings_by_id(check_json(["--root", str(root)])[1])
    assert {item["evidence"]["package"] for item in found["ND-INST-001"]} >= {"mx-neuron", "neuron-cc"}
