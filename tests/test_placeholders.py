"""PyPI placeholders, shaped as PyPI publishes them (tests/neuron_envs.py, read from the real wheels):
an error wherever they are on the import path, the user site included; the header, the markdown and the JSON
summary list them; the import behaviour each finding describes is what the placeholder really does. Every fix
is run, and the check after it is clean. Static `--venv` and live `--python` agree."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.conftest import check_json, cli_env, findings_by_id, run_cli
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import placeholder_wheel
from tests.wheelhouse import VenvFactory, add_pip, venv_python, write_pip_conf

PLACEHOLDERS = (("torch-neuronx", "1.0"), ("neuronx-cc", "1.0.post1"), ("libneuronxla", "1.0"))


def _user_site_placeholders(venvs: VenvFactory, tmp_path: Path) -> tuple[Path, Path, Path, dict[str, str]]:
    """A Neuron 2.26.1 host whose user ran `pip install --user torch-neuronx neuronx-cc libneuronxla` without the
    Neuron repository, and a venv with the system site packages (so the user site is on its path)."""
    root = build_host(tmp_path / "host", HostSpec(release="2.26.1"))
    home = root / "home/ubuntu"
    site = home / ".local/lib/python3.11/site-packages"
    venv = venvs.create(f"placeholders-{tmp_path.name}", system_site=True)
    add_pip(venv)
    venvs.install(venv, [placeholder_wheel(name, version) for name, version in PLACEHOLDERS], target=site)
    write_pip_conf(venv)
    return root, venv, site, cli_env({"HOME": str(home)})


def test_placeholders_in_the_user_site_are_errors(venvs: VenvFactory, tmp_path: Path) -> None:
    root, venv, site, env = _user_site_placeholders(venvs, tmp_path)
    code, static, _ = check_json(["--root", str(root), "--venv", str(venv)], env=env)
    _, live, _ = check_json(["--root", str(root), "--python", str(venv_python(venv))], env=env)
    found = findings_by_id(static)
    assert sorted(found) == ["ND-PIP-001"] and code == 1  # no second ND-SHADOW-001 for the same files
    assert [(item["severity"], item["title"]) for item in found["ND-PIP-001"]] == [
        (item["severity"], item["title"]) for item in findings_by_id(live)["ND-PIP-001"]]
    by_package = {item["evidence"]["package"]: item for item in found["ND-PIP-001"]}
    assert set(by_package) == {"torch-neuronx", "neuronx-cc", "libneuronxla"}
    assert all(item["severity"] == "error" for item in by_package.values())
    compiler = by_package["neuronx-cc"]
    assert "`import neuronx_cc` fails with `ModuleNotFoundError: No module named 'neuronx_cc'`" in compiler["detail"]
    assert f"It lies in the user site {site}" in compiler["detail"]
    # what the finding says is what the wheel does
    imported = subprocess.run([str(venv_python(venv)), "-c", "import neuronx_cc"], capture_output=True, text=True,
                              env={"HOME": str(root / "home/ubuntu"), "PYTHONUSERBASE": str(site.parents[2])},
                              timeout=60)
    assert "ModuleNotFoundError: No module named 'neuronx_cc'" in imported.stderr
    wrong = subprocess.run([str(venv_python(venv)), "-c", "import torch_neuronx"], capture_output=True, text=True,
                           env={"PYTHONUSERBASE": str(site.parents[2])}, timeout=60)
    assert "ImportError: WRONG PACKAGE" in wrong.stderr
    # the summary, the header and the markdown name them
    assert static["environments"][0]["placeholders"] == {"libneuronxla": "1.0", "neuronx-cc": "1.0.post1",
                                                         "torch-neuronx": "1.0"}
    text = run_cli(["check", "--root", str(root), "--venv", str(venv)], env=env).stdout
    assert "no Neuron packages but 3 PyPI placeholders (libneuronxla 1.0, neuronx-cc 1.0.post1, torch-neuronx 1.0)" \
        in text
    markdown = run_cli(["check", "--root", str(root), "--venv", str(venv), "--format", "markdown"], env=env).stdout
    assert "3 PyPI placeholders (libneuronxla 1.0, neuronx-cc 1.0.post1, torch-neuronx 1.0)" in markdown
    assert all(str(item["fix"][0]).startswith(f"rm -rf {site}/") for item in found["ND-PIP-001"])
    # the fixes run verbatim: tests/fixes/test_plan_fixes.py


def test_a_placeholder_inside_the_environment_is_uninstalled_with_its_pip(venvs: VenvFactory,
                                                                          tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec(release="2.26.1"))
    venv = venvs.create("placeholder-in-venv")
    venvs.install(venv, [placeholder_wheel("neuronx-cc", "1.0.post1")])
    finding = findings_by_id(check_json(["--root", str(root), "--venv", str(venv)])[1])["ND-PIP-001"][0]
    assert finding["fix"] == [f"{venv_python(venv)} -m pip uninstall -y neuronx-cc",
                              f"{venv_python(venv)} -m pip install 'neuronx-cc==2.21.33363.0' "
                              "--extra-index-url https://pip.repos.neuron.amazonaws.com"]
    assert "It lies in" not in finding["detail"]


def test_near_miss_a_user_site_placeholder_off_the_import_path(venvs: VenvFactory, tmp_path: Path) -> None:
    """Without the system site packages a venv does not import the user site: nothing to flag."""
    root = build_host(tmp_path / "host", HostSpec(release="2.26.1"))
    site = root / "home/ubuntu/.local/lib/python3.11/site-packages"
    venv = venvs.create("placeholder-off-path")
    venvs.install(venv, [placeholder_wheel("torch-neuronx", "1.0")], target=site)
    report = check_json(["--root", str(root), "--venv", str(venv)],
                        env=cli_env({"HOME": str(root / "home/ubuntu")}))[1]
    assert "ND-PIP-001" not in findings_by_id(report)
    assert report["environments"][0]["placeholders"] == {}


@pytest.mark.parametrize(("name", "version", "module", "raised"), [
    ("torch-neuronx", "1.0", "torch_neuronx", "ImportError: WRONG PACKAGE. Please install the package from Neuron "
                                              "Repository - pip.repos.neuron.amazonaws.com"),
    ("transformers-neuronx", "0.1", "transformers_neuronx",
     "ImportError: WRONG PACKAGE. Please install the package from Neuron Repository - "
     "https://github.com/aws-neuron/transformers-neuronx#installation"),
    ("neuronx-cc", "1.0.post1", "neuronx_cc", "ModuleNotFoundError: No module named 'neuronx_cc'"),
    ("libneuronxla", "1.0", "libneuronxla", "ImportError: WRONG PACKAGE. Please install the package from Neuron "
                                            "Repository - pip.repos.neuron.amazonaws.com"),
])
def test_what_the_finding_says_an_import_does_is_what_it_does(venvs: VenvFactory, tmp_path: Path, name: str,
                                                              version: str, module: str, raised: str) -> None:
    root = build_host(tmp_path / "host", HostSpec(release="2.26.1"))
    venv = venvs.create(f"placeholder-import-{name}")
    venvs.install(venv, [placeholder_wheel(name, version)])
    finding = findings_by_id(check_json(["--root", str(root), "--python", str(venv_python(venv))])[1])[
        "ND-PIP-001"][0]
    imported = subprocess.run([str(venv_python(venv)), "-c", f"import {module}"], capture_output=True, text=True,
                              timeout=60)
    assert raised in imported.stderr
    assert raised.split(": ", 1)[1] in finding["detail"] or raised.split(": ", 1)[0] in finding["detail"]
    assert f"`import {module}`" in finding["detail"]
