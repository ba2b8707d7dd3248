"""Environment-level fixes run verbatim: a shadowing copy in the user site, a package for another
instance family, the Neuron repository as the only index, a venv whose base interpreter was removed."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from tests.conftest import check_json, findings_by_id
from tests.fixes.harness import bad_findings, fix_and_check, run_verbatim, user_env, working_python
from tests.host_fixture import HostSpec, build_host, pinned_inf1_host
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
    """A fresh venv on an image whose pip.conf replaces PyPI with the Neuron repository (a cloud-init
    that wrote `index-url` where the install page says `extra-index-url`). Nothing Neuron is installed yet, which
    is exactly when `pip install torch-neuronx` cannot resolve torch: it is judged all the same."""
    root = build_host(tmp_path / "host", HostSpec(release="2.31.1"))
    venv = venvs.create("fix-pip-003-empty")
    (venv / "pip.conf").write_text(f"[global]\nindex-url = {NEURON_REPO}\n")
    fix_and_check(["--root", str(root), "--venv", str(venv)], user_env(tmp_path), "ND-PIP-003")
    assert (venv / "pip.conf").read_text() == f"[global]\nextra-index-url = {NEURON_REPO}\n"
    (venv / "pip.conf").write_text(f"[global]\nextra-index-url = {NEURON_REPO}\n")  # near miss: as the docs say
    assert check_json(["--root", str(root), "--venv", str(venv)], env=user_env(tmp_path))[1]["findings"] == []


def test_a_torch_environment_on_inf1_gets_the_inf1_line(tmp_path: Path, venvs: VenvFactory) -> None:
    """On Inf1, ND-FW-001 offers what AWS's Inf1 page installs (torch-neuron + neuron-cc[tensorflow],
    pinned to the release), never a torch-neuronx venv. Its lines run verbatim against local indexes, and the new
    environment checks clean."""
    from tests.fixes.local_release_data import local_release_data
    from tests.local_index import served_index
    from tests.neuron_envs import simple_wheel, torch_wheel

    python310 = working_python(tmp_path / "bin", "3.10")
    root = pinned_inf1_host(tmp_path / "inf1")
    venv = venvs.create("inf1-porting")
    venvs.install(venv, [torch_wheel("2.1.0")])
    neuron = [simple_wheel("torch-neuron", "1.13.1.2.11.13.0", ("torch==1.13.1",)),
              simple_wheel("neuron-cc", "1.24.0.0"), simple_wheel("protobuf", "3.19.5")]
    with served_index(tmp_path / "neuron-index", neuron) as neuron_url, \
            served_index(tmp_path / "cpu-index", [torch_wheel("1.13.1+cpu")]) as cpu_url:
        manifests = local_release_data(tmp_path / "manifests", neuron_index=neuron_url, cpu_index=cpu_url)
        env = {**user_env(tmp_path), "NEURONDOCTOR_MANIFESTS": str(manifests), "PIP_INDEX_URL": neuron_url}
        env["PATH"] = f"{python310.parent}:{env['PATH']}"
        finding = findings_by_id(check_json(["--root", str(root), "--venv", str(venv)], env=env)[1])["ND-FW-001"][0]
        target = f"{venv}-neuron"
        assert finding["fix"][0] == f"python3.10 -m venv {target}"
        assert "torch-neuronx" not in " ".join(finding["fix"])
        for line in finding["fix"]:
            run_verbatim(str(line), env)
        after = check_json(["--root", str(root), "--venv", target], env=env)[1]
    assert bad_findings(after) == set()
    assert after["environments"][0]["holds"] == "PyTorch 1.13 (torch-neuron, Inf1)"


def test_a_newer_torch_over_torch_neuron_is_put_back(tmp_path: Path, venvs: VenvFactory) -> None:
    """Inf1's line, executed: `pip install transformers` upgraded torch to 2.1.0 under torch-neuron 1.13.1 (the
    torch-neuron pins of optimum-neuron's `neuron` extra, `torch-neuron==1.12.1.*` + `neuron-cc[tensorflow]`, break
    the same way). ND-TORCH-001's lines put torch 1.13.1's CPU build back, from a local CPU index."""
    from tests.fixes.local_release_data import local_release_data
    from tests.local_index import served_index
    from tests.neuron_envs import simple_wheel, torch_wheel

    python310 = working_python(tmp_path / "bin", "3.10")
    root = pinned_inf1_host(tmp_path / "inf1")
    venv = venvs.create("inf1-upgraded", python=str(python310))
    add_pip(venv)
    venvs.install(venv, [simple_wheel("torch-neuron", "1.13.1.2.11.13.0", ("torch==1.13.1",)),
                         simple_wheel("neuron-cc", "1.24.0.0"), torch_wheel("2.1.0")])
    with served_index(tmp_path / "neuron-index", [simple_wheel("protobuf", "3.19.5")]) as neuron_url, \
            served_index(tmp_path / "cpu-index", [torch_wheel("1.13.1+cpu")]) as cpu_url:
        write_pip_conf(venv, extra_index=neuron_url)
        manifests = local_release_data(tmp_path / "manifests", neuron_index=neuron_url, cpu_index=cpu_url)
        env = {**user_env(tmp_path), "NEURONDOCTOR_MANIFESTS": str(manifests), "PIP_INDEX_URL": neuron_url}
        finding = fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-TORCH-001")
    assert finding["title"] == ("torch 2.1.0+cpu replaced the torch 1.13 that torch-neuron 1.13.1.2.11.13.0 is "
                                "built for")
