"""Neuron 2.33.1 hosts (2.33.0's but for dkms, runtime and collectives): the XLA stack on trn1, the native
TorchNeuron stack on trn2/trn3 on Ubuntu 26.04 with Python 3.13, the XLA torch-neuronx on trn2, and what TorchNeuron
on a trn1/inf2 is.

The versions are written out from release-notes/releasecontent.rst (2.33.0), release-notes/2.33.1.rst and
components/torchneuron.rst in
tests/neuron_envs.py and tests/host_fixture.py, not read from the data under test. This machine has Python 3.11
only: the 3.13 venvs are built here and relabelled as ones copied from the host (`check --root` reads them
statically), and `venv create --framework pytorch-native` is tested up to its plan (`--dry-run`) with an
interpreter that reports 3.13; the build itself needs a real Python 3.12-3.14.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import check_json, cli_env, findings_by_id, run_cli
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import (
    HEALTHY_STACKS,
    NATIVE_STACKS,
    native_stack_wheels,
    simple_wheel,
    stack_wheels,
    torch_wheel,
)
from tests.wheelhouse import VenvFactory, install_image_interpreter, relabel_python, write_pip_conf

RELEASE = "2.33.1"  # the newest release known whole; 2.33.0 differs only in host packages (release-notes/2.33.1.rst)
NATIVE_HOST = {"os": "ubuntu26", "kernel": "7.0.0-1004-aws"}

_BUILT: dict[str, Path] = {}


def _venv(venvs: VenvFactory, kind: str, root: Path, python: str) -> Path:
    """A copy of the 2.33.0 venv of `kind` (`native` or `xla`, pip runs once each) inside the host root, as
    `pythonX.Y -m venv` left it there."""
    if kind not in _BUILT:
        built = venvs.create(f"release-2.33-{kind}")
        venvs.install(built, native_stack_wheels(NATIVE_STACKS[RELEASE]) if kind == "native"
                      else stack_wheels(HEALTHY_STACKS[RELEASE]))
        _BUILT[kind] = built
    install_image_interpreter(root, python)
    venv = root / "opt" / f"{kind}-py{python}"
    shutil.copytree(_BUILT[kind], venv, symlinks=True)
    relabel_python(venv, python)
    write_pip_conf(venv)
    return venv


def _findings(report: dict[str, object]) -> list[tuple[str, str, str]]:
    return [(item["id"], item["severity"], item["title"]) for item in report["findings"]]  # type: ignore


@pytest.mark.parametrize("instance_type", ["trn2.48xlarge", "trn2u.48xlarge", "trn2.3xlarge", "trn3.3xlarge"])
def test_a_healthy_native_torchneuron_host(tmp_path: Path, venvs: VenvFactory, instance_type: str) -> None:
    """torch-neuronx 2.14.3.0.* + torch 2.14.0 + neuronx-cc + nki, no torch-xla, on Ubuntu 26.04 and Python 3.13."""
    root = build_host(tmp_path / "host", HostSpec(instance_type=instance_type, release=RELEASE, **NATIVE_HOST))
    venv = _venv(venvs, "native", root, "3.13")
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)], env=cli_env())
    assert _findings(report) == [] and code == 0 and report["health"]["state"] == "ok"
    assert report["release"]["host"] == RELEASE and report["release"]["environments"][str(venv)] == RELEASE
    assert report["environments"][0]["python"].startswith("3.13")
    hardware = next(check for check in report["checks"] if check["id"] == "hardware")
    assert "sysfs: driver-2.31 layout" in hardware["summary"]
    cores = {"trn2.48xlarge": 64, "trn2u.48xlarge": 64, "trn2.3xlarge": 4, "trn3.3xlarge": 4}[instance_type]
    assert f"({cores} logical NeuronCores at LNC=2) on PCI" in hardware["summary"]


def test_a_torchneuron_whose_version_is_the_familys_stem(tmp_path: Path, venvs: VenvFactory) -> None:
    """`2.14.3.0` itself is in the family `2.14.3.0.*` (PEP 440; `pip install 'torch-neuronx==2.14.3.0.*'`
    takes it), as a wheel built without a build number is. It was "from a release after the data"."""
    from dataclasses import replace

    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release=RELEASE, **NATIVE_HOST))
    built = venvs.create("release-2.33-native-stem")
    venvs.install(built, native_stack_wheels(replace(NATIVE_STACKS[RELEASE], torch_neuronx="2.14.3.0")))
    install_image_interpreter(root, "3.13")
    venv = root / "opt" / "native-stem-py3.13"
    shutil.copytree(built, venv, symlinks=True)
    relabel_python(venv, "3.13")
    write_pip_conf(venv)
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)], env=cli_env())
    assert _findings(report) == [] and code == 0
    assert report["release"]["environments"][str(venv)] == RELEASE


def test_the_xla_torch_neuronx_on_trn1_and_trn2_stays_healthy(tmp_path: Path, venvs: VenvFactory) -> None:
    for instance_type, os_name in (("trn1.2xlarge", "ubuntu24"), ("trn2.48xlarge", "ubuntu24")):
        root = build_host(tmp_path / instance_type, HostSpec(instance_type=instance_type, release=RELEASE,
                                                             os=os_name))
        venv = _venv(venvs, "xla", root, "3.12")
        code, report, _ = check_json(["--root", str(root), "--venv", str(venv)], env=cli_env())
        # on the trn2 2.33.0 announces the end of the XLA inference path in 2.34.0 (tests/test_end_of_support.py)
        expected = [] if instance_type.startswith("trn1") else [("ND-EOS-002", "info")]
        assert [finding[:2] for finding in _findings(report)] == expected and code == 0, instance_type
        assert report["health"]["state"] == "ok"
        assert report["release"]["host"] == RELEASE and report["release"]["environments"][str(venv)] == RELEASE


@pytest.mark.parametrize("instance_type", ["trn1.32xlarge", "inf2.xlarge"])
def test_torchneuron_on_trn1_or_inf2_is_instance_unsupported(tmp_path: Path, venvs: VenvFactory,
                                                              instance_type: str) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type=instance_type, release=RELEASE, **NATIVE_HOST))
    venv = _venv(venvs, "native", root, "3.13")
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)], env=cli_env())
    assert [(item["id"], item["category"]) for item in report["findings"]] == [
        ("ND-INST-001", "instance-unsupported")]
    finding = report["findings"][0]
    assert finding["title"] == (f"torch-neuronx {NATIVE_STACKS[RELEASE].torch_neuronx} is built for trn2, trn3, not "
                                f"for this {instance_type}")
    assert code == 1 and report["health"]["state"] == "unhealthy"


def test_a_native_environment_with_torch_of_another_x_y_is_still_caught(tmp_path: Path, venvs: VenvFactory) -> None:
    """torch-neuronx 2.14.3.0.* is for PyTorch 2.14.0 (not for `2.14.3`, its first three parts)."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release=RELEASE, **NATIVE_HOST))
    venv = _venv(venvs, "native", root, "3.13")
    torch_dist = next((venv / "lib/python3.13/site-packages").glob("torch-2.14.0.dist-info"))
    metadata = (torch_dist / "METADATA").read_text().replace("Version: 2.14.0", "Version: 2.13.0")
    (torch_dist / "METADATA").write_text(metadata)
    torch_dist.rename(torch_dist.with_name("torch-2.13.0.dist-info"))
    _, report, _ = check_json(["--root", str(root), "--venv", str(venv)], env=cli_env())
    ids = [item["id"] for item in report["findings"]]
    assert "ND-TORCH-001" in ids, ids
    finding = next(item for item in report["findings"] if item["id"] == "ND-TORCH-001")
    assert "2.14" in finding["title"] and "torch-xla" not in " ".join(finding["fix"])


@pytest.mark.parametrize(("lnc", "visible", "expected"), [
    (None, "0-63", []), (None, "0-127", ["ND-ENV-001"]), ("1", "0-127", []), ("2", "64", ["ND-ENV-001"])])
def test_visible_cores_count_logical_cores_at_the_config_in_effect(tmp_path: Path, lnc: str | None, visible: str,
                                                                   expected: list[str]) -> None:
    """trn2.48xlarge: 16 chips of 8 physical NeuronCores; 64 logical cores at LNC=2 (the default), 128 at LNC=1
    (about-neuron/arch/neuron-features/logical-neuroncore-config.rst)."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release=RELEASE, **NATIVE_HOST))
    environ = {"NEURON_RT_VISIBLE_CORES": visible, **({"NEURON_LOGICAL_NC_CONFIG": lnc} if lnc else {})}
    _, report, _ = check_json(["--root", str(root), "--select", "host-env"], env=cli_env(environ))
    assert [item["id"] for item in report["findings"]] == expected
    if expected:
        title = report["findings"][0]["title"]
        assert title.endswith("but this host has 64 logical (NEURON_LOGICAL_NC_CONFIG=2) NeuronCores (0-63)"), title


def _fake_python(tmp_path: Path, version: str) -> str:
    """An interpreter that reports `version` (the plan reads only that), for --dry-run on a machine without it."""
    fake = tmp_path / f"python{version}"
    fake.write_text(f"#!/bin/sh\necho {version}\n")
    fake.chmod(0o755)
    return str(fake)


def test_venv_create_plans_the_native_stack_for_python_3_13(tmp_path: Path) -> None:
    result = run_cli(["venv", "create", str(tmp_path / "tn"), "--release", RELEASE, "--framework", "pytorch-native",
                      "--python", _fake_python(tmp_path, "3.13"), "--installer", "pip", "--dry-run"])
    assert result.returncode == 0, result.stderr
    section = result.stdout.split("packages:\n", 1)[1].split("\n\n", 1)[0]
    packages = [line.split()[0] for line in section.splitlines()]
    assert packages == ["torch-neuronx==2.14.3.0.*", "neuronx-cc==2.28.7631.0", "nki==0.7.0", "torch==2.14.0"]
    assert "pytorch-native, Python 3.13" in result.stdout and "torch-xla" not in result.stdout
    assert "extra-index-url  https://download.pytorch.org/whl/cpu" in result.stdout
    older = run_cli(["venv", "create", str(tmp_path / "tn13"), "--release", RELEASE, "--framework", "pytorch-native",
                     "--torch", "2.13", "--python", _fake_python(tmp_path, "3.12"), "--dry-run"])
    assert older.returncode == 0 and "torch-neuronx==2.13.3.0.*" in older.stdout and "torch==2.13.0" in older.stdout


def test_venv_create_refuses_what_the_native_stack_cannot_run(tmp_path: Path) -> None:
    on_311 = run_cli(["venv", "create", str(tmp_path / "a"), "--release", RELEASE, "--framework", "pytorch-native",
                      "--python", sys.executable, "--dry-run"])
    assert on_311.returncode == 2 and not (tmp_path / "a").exists()
    assert on_311.stderr.strip() == ("error: Python 3.11 is not supported by torch-neuronx 2.14.3.0.* in Neuron "
                                     f"{RELEASE} (it supports 3.12, 3.13, 3.14); pass --python with one of those")
    before = run_cli(["venv", "create", str(tmp_path / "b"), "--release", "2.32.0", "--framework", "pytorch-native",
                      "--python", _fake_python(tmp_path, "3.13"), "--dry-run"])
    assert before.returncode == 2 and "Neuron 2.32.0 has no TorchNeuron" in before.stderr
    assert "it offers --framework pytorch" in before.stderr


def test_venv_create_of_2_33_pytorch_is_the_xla_stack(tmp_path: Path) -> None:
    result = run_cli(["venv", "create", str(tmp_path / "x"), "--release", RELEASE, "--python", sys.executable,
                      "--installer", "pip", "--dry-run"])
    assert result.returncode == 0, result.stderr
    for line in ("torch-neuronx==2.9.0.2.15.32035", "neuronx-cc==2.28.7631.0", "libneuronxla==2.2.17544.0",
                 "torch==2.9.0", "torch-xla==2.9.0"):
        assert line in result.stdout, line


@pytest.mark.parametrize(("instance_type", "python", "options"), [
    ("trn2.48xlarge", "3.13", "--framework pytorch-native --python python3.13 --torch 2.14"),
    ("trn2.48xlarge", "3.11", ""),
    ("trn1.2xlarge", "3.13", ""),
])
def test_a_plain_torch_environment_is_offered_the_stack_this_host_and_python_run(
        tmp_path: Path, venvs: VenvFactory, instance_type: str, python: str, options: str) -> None:
    """ND-FW-001 on 2.33: TorchNeuron where it runs (Trn2/Trn3, Python 3.12-3.14), else the XLA torch-neuronx 2.9
    (its only torch line, so no --torch); the printed plan is one `venv create` accepts."""
    root = build_host(tmp_path / "host", HostSpec(instance_type=instance_type, release=RELEASE, **NATIVE_HOST))
    if "plain" not in _BUILT:
        _BUILT["plain"] = venvs.create("plain-torch")
        venvs.install(_BUILT["plain"], [torch_wheel("2.14.0"), simple_wheel("numpy", "2.3.4")])
    install_image_interpreter(root, python)
    venv = root / "opt" / f"plain-py{python}"
    shutil.copytree(_BUILT["plain"], venv, symlinks=True)
    relabel_python(venv, python)
    _, report, _ = check_json(["--root", str(root), "--venv", str(venv)], env=cli_env())
    finding = next(item for item in report["findings"] if item["id"] == "ND-FW-001")
    assert finding["fix"] == [f"neurondoctor venv create {venv}-neuron --release {RELEASE}"
                              + (f" {options}" if options else "")]
    plan = finding["fix"][0].replace(f"python{python}", _fake_python(tmp_path, python)).split()[1:]
    if "--python" not in plan:
        plan += ["--python", _fake_python(tmp_path, python)]
    result = run_cli([*plan[:2], str(tmp_path / "planned"), *plan[3:], "--dry-run"])
    assert result.returncode == 0, result.stderr
    assert ("torch-neuronx==2.14.3.0.*" if options else "torch-neuronx==2.9.0.2.15.32035") in result.stdout


@pytest.mark.parametrize(("os_name", "severity"), [("ubuntu22", "error"), ("al2023", "warning"), ("ubuntu24", None)])
def test_torchneurons_own_support_matrix(tmp_path: Path, venvs: VenvFactory, os_name: str,
                                         severity: str | None) -> None:
    """release-notes/components/torchneuron.rst (2.33.0) supports Ubuntu 24.04 and 26.04 on x86_64;
    22.04 is End of support (a support table's end: an error), Amazon Linux 2023 is not in the matrix (untested:
    a warning), 24.04 is supported (the near miss)."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release=RELEASE, os=os_name,
                                                  kernel="6.8.0-1015-aws"))
    venv = _venv(venvs, "native", root, "3.12")
    found = findings_by_id(check_json(["--root", str(root), "--venv", str(venv)], env=cli_env())[1])
    if severity is None:
        assert "ND-OS-004" not in found
        return
    finding = found["ND-OS-004"][0]
    assert (finding["severity"], finding["category"]) == (severity, "os-unsupported")
    assert finding["title"].startswith(f"TorchNeuron (torch-neuronx {NATIVE_STACKS[RELEASE].torch_neuronx}) on ")
    assert finding["fix"] == ["# run TorchNeuron on Ubuntu 24.04, Ubuntu 26.04 (x86_64): the Neuron DLAMIs are "
                              "Ubuntu 24.04"]
