"""Every environment layout, found and judged with nothing named: DLC images (Python built into
/usr/local; Mambaforge at /opt/conda for Inf1), a DLAMI with its venvs side by side, and a home with pyenv,
poetry, pipx, uv and a Jupyter kernel. Shapes are the installers' own (tests/layouts.py names each source)."""

from __future__ import annotations

import shutil
from pathlib import Path

from neurondoctor.host.rootfs import RootFS
from neurondoctor.pyenv.discovery import discover_environments
from tests.conftest import check_json, cli_env, findings_by_id, run_cli
from tests.fixes.harness import bad_findings, run_verbatim
from tests.host_fixture import HostSpec, build_host
from tests.layouts import conda_install, install_into, installation, kernelspec, source_built_python
from tests.neuron_envs import (
    HEALTHY_STACKS,
    NEURON_REPO,
    cuda_torch_wheels,
    simple_wheel,
    stack_wheels,
    torch_wheel,
)
from tests.wheelhouse import (
    VenvFactory,
    install_image_interpreter,
    repoint_to_image_interpreter,
    write_pip_conf,
)

PY = "3.11"
# docker/pytorch/inference/1.13.1/Dockerfile.neuron: torch-neuron 1.13.1.2.11.7.0, neuron-cc 1.24.0.0,
# numpy<1.24, protobuf 3.19.5, torchvision 0.14.*; aws-neuronx-tools 2.19.0.0 is its only OS package.
INF1_DLC = [simple_wheel("torch-neuron", "1.13.1.2.11.7.0", ("torch==1.13.1",)), torch_wheel("1.13.1"),
            simple_wheel("neuron-cc", "1.24.0.0", ("numpy<1.24", "protobuf")), simple_wheel("numpy", "1.23.5"),
            simple_wheel("protobuf", "3.19.5")]


def _inf1_image(tmp_path: Path) -> Path:
    return build_host(tmp_path / "inf1-image", HostSpec(
        instance_type="inf1.xlarge", release=None, container=True, extra_packages={"aws-neuronx-tools": "2.19.0.0"},
        runtime_library=False, collectives_library=False, loaded_version="2.24.7.0", device_nodes=1))


def _environments(report: dict[str, object]) -> dict[str, tuple[str, str]]:
    return {env["path"]: (env["kind"], env["discovered_by"]) for env in report["environments"]}  # type: ignore


def test_a_training_dlc_image_with_python_built_into_usr_local(tmp_path: Path, venvs: VenvFactory) -> None:
    """docker/pytorch/training/*/Dockerfile.neuronx: no venv; the Neuron 2.25.0 stack in /usr/local."""
    root = build_host(tmp_path / "image", HostSpec(instance_type="trn1.32xlarge", release="2.25.0", container=True))
    prefix = source_built_python(venvs, root, "3.10", stack_wheels(HEALTHY_STACKS["2.25.0"]), NEURON_REPO)
    code, report, _ = check_json(["--root", str(root)])
    assert bad_findings(report) == set() and code == 0
    assert _environments(report) == {str(prefix): ("system", "the system interpreter")}
    assert report["release"]["environments"] == {str(prefix): "2.25.0"}
    assert report["environments"][0]["python"] == "3.10"


def test_near_miss_a_user_site_torch_shadows_the_images_python(tmp_path: Path, venvs: VenvFactory) -> None:
    """`pip install --user torch==2.8.0` in the image: an installation's interpreter imports the user site first."""
    root = build_host(tmp_path / "image", HostSpec(instance_type="trn1.32xlarge", release="2.25.0", container=True))
    source_built_python(venvs, root, "3.10", stack_wheels(HEALTHY_STACKS["2.25.0"]), NEURON_REPO)
    install_into(venvs, root / "root/.local/lib/python3.10/site-packages", [torch_wheel("2.8.0")])
    _, report, _ = check_json(["--root", str(root)])
    found = findings_by_id(report)
    finding = found["ND-SHADOW-001"][0]
    assert finding["category"] == "shadowing" and finding["severity"] == "error"
    for line in finding["fix"]:  # pasted into a shell, as the user would (it removes the user-site copy)
        run_verbatim(str(line), cli_env())
    after = check_json(["--root", str(root)])[1]
    assert bad_findings(after) == set() and (root / "usr/local/lib/python3.10/site-packages/torch").is_dir()


def test_an_inf1_dlc_image_with_conda_and_torch_neuron(tmp_path: Path, venvs: VenvFactory) -> None:
    """Mambaforge at /opt/conda, torch-neuron + neuron-cc: a conda environment (no pyvenv.cfg, which is not
    damage), torch-neuron a Neuron framework (never "no Neuron framework")."""
    root = _inf1_image(tmp_path)
    prefix = conda_install(venvs, root / "opt" / "conda", "3.10", INF1_DLC)
    code, report, _ = check_json(["--root", str(root)])
    assert bad_findings(report) == set() and code == 0
    assert _environments(report) == {str(prefix): ("conda", "a folder in /opt")}
    assert report["release"]["environments"][str(prefix)] in ("2.20.0/2.20.1", "2.20.1")
    assert report["environments"][0]["holds"] == "PyTorch 1.13 (torch-neuron, Inf1)"


def test_a_cuda_torch_under_torch_neuron_is_a_stock_torch_conflict(tmp_path: Path, venvs: VenvFactory) -> None:
    root = _inf1_image(tmp_path)
    conda_install(venvs, root / "opt" / "conda", "3.10",
                  [spec for spec in INF1_DLC if spec.name != "torch"] + cuda_torch_wheels("1.13.1"))
    found = findings_by_id(check_json(["--root", str(root)])[1])
    assert found["ND-TORCH-002"][0]["category"] == "stock-torch-conflict"
    assert "ND-FW-001" not in found


def test_a_newer_torch_over_torch_neuron_is_caught(tmp_path: Path, venvs: VenvFactory) -> None:
    """A later `pip install transformers` that upgraded torch under torch-neuron 1.13.1."""
    root = _inf1_image(tmp_path)
    conda_install(venvs, root / "opt" / "conda", "3.10",
                  [spec for spec in INF1_DLC if spec.name != "torch"] + [torch_wheel("2.1.0")])
    finding = findings_by_id(check_json(["--root", str(root)])[1])["ND-TORCH-001"][0]
    assert finding["title"] == "torch 2.1.0+cpu replaced the torch 1.13 that torch-neuron 1.13.1.2.11.7.0 is built for"
    assert "import torch_neuron` fails" in finding["detail"] and "_XLAC" not in finding["detail"]


def test_near_miss_tensorflow_neuron_beside_a_torch_a_library_pulled_in(tmp_path: Path, venvs: VenvFactory) -> None:
    root = _inf1_image(tmp_path)
    conda_install(venvs, root / "opt" / "conda", "3.10",
                  [simple_wheel("tensorflow-neuron", "2.10.1.2.12.2.0"), simple_wheel("neuron-cc", "1.24.0.0"),
                   torch_wheel("2.1.0")])
    assert "ND-FW-001" not in findings_by_id(check_json(["--root", str(root)])[1])


def test_a_conda_environment_whose_python_is_gone(tmp_path: Path, venvs: VenvFactory) -> None:
    """Its fix is conda's, never the venv relink (`rm -f …/bin/python` then `python -m venv --upgrade`)."""
    root = _inf1_image(tmp_path)
    prefix = conda_install(venvs, root / "opt" / "conda", "3.10", INF1_DLC)
    (prefix / "bin" / "python3.10").unlink()
    found = findings_by_id(check_json(["--root", str(root)])[1])
    finding = found["ND-VENV-001"][0]
    assert finding["fix"] == [f"# reinstall Python into it with the conda that made it: conda install --prefix "
                              f"{prefix} 'python=3.10'"]
    assert "ND-VENV-003" not in found


def _image_venv(venvs: VenvFactory, root: Path, relative: str, wheels: list, interpreter: str) -> Path:  # type: ignore[type-arg]
    venv = venvs.create(Path(relative).name, parent=root / Path(relative).parent)
    venvs.install(venv, wheels)
    write_pip_conf(venv)
    repoint_to_image_interpreter(venv, interpreter)
    return venv


def test_a_dlami_with_its_venvs_side_by_side(tmp_path: Path, venvs: VenvFactory) -> None:
    """The 2.31 multi-framework DLAMI (dlami/index.rst): `aws_neuronx_venv_pytorch_2_9`, `…_nxd_inference`,
    `…_pytorch_inference_vllm_0_16` under /opt, a manual `~/aws_neuron_venv_pytorch`, and a tool venv of the
    user's in /opt that holds nothing Neuron (listed, not judged)."""
    root = build_host(tmp_path / "dlami", HostSpec(instance_type="trn1.32xlarge", release="2.31.1"))
    interpreter = install_image_interpreter(root, PY)
    stack = stack_wheels(HEALTHY_STACKS["2.31.1"])
    nxdi = [*stack, simple_wheel("neuronx-distributed", "0.19.28492"),
            simple_wheel("neuronx-distributed-inference", "0.10.18399")]
    made = [_image_venv(venvs, root, f"opt/aws_neuronx_venv_{name}", wheels, interpreter) for name, wheels in
            (("pytorch_2_9", stack), ("pytorch_2_9_nxd_inference", nxdi), ("pytorch_inference_vllm_0_16", nxdi))]
    made.append(_image_venv(venvs, root, "home/ubuntu/aws_neuron_venv_pytorch", stack, interpreter))
    tools = _image_venv(venvs, root, "opt/tools", [simple_wheel("awscli", "1.45.11")], interpreter)
    code, report, _ = check_json(["--root", str(root)])
    assert bad_findings(report) == set() and code == 0
    assert sorted(_environments(report)) == sorted(str(venv) for venv in made)
    assert set(report["release"]["environments"].values()) == {"2.31.1"}
    holds = {Path(env["path"]).name: env["holds"] for env in report["environments"]}
    assert holds["aws_neuronx_venv_pytorch_2_9"] == "PyTorch 2.9 (torch-neuronx)"
    assert holds["aws_neuronx_venv_pytorch_2_9_nxd_inference"] == "PyTorch 2.9 (torch-neuronx) + NxD Inference"
    assert {"path": str(tools), "kind": "venv", "discovered_by": "a folder in /opt"} in \
        report["facts"]["listed_environments"]
    text = run_cli(["check", "--root", str(root)]).stdout
    assert "PyTorch 2.9 (torch-neuronx) + NxD Inference" in text
    assert "1 more environment(s) without torch or a Neuron package, not judged (-v lists them)" in text


def test_a_home_of_every_layout(tmp_path: Path, venvs: VenvFactory) -> None:
    """pyenv, a uv venv, a poetry project's `.venv`, pipx, and a Jupyter kernel that names a venv outside every
    searched place: those holding torch or Neuron packages are judged, the others listed."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.2xlarge", release="2.31.1"))
    interpreter = install_image_interpreter(root, PY)
    stack = stack_wheels(HEALTHY_STACKS["2.31.1"])
    home = root / "home" / "alice"
    pyenv = home / ".pyenv" / "versions" / "3.11.9"
    installation(pyenv, PY)  # what `pyenv install 3.11.9` leaves: bin/, lib/python3.11/os.py, no pyvenv.cfg
    install_into(venvs, pyenv / "lib" / f"python{PY}" / "site-packages", stack)
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text(f"[global]\nextra-index-url = {NEURON_REPO}\n")
    uv_venv = _image_venv(venvs, root, "home/alice/uv-env", stack, interpreter)
    cfg = uv_venv / "pyvenv.cfg"
    cfg.write_text(cfg.read_text() + "uv = 0.9.5\n")
    project = _image_venv(venvs, root, "home/alice/webapp/.venv", [simple_wheel("flask", "3.1.0")], interpreter)
    (home / "webapp" / "pyproject.toml").write_text("[tool.poetry]\nname = 'webapp'\n")
    pipx = _image_venv(venvs, root, "home/alice/.local/share/pipx/venvs/black", [simple_wheel("black", "25.1.0")],
                       interpreter)
    elsewhere = _image_venv(venvs, root, "srv/envs/train", stack, interpreter)
    kernelspec(home / ".local" / "share" / "jupyter" / "kernels", "train", "/srv/envs/train/bin/python",
               "Python (torch-neuronx)")
    code, report, _ = check_json(["--root", str(root)])
    assert bad_findings(report) == set() and code == 0
    assert _environments(report) == {str(pyenv): ("pyenv", "pyenv"), str(uv_venv): ("uv", "a folder in the home"),
                                     str(elsewhere): ("venv", "Jupyter kernel train")}
    listed = {item["path"]: item["kind"] for item in report["facts"]["listed_environments"]}
    assert listed == {str(project): "project", str(pipx): "pipx"}
    assert report["facts"]["environments_cut_at"] is None


def test_discovery_stops_at_its_bound(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "host", HostSpec(release="2.31.1"))
    interpreter = install_image_interpreter(root, PY)
    for index in range(4):
        _image_venv(venvs, root, f"home/bob/env{index}", [simple_wheel("six", "1.16.0")], interpreter)
    discovery = discover_environments(RootFS(str(root)), {}, limit=3)
    assert len(discovery.found) == 3 and discovery.cut


def test_near_miss_a_folder_with_a_bin_but_no_python_is_no_environment(tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec(release="2.31.1"))
    (root / "opt" / "tool" / "bin").mkdir(parents=True)
    (root / "opt" / "tool" / "bin" / "python3").write_text("#!/bin/sh\n")
    shutil.rmtree(root / "usr" / "local", ignore_errors=True)
    assert discover_environments(RootFS(str(root)), {}).found == []


def test_the_distributions_python_with_pips_installs_in_usr_local(tmp_path: Path, venvs: VenvFactory) -> None:
    """`sudo pip install torch-neuronx …` with Amazon Linux's /usr/bin/python3 puts the stack into
    /usr/local/lib/pythonX.Y/site-packages: the look before judging reads the folders inspection reads, so the
    system environment is judged, not only listed."""
    from tests.layouts import installation

    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.2xlarge", release="2.31.1", os="al2023",
                                                  kernel="6.1.115-126.197.amzn2023.x86_64"))
    installation(root / "usr", PY)
    install_into(venvs, root / "usr" / "local" / "lib" / f"python{PY}" / "site-packages",
                 stack_wheels(HEALTHY_STACKS["2.31.1"]))
    _, report, _ = check_json(["--root", str(root)])
    assert _environments(report) == {str(root / "usr"): ("system", "the system interpreter")}
    assert report["release"]["environments"] == {str(root / "usr"): "2.31.1"}
