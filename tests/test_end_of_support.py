"""AWS's end-of-support announcements as findings: ND-EOS-001 where the host's release no longer
supports what an environment holds, ND-EOS-002 in the releases that announce the end.

The environments are the stacks AWS publishes (tests/neuron_envs.py, read off the release-content pages), with
the package that makes one a training environment as the DLAMI's `aws_neuronx_venv_pytorch_2_9_nxd_training`
holds it (neuronx-distributed-training). The announcements are the pages manifests/end-of-support.json cites: the
XLA inference path ends on Trn2/Trn3 in 2.34.0 (announced in 2.33.0), XLA training in 2.30.0, PyTorch 2.6 in 2.27.0,
Transformers NeuronX after 2.26.1, JAX 0.7 in 2.30.0.
"""

from __future__ import annotations

import ensurepip
import shlex
import shutil
from pathlib import Path
from typing import Any, Optional

import pytest

from neurondoctor.neuron_version import release_tuple
from tests.conftest import check_json, cli_env, findings_by_id, run_cli
from tests.host_fixture import HostSpec, build_host
from tests.local_index import served_index
from tests.neuron_envs import HEALTHY_STACKS, NATIVE_STACKS, native_stack_wheels, simple_wheel, stack_wheels
from tests.wheelhouse import (
    VenvFactory,
    install_image_interpreter,
    relabel_python,
    repoint_to_image_interpreter,
    write_pip_conf,
)

NXD_TRAINING = simple_wheel("neuronx-distributed-training", "1.7.0")
# A host of a release newer than the data (2.34.0 when the data ends at 2.33.0): its driver, runtime, collectives
# and tools are each above 2.33.0's.
NEWER_HOST = {"aws-neuronx-runtime-lib": "2.36.12.0", "aws-neuronx-dkms": "2.32.4.0",
              "aws-neuronx-collectives": "2.36.20.0", "aws-neuronx-tools": "2.34.15.0"}


def _copied_venv(venvs: VenvFactory, root: Path, name: str, release: str, python: str,
                 extra: tuple[Any, ...] = ()) -> Path:
    # NxD Training's last release is 2.28 (announce-eos-nxdt-nxd-core-training): a training environment on a later
    # host is one that host carried over, with 2.28's stack.
    """A venv of `release`'s XLA stack (plus `extra`) copied into the host root, as `pythonX.Y -m venv` left it."""
    built = venvs.create(f"eos-{name}")
    stack = "2.28.0" if NXD_TRAINING in extra and release_tuple(release) > (2, 28) else release
    venvs.install(built, [*stack_wheels(HEALTHY_STACKS[stack]), *extra])
    install_image_interpreter(root, python)
    venv = root / "opt" / name
    shutil.copytree(built, venv, symlinks=True)
    relabel_python(venv, python)
    write_pip_conf(venv)
    return venv


def _eos(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [finding for finding in report["findings"] if finding["id"].startswith("ND-EOS")]


def test_xla_inference_on_a_trn2_of_2_33_is_told_its_end_in_2_34(tmp_path: Path, venvs: VenvFactory) -> None:
    """2.33.0 announces the end of PyTorch/XLA inference on Trn2/Trn3: an info with the TorchNeuron environment
    to build, on the environment's own Python (3.12 is one TorchNeuron has wheels for); the node stays ok."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release="2.33.0"))
    venv = _copied_venv(venvs, root, "xla-py312", "2.33.0", "3.12")
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)])
    (finding,) = _eos(report)
    assert (finding["id"], finding["category"], finding["severity"]) == ("ND-EOS-002", "end-of-support", "info")
    assert finding["title"] == (f"{venv}: Neuron 2.34.0 ends support for PyTorch/XLA inference (the XLA "
                                "torch-neuronx) on Trn2 and Trn3 (announced in 2.33.0); this host is on 2.33.0")
    assert finding["fix"] == [f"neurondoctor venv create {venv}-native --release 2.33.0 --framework pytorch-native "
                              "--python python3.12"]
    assert finding["docs"] == ["docs/findings/ND-EOS-002.md",  # its own page first, then the announcement
                               "https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/announcements/"
                               "neuron2.x/announce-no-support-torch-xla-inference-trn.html"]
    assert finding["evidence"]["packages"] == {"torch-neuronx": "2.9.0.2.15.32035"}
    assert code == 0 and report["health"]["state"] == "ok"


def test_xla_inference_on_a_trn2_newer_than_the_data_may_be_past_its_end(tmp_path: Path,
                                                                          venvs: VenvFactory) -> None:
    """A trn2 whose Neuron packages are above 2.33.1's may be a 2.34.0 host (whose host packages the data does not
    know): the data cannot tell, so the end is an info that says so, never a guessed warning; on Python 3.11 the fix
    picks 3.12, TorchNeuron's nearest Python, of the newest release known whole."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release="2.33.0",
                                                  package_versions=dict(NEWER_HOST)))
    venv = _copied_venv(venvs, root, "xla-py311", "2.33.0", "3.11")
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)])
    (finding,) = _eos(report)
    assert (finding["id"], finding["severity"]) == ("ND-EOS-002", "info")
    assert finding["title"] == (
        f"{venv}: Neuron 2.34.0 ends support for PyTorch/XLA inference (the XLA torch-neuronx) on Trn2 and Trn3; "
        "this host's Neuron packages are newer than 2.33.1, the newest release whose host packages neurondoctor's "
        "data lists, so it may be on 2.34.0 already")
    assert finding["evidence"]["newer_than_data"] is True
    assert finding["fix"] == [f"neurondoctor venv create {venv}-native --release 2.33.1 --framework pytorch-native "
                              "--python python3.12"]
    assert "ND-REL-006" in findings_by_id(report) and code == 0


def test_an_xla_training_environment_on_trn1_after_2_30_is_degraded_with_the_way_forward(
        tmp_path: Path, venvs: VenvFactory) -> None:
    """NxD Training on the XLA torch-neuronx, on a trn1 of 2.31.1: XLA training ended in 2.30. A warning (the node
    is degraded, never drained); Trn1 has no TorchNeuron, so the fix is the announcement's advice."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge", release="2.31.1"))
    venv = _copied_venv(venvs, root, "nxd-training", "2.31.1", "3.11", (NXD_TRAINING,))
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)])
    (finding,) = _eos(report)
    assert (finding["id"], finding["severity"]) == ("ND-EOS-001", "warning")
    assert finding["title"] == (f"{venv}: PyTorch/XLA training (NeuronX Distributed Training and the NxD Core "
                                "training APIs on the XLA torch-neuronx) is not supported from Neuron 2.30.0, and "
                                "this host is on 2.31.1")
    assert finding["fix"] == [
        "# the way forward: 'TorchNeuron, the native PyTorch backend, with FSDP, DTensor or DDP and TorchTitan (Trn2 "
        "and Trn3)' (https://awsdocs-neuron.readthedocs-hosted.com/en/latest/about-neuron/announcements/neuron2.x/"
        "announce-no-support-pytorch-xla-training.html)"]
    assert "PyTorch/XLA inference stays supported on Trn1 and Inf2" in finding["detail"]
    (apart,) = findings_by_id(report)["ND-REL-004"]  # the rebuild for 2.31.1 would have no NxD Training
    assert apart["evidence"]["not_in_host_release"] == ["neuronx-distributed-training"]
    assert "Neuron 2.31.1 does not list neuronx-distributed-training" in apart["detail"]
    assert report["health"]["state"] == "degraded" and code == 0
    health = run_cli(["health", "--root", str(root), "--venv", str(venv)])
    assert health.returncode == 0 and "health: degraded" in health.stdout


def test_an_xla_training_environment_on_a_trn2_of_2_33_gets_both_ends(tmp_path: Path, venvs: VenvFactory) -> None:
    """On a trn2 of 2.33.0 the training end (2.30) is a warning and the inference end (2.34) an info, each with the
    TorchNeuron environment to build."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release="2.33.0"))
    venv = _copied_venv(venvs, root, "nxd-training-trn2", "2.33.0", "3.13", (NXD_TRAINING,))
    _, report, _ = check_json(["--root", str(root), "--venv", str(venv)])
    found = {(item["id"], item["evidence"]["announcement"]): item for item in _eos(report)}
    assert set(found) == {("ND-EOS-001", "torch-xla-training"), ("ND-EOS-002", "torch-xla-inference-trn2-trn3")}
    for item in found.values():
        assert item["fix"] == [f"neurondoctor venv create {venv}-native --release 2.33.0 --framework pytorch-native "
                               "--python python3.13"]


@pytest.mark.parametrize(("instance_type", "release", "extra", "expected"), [
    ("trn1.2xlarge", "2.33.0", (), None),  # XLA inference stays supported on Trn1
    ("inf2.xlarge", "2.33.0", (), None),
    ("trn2.48xlarge", "2.32.0", (), None),  # before the release that announced the inference end
    ("trn1.2xlarge", "2.27.0", (NXD_TRAINING,), None),  # before the training end was announced
    ("trn1.2xlarge", "2.28.0", (NXD_TRAINING,), ("ND-EOS-002", "torch-xla-training")),
    ("trn1.2xlarge", "2.29.1", (NXD_TRAINING,), ("ND-EOS-002", "torch-xla-training")),
    ("trn1.2xlarge", "2.30.0", (NXD_TRAINING,), ("ND-EOS-001", "torch-xla-training")),
    ("trn1.2xlarge", "2.31.1", (simple_wheel("transformers-neuronx", "0.13.1315"),),
     ("ND-EOS-001", "transformers-neuronx")),
    ("trn1.2xlarge", "2.31.1", (simple_wheel("jax-neuronx", "0.10.0.1.0.9913"), simple_wheel("jax", "0.7.2")),
     ("ND-EOS-001", "jax-0.7")),
    ("trn1.2xlarge", "2.31.1", (simple_wheel("jax-neuronx", "0.10.0.1.0.9913"), simple_wheel("jax", "0.10.0")),
     None),
    ("trn1.2xlarge", "2.31.1", (simple_wheel("jax", "0.7.2"),), None),  # JAX without Neuron is not judged
])
def test_each_announcement_fires_on_its_plant_and_not_on_its_near_miss(
        tmp_path: Path, venvs: VenvFactory, instance_type: str, release: str, extra: tuple[Any, ...],
        expected: Optional[tuple[str, str]]) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type=instance_type, release=release))
    python = "3.11"
    planted = "-".join(f"{spec.name}{spec.version}" for spec in extra) or "stack"
    venv = _copied_venv(venvs, root, f"{instance_type}-{release}-{planted}", release, python, extra)
    _, report, _ = check_json(["--root", str(root), "--venv", str(venv)])
    found = [(item["id"], item["evidence"]["announcement"]) for item in _eos(report)]
    assert found == ([expected] if expected else []), found


def test_a_pytorch_2_6_environment_on_a_later_host_is_offered_the_hosts_release(tmp_path: Path,
                                                                                venvs: VenvFactory) -> None:
    """torch-neuronx 2.6 (2.26.1's) on a 2.31.1 host: PyTorch 2.6 ended in 2.27.0; the fix is an environment of the
    host's release beside it (run in tests/test_venv_create.py)."""
    root = build_host(tmp_path / "host", HostSpec(release="2.31.1"))
    venv = venvs.create("eos-pytorch-2-6")
    venvs.install(venv, [simple_wheel("torch-neuronx", "2.6.0.2.10.16998",
                                      ("torch==2.6.*", "torch-xla==2.6.*", "libneuronxla<3.0,>=2.2")),
                         simple_wheel("neuronx-cc", "2.21.33363.0"), simple_wheel("libneuronxla", "2.2.12677.0"),
                         simple_wheel("torch-xla", "2.6.0", ("torch==2.6.0",)), simple_wheel("torch", "2.6.0")])
    _, report, _ = check_json(["--root", str(root), "--venv", str(venv)])
    (finding,) = [item for item in _eos(report) if item["evidence"]["announcement"] == "pytorch-2.6"]
    assert finding["id"] == "ND-EOS-001" and finding["fix"] == [
        f"neurondoctor venv create {venv}-2.31.1 --release 2.31.1"]


def test_the_covered_inf1_driver_announcement_is_left_to_nd_inst_002(tmp_path: Path) -> None:
    """The Inf1 driver end (drivers above 2.24) is in the data with its page, and judged by ND-INST-002 alone."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="inf1.xlarge", release="2.31.1"))
    _, report, _ = check_json(["--root", str(root)])
    assert "ND-INST-002" in findings_by_id(report) and _eos(report) == []


def _python_for_torchneuron() -> Optional[str]:
    """A real Python 3.12-3.14 (TorchNeuron's wheels): pyenv's binaries, else one on PATH."""
    for minor in ("3.13", "3.12", "3.14"):
        found = sorted(Path("/root/.pyenv/versions").glob(f"{minor}*/bin/python{minor}")) + \
            ([Path(which)] if (which := shutil.which(f"python{minor}")) else [])
        if found:
            return str(found[0])
    return None


@pytest.mark.slow
def test_the_printed_torchneuron_environment_is_built_and_checks_clean(tmp_path: Path, venvs: VenvFactory) -> None:
    """ND-EOS-002's fix line, run against a local index of the 2.33.0 TorchNeuron stack on a real Python 3.12+:
    the environment it builds is clean on the trn2 (no finding above info)."""
    python = _python_for_torchneuron()
    if python is None:
        pytest.skip("needs a Python 3.12, 3.13 or 3.14 interpreter (TorchNeuron has wheels for those only)")
    minor = Path(python).name.removeprefix("python")
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release="2.33.0",
                                                  os="ubuntu26", kernel="7.0.0-1004-aws"))
    venv = _copied_venv(venvs, root, f"xla-py{minor}", "2.33.0", minor)
    (finding,) = _eos(check_json(["--root", str(root), "--venv", str(venv)])[1])
    line = finding["fix"][0]
    assert line.endswith(f"--python python{minor}")
    pip_wheel = next((Path(ensurepip.__file__).parent / "_bundled").glob("pip-*.whl"))
    with served_index(tmp_path / "index", native_stack_wheels(NATIVE_STACKS["2.33.0"]), (pip_wheel,)) as url:
        argv = [*shlex.split(line)[1:], "--python", python, "--installer", "pip", "--index-url", url]
        env = cli_env({"HOME": str(tmp_path / "home"), "XDG_CONFIG_DIRS": str(tmp_path / "xdg")})
        for variable in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "PIP_CONSTRAINT"):
            env.pop(variable, None)
        built = run_cli(argv, env=env, timeout=600)
    assert built.returncode == 0, built.stdout + built.stderr
    # built here with pyenv's interpreter; on the host the line runs with the image's /usr/bin/python3.X
    repoint_to_image_interpreter(Path(f"{venv}-native"), f"/usr/bin/python{minor}")
    rebuilt = check_json(["--root", str(root), "--venv", f"{venv}-native"])[1]["findings"]
    assert [item["id"] for item in rebuilt if item["severity"] != "info"] == []


def test_a_corrupt_announcement_file_is_one_error_line_and_the_report_goes_on(tmp_path: Path,
                                                                             venvs: VenvFactory) -> None:
    """An announcement without its page (or with an `ends_in` that is no release) is refused whole: one line on
    stderr, no ND-EOS finding, every other check still reports."""
    from neurondoctor.release_data.catalog import bundled_manifest_dir

    manifests = tmp_path / "manifests"
    shutil.copytree(bundled_manifest_dir(), manifests)
    broken = manifests / "end-of-support.json"
    broken.write_text('{"schema": "neurondoctor.end-of-support/1", "announcements": [{"id": "x", "what": "y", '
                      '"source": "http://example.invalid/", "way_forward": "z", "fix": "advice", "ends_in": "2.34",'
                      ' "packages": {}, "instances": []}]}')
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release="2.33.0"))
    venv = _copied_venv(venvs, root, "xla-corrupt-data", "2.33.0", "3.12")
    code, report, stderr = check_json(["--root", str(root), "--venv", str(venv)],
                                      env=cli_env({"NEURONDOCTOR_MANIFESTS": str(manifests)}))
    assert "Traceback" not in stderr and stderr.strip().splitlines() == [
        f"error: {broken}: unexpected shape: end-of-support.announcements[0].source: expected an https page"]
    assert _eos(report) == [] and code == 2
    assert {check["id"] for check in report["checks"]} >= {"driver", "runtime", "neuron-release"}


@pytest.mark.parametrize(("instance_type", "kind"), [("trn1.32xlarge", "xla"), ("inf2.xlarge", "xla"),
                                                     ("trn2.48xlarge", "native")])
def test_a_host_of_a_release_the_data_lacks_is_healthy_with_infos_only(tmp_path: Path, venvs: VenvFactory,
                                                                       instance_type: str, kind: str) -> None:
    """A host updated past the data's host packages (2.34.0's are not published in it) with the 2.33.0 environments
    it had: the verdict is ok; the doctor says what 2.34.0, known only in part, leaves unjudged (ND-REL-006), and
    nothing is judged on a guess of what 2.34.0 holds."""
    root = build_host(tmp_path / "host", HostSpec(instance_type=instance_type, release="2.33.0",
                                                  os="ubuntu26" if kind == "native" else "ubuntu24",
                                                  kernel="7.0.0-1004-aws" if kind == "native" else "6.8.0-1015-aws",
                                                  package_versions=dict(NEWER_HOST)))
    if kind == "native":
        built = venvs.create("eos-native-2.33.0")
        venvs.install(built, native_stack_wheels(NATIVE_STACKS["2.33.0"]))
        install_image_interpreter(root, "3.13")
        venv = root / "opt" / "native-py3.13"
        shutil.copytree(built, venv, symlinks=True)
        relabel_python(venv, "3.13")
        write_pip_conf(venv)
    else:
        venv = _copied_venv(venvs, root, f"xla-{instance_type}-newer", "2.33.0", "3.12")
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)])
    assert report["health"]["state"] == "ok" and code == 0, report["health"]
    assert {item["severity"] for item in report["findings"]} == {"info"}
    assert "ND-REL-006" in findings_by_id(report) and "ND-REL-005" not in findings_by_id(report)


def test_release_2_34_0_is_judged_on_what_is_known(tmp_path: Path) -> None:
    """`--release 2.34.0`: the release is in the data in part; a 2.33.1 host judged against it is told, in one line,
    what 2.34.0 does not publish (its host packages among them), never refused and never guessed."""
    done = check_json(["--release", "2.34.0", "--root", str(build_host(tmp_path / "host",
                                                                       HostSpec(release="2.33.1")))])
    code, report, _ = done
    assert report["release"]["target"] == "2.34.0"
    assert [(item["id"], item["severity"], item["title"]) for item in report["findings"]] == [(
        "ND-REL-006", "info", "Neuron 2.34.0 is known only in part; not judged: aws-neuronx-runtime-lib 2.35.33.0 "
        "(host), aws-neuronx-dkms 2.31.8.0 (host), aws-neuronx-collectives 2.35.49.0 (host), aws-neuronx-tools "
        "2.33.38.0 (host)")]
    assert report["findings"][0]["fix"] == ["neurondoctor manifests update"] and code == 0


