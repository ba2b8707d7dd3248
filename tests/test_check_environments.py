"""Acceptance: `check` on real venvs built with pip, healthy per release and broken in the ways users break them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, check_json, cli_env, findings_by_id
from tests.neuron_envs import (
    HEALTHY_STACKS,
    NEURON_REPO,
    cuda_torch_wheels,
    placeholder_wheel,
    simple_wheel,
    stack_venv,
    stack_wheels,
    torch_wheel,
)
from tests.wheelhouse import VenvFactory, venv_python, write_pip_conf


def healthy_venv(venvs: VenvFactory, release: str, python: str = sys.executable) -> Path:
    venv = venvs.create(f"healthy-{release}-{Path(python).name}", python=python)
    venvs.install(venv, stack_wheels(HEALTHY_STACKS[release]))
    write_pip_conf(venv)
    return venv


SAME_VENV_AS = {"2.27.0": "2.27.1", "2.28.0": "2.28.1", "2.31.0": "2.31.1", "2.33.0": "2.33.1"}


@pytest.mark.parametrize("release", sorted(HEALTHY_STACKS))
def test_healthy_environment_per_release(venvs: VenvFactory, host_root: Path, release: str) -> None:
    venv = healthy_venv(venvs, release)
    code, report, _ = check_json(["--root", str(host_root), "--venv", str(venv)])
    assert report["findings"] == []
    assert report["summary"] == {"errors": 0, "warnings": 0, "info": 0}
    assert code == 0
    # A patch release that changes no pip package (2.27.1, 2.28.1, 2.31.1 over their .0) shares its venv: the
    # newest release that fits is named.
    assert report["release"]["environments"][str(venv)] == SAME_VENV_AS.get(release, release)
    assert report["release"]["latest_known"] == "2.34.0"  # known in part; the newest whole is 2.33.1
    assert {check["status"] for check in report["checks"]} == {"ok"}


def test_cuda_torch_with_matching_version_is_a_warning(venvs: VenvFactory, host_root: Path) -> None:
    cuda = cuda_torch_wheels("2.9.0")
    venv = stack_venv(venvs, "cuda-2.9", "2.31.1", replace=(cuda[0],), extra=tuple(cuda[1:]))
    code, report, _ = check_json(["--root", str(host_root), "--venv", str(venv)])
    found = findings_by_id(report)
    assert list(found) == ["ND-TORCH-002"]
    finding = found["ND-TORCH-002"][0]
    assert (finding["category"], finding["severity"]) == ("stock-torch-conflict", "warning")
    assert finding["evidence"]["torch"] == "2.9.0+cu128"
    assert len(finding["evidence"]["nvidia_packages"]) == 4
    reinstall = f"{venv_python(venv)} -m pip install --force-reinstall --no-deps 'torch==2.9.0+cpu' --index-url "
    assert finding["fix"][0].startswith(reinstall)
    assert finding["fix"][1].startswith(f"{venv_python(venv)} -m pip uninstall -y nvidia-")
    assert code == 0
    strict_code, _, _ = check_json(["--root", str(host_root), "--venv", str(venv), "--strict"])
    assert strict_code == 1


def test_torch_210_cuda_over_torch_neuronx_29(venvs: VenvFactory, host_root: Path) -> None:
    cuda = cuda_torch_wheels("2.10.0")
    venv = stack_venv(venvs, "torch-2.10", "2.31.1", replace=(cuda[0],), extra=tuple(cuda[1:]))
    code, report, _ = check_json(["--root", str(host_root), "--venv", str(venv)])
    found = findings_by_id(report)
    assert sorted(found) == ["ND-TORCH-001"]  # torch-xla is reinstalled by the same fix, not reported twice
    mismatch = found["ND-TORCH-001"][0]
    assert (mismatch["category"], mismatch["severity"]) == ("stock-torch-conflict", "error")
    assert "2.10.0+cu128" in mismatch["title"]
    assert "undefined symbol" in mismatch["detail"]
    python = str(venv_python(venv))
    # the pinned torch's CPU build (PyPI's torch 2.9.0 would need the nvidia-* packages the last line removes)
    assert mismatch["fix"][:2] == [
        f"{python} -m pip install --force-reinstall --no-deps 'torch==2.9.0+cpu' --index-url "
        "https://download.pytorch.org/whl/cpu", f"{python} -m pip install 'torch-xla==2.9.0'"]
    assert mismatch["fix"][2].startswith(f"{python} -m pip uninstall -y nvidia-")
    assert code == 1


def test_libneuronxla_from_a_newer_release(venvs: VenvFactory, host_root: Path) -> None:
    venv = stack_venv(venvs, "loose-libneuronxla", "2.29.1", replace=(simple_wheel("libneuronxla", "2.2.16974.0"),))
    code, report, _ = check_json(["--root", str(host_root), "--venv", str(venv)])
    found = findings_by_id(report)
    assert list(found) == ["ND-PIN-001"]
    finding = found["ND-PIN-001"][0]
    assert (finding["category"], finding["severity"]) == ("framework-pin-mismatch", "error")
    assert "2.30.0" in finding["title"] and "Unknown flags in XLA_FLAGS" in finding["detail"]
    assert finding["fix"] == [f"{venv_python(venv)} -m pip install 'libneuronxla==2.2.16408.0' "
                              f"--extra-index-url {NEURON_REPO}"]
    assert report["release"]["environments"][str(venv)] == "2.29.1"
    assert code == 1


def test_pypi_placeholder_torch_neuronx(venvs: VenvFactory, host_root: Path) -> None:
    venv = stack_venv(venvs, "placeholder", "2.31.1", replace=(placeholder_wheel("torch-neuronx", "1.0"),),
                      pip_conf=False)
    code, report, _ = check_json(["--root", str(host_root), "--venv", str(venv)])
    found = findings_by_id(report)
    placeholder = found["ND-PIP-001"][0]
    assert (placeholder["category"], placeholder["severity"]) == ("wrong-pip-index", "error")
    python = str(venv_python(venv))
    assert placeholder["fix"] == [f"{python} -m pip uninstall -y torch-neuronx",
                                  f"{python} -m pip install 'torch-neuronx==2.9.0.2.15.32035' "
                                  f"--extra-index-url {NEURON_REPO}"]
    not_configured = found["ND-PIP-002"][0]
    assert not_configured["fix"] == [f"{python} -m pip config --site set global.extra-index-url {NEURON_REPO}"]
    assert code == 1


def test_user_site_torch_shadows_the_venv(venvs: VenvFactory, tmp_path: Path) -> None:
    home = tmp_path / "home" / "ubuntu"
    user_site = home / ".local" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    venv = venvs.create("shadowed", system_site=True)
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.31.1"]))
    write_pip_conf(venv)
    venvs.install(venv, [torch_wheel("2.10.0")], target=user_site)
    env = cli_env({"HOME": str(home)})
    code, report, _ = check_json(["--venv", str(venv), "--select", "python-env"], env=env)
    found = findings_by_id(report)
    shadow = found["ND-SHADOW-001"][0]
    assert (shadow["category"], shadow["severity"]) == ("shadowing", "error")
    assert "torch 2.10.0 (environment has 2.9.0)" in shadow["title"]
    assert str(user_site / "torch") in shadow["fix"][0]
    assert str(user_site / "torch-2.10.0.dist-info") in shadow["fix"][0]
    assert code == 1
    # The same venv without the user site is clean: the finding comes from the shadowing copy only.
    code_clean, report_clean, _ = check_json(["--venv", str(venv), "--select", "python-env"],
                                             env=cli_env({"HOME": str(tmp_path / "nobody")}))
    assert report_clean["findings"] == [] and code_clean == 0


def test_venv_whose_interpreter_was_deleted(venvs: VenvFactory, host_root: Path, tmp_path: Path) -> None:
    base = tmp_path / "python-base" / "bin"
    base.mkdir(parents=True)
    interpreter = base / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    interpreter.symlink_to(Path(sys.executable).resolve())
    venv = venvs.create("orphan", python=str(interpreter))
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.31.1"]))
    write_pip_conf(venv)
    shutil.rmtree(tmp_path / "python-base")
    code, report, _ = check_json(["--root", str(host_root), "--venv", str(venv)])
    found = findings_by_id(report)
    assert list(found) == ["ND-VENV-001"]
    finding = found["ND-VENV-001"][0]
    assert (finding["category"], finding["severity"]) == ("broken-venv", "error")
    python = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    assert finding["fix"] == [f"rm -f {venv}/bin/python {venv}/bin/python3 {venv}/bin/{python}",
                              f"{python} -m venv --upgrade {venv}"]
    assert report["release"]["environments"][str(venv)] == "2.31.1"
    assert code == 1


def _python310() -> str | None:
    """A working Python 3.10: pyenv's real binary (its shim needs a shell set-up), else one on PATH."""
    candidates = [str(path) for path in sorted(Path("/root/.pyenv/versions").glob("3.10*/bin/python3.10"))]
    candidates.append(shutil.which("python3.10") or "")
    for candidate in filter(None, candidates):
        probe = subprocess.run([candidate, "-c", "import venv"], capture_output=True, timeout=30)
        if probe.returncode == 0:
            return candidate
    return None


@pytest.mark.skipif(_python310() is None, reason="needs a Python 3.10 interpreter")
def test_python_310_with_release_231(venvs: VenvFactory, host_root: Path) -> None:
    python310 = _python310()
    assert python310 is not None
    venv = healthy_venv(venvs, "2.31.1", python=python310)
    code, report, _ = check_json(["--root", str(host_root), "--venv", str(venv)])
    found = findings_by_id(report)
    assert list(found) == ["ND-PY-001"]
    finding = found["ND-PY-001"][0]
    assert (finding["category"], finding["severity"]) == ("python-unsupported", "error")
    assert "Python 3.10 is not supported by Neuron 2.31.1" in finding["title"]
    assert finding["fix"] == [f"neurondoctor venv create {venv}-py3.11 --release 2.31.1 --python python3.11"]
    assert code == 1


def test_live_inspection_sees_pythonpath_shadowing(venvs: VenvFactory, tmp_path: Path) -> None:
    venv = healthy_venv(venvs, "2.30.0")
    extra = tmp_path / "pythonpath"
    venvs.install(venv, [torch_wheel("2.11.0")], target=extra)
    env = cli_env({"PYTHONPATH": str(extra), "HOME": str(tmp_path)})
    code, report, _ = check_json(["--python", str(venv_python(venv))], env=env)
    found = findings_by_id(report)
    assert "ND-SHADOW-001" in found
    assert found["ND-SHADOW-001"][0]["evidence"]["role"] == "pythonpath"
    # torch from PYTHONPATH is what `import torch` loads: the stack rules see 2.11 against torch-neuronx 2.9.
    assert "ND-TORCH-001" in found
    assert report["environments"][0]["mode"] == "live"
    assert code == 1
    clean_code, clean, _ = check_json(["--python", str(venv_python(venv))], env=cli_env({"HOME": str(tmp_path)}))
    assert clean["findings"] == [] and clean_code == 0


def test_unknown_version_gets_nearest_neighbours(venvs: VenvFactory, host_root: Path) -> None:
    venv = stack_venv(venvs, "unknown", "2.31.1", replace=(simple_wheel("neuronx-cc", "2.26.7000.0"),))
    _, report, _ = check_json(["--root", str(host_root), "--venv", str(venv)])
    finding = findings_by_id(report)["ND-REL-002"][0]
    assert (finding["category"], finding["severity"]) == ("unknown-version", "warning")
    assert finding["evidence"]["nearest_lower"] == "2.26.6360.0"
    assert finding["evidence"]["nearest_higher"] == "2.27.5334.0"


def test_torch_neuron_inf1_beside_torch_neuronx_on_trn1(venvs: VenvFactory, host_root: Path) -> None:
    venv = healthy_venv(venvs, "2.31.1")
    venvs.install(venv, [simple_wheel("torch-neuron", "1.13.1.2.11.13.0")])
    code, report, _ = check_json(["--root", str(host_root), "--venv", str(venv)])
    found = findings_by_id(report)
    assert found["ND-PIN-002"][0]["category"] == "framework-pin-mismatch"
    assert found["ND-PIN-002"][0]["fix"] == [f"{venv_python(venv)} -m pip uninstall -y torch-neuron"]
    instance = found["ND-INST-001"][0]
    assert (instance["category"], instance["severity"]) == ("instance-unsupported", "error")
    assert "inf1" in instance["title"] and "trn1.2xlarge" in instance["title"]
    assert code == 1


def test_tensorflow_beside_torch_xla(venvs: VenvFactory, host_root: Path) -> None:
    venv = healthy_venv(venvs, "2.30.0")
    venvs.install(venv, [simple_wheel("tensorflow", "2.15.0")])
    _, report, _ = check_json(["--root", str(host_root), "--venv", str(venv)])
    finding = findings_by_id(report)["ND-PIN-002"][0]
    assert "IrValue" in finding["detail"]


def test_release_option_judges_against_that_release(venvs: VenvFactory, host_root: Path) -> None:
    venv = healthy_venv(venvs, "2.30.0")
    code, report, _ = check_json(["--root", str(host_root), "--venv", str(venv), "--release", "2.31.1"])
    found = findings_by_id(report)
    assert {finding["evidence"]["package"] for finding in found["ND-PIN-001"]} >= {"torch-neuronx", "neuronx-cc"}
    assert report["release"]["target"] == "2.31.1"
    assert code == 1
    bad = subprocess.run([sys.executable, "-m", "neurondoctor", "check", "--release", "9.9.9"],
                         capture_output=True, text=True, env=cli_env())
    assert bad.returncode == 2 and "not a known Neuron release" in bad.stderr


def test_torch_xla_from_another_release_than_torch(venvs: VenvFactory, host_root: Path) -> None:
    venv = stack_venv(venvs, "xla-2.8", "2.31.1", replace=(simple_wheel("torch-xla", "2.8.1"),))
    code, report, _ = check_json(["--root", str(host_root), "--venv", str(venv)])
    found = findings_by_id(report)
    assert list(found) == ["ND-TORCH-003"]
    assert found["ND-TORCH-003"][0]["fix"] == [f"{venv_python(venv)} -m pip install 'torch==2.9.0' "
                                               f"'torch-xla==2.9.0' --extra-index-url {NEURON_REPO}"]
    assert code == 1


def test_duplicate_install_records_left_by_an_interrupted_upgrade(venvs: VenvFactory, host_root: Path) -> None:
    """An upgrade killed between writing the new dist-info and removing the old one leaves both records."""
    venv = venvs.create("duplicate-records")
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.31.1"]))
    write_pip_conf(venv)
    site = next(venv.glob("lib/python*/site-packages"))
    old = next(site.glob("numpy-*.dist-info"))
    version = old.name.removeprefix("numpy-").removesuffix(".dist-info")
    stale = site / "numpy-1.26.0.dist-info"
    shutil.copytree(old, stale)
    metadata = stale / "METADATA"
    metadata.write_text(metadata.read_text().replace(f"Version: {version}", "Version: 1.26.0"))
    code, report, _ = check_json(["--root", str(host_root), "--venv", str(venv)])
    finding = findings_by_id(report)["ND-SHADOW-002"][0]
    assert finding["severity"] == "warning" and "numpy (" in finding["title"] and "1.26.0" in finding["title"]
    assert code == 0


def test_fix_commands_name_the_interpreter_by_its_absolute_path(venvs: VenvFactory, host_root: Path) -> None:
    """`--python a1b/bin/python` typed relative to the working directory: the fix must work from anywhere."""
    venv = stack_venv(venvs, "relative-python", "2.31.1", replace=(simple_wheel("libneuronxla", "2.2.16974.0"),))
    relative = os.path.relpath(venv_python(venv), REPO)
    assert not relative.startswith("/")
    _, report, _ = check_json(["--root", str(host_root), "--python", relative])
    fixes = [line for finding in report["findings"] for line in finding["fix"]]
    assert fixes and all(line.startswith(f"{venv}/bin/python -m pip ") for line in fixes
                         if "-m pip" in line), fixes
    static = check_json(["--root", str(host_root), "--venv", os.path.relpath(venv, REPO)])[1]
    assert [finding["fix"] for finding in static["findings"]] == [finding["fix"] for finding in report["findings"]]
