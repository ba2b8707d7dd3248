"""Environments of every layout, placed in a host tree as their installers leave them.

Each builder says where its shape comes from. Packages are installed by pip (`--target`, or into a real venv), so
the install records are pip's own; interpreters are copies of this machine's, as `install_image_interpreter` does
for an AMI, because the environments here are read statically (`check --root`): nothing in them is run.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from tests.wheelhouse import VenvFactory, WheelSpec


def installation(prefix: Path, version: str) -> None:
    """`bin/pythonX.Y` (a real interpreter file) with `python3` and `python` links, and the standard library's
    `os.py`, which tells an installation from a folder that merely has a `bin/`."""
    binary = prefix / "bin" / f"python{version}"
    binary.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(sys.executable).resolve(), binary)
    binary.chmod(0o755)
    for name in ("python3", "python"):
        (prefix / "bin" / name).symlink_to(f"python{version}")
    library = prefix / "lib" / f"python{version}"
    library.mkdir(parents=True, exist_ok=True)
    (library / "os.py").write_text("# the standard library's os module\n")


def runnable_installation(prefix: Path) -> str:
    """An installation that runs, for fixes that must execute (`PREFIX/bin/python -m pip …`): this machine's
    interpreter copied into `bin/`, its standard library linked entry by entry into `lib/pythonX.Y/`, and an empty
    `site-packages` of its own. Python finds its prefix from the `lib/pythonX.Y/os.py` landmark beside the binary,
    so `sys.prefix` is `prefix`, as for a conda or a source-built Python. Returns `X.Y`."""
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    installation(prefix, version)
    library = prefix / "lib" / f"python{version}"
    (library / "os.py").unlink()
    real = Path(sys.base_prefix) / "lib" / f"python{version}"
    for entry in real.iterdir():
        if entry.name != "site-packages":
            (library / entry.name).symlink_to(entry)
    (library / "site-packages").mkdir()
    return version


def install_into(venvs: VenvFactory, site: Path, wheels: list[WheelSpec]) -> None:
    """pip's own install records in `site` (`pip install --target`)."""
    site.mkdir(parents=True, exist_ok=True)
    helper = venvs.base / "target-helper"
    if not helper.exists():
        venvs.create("target-helper")
    venvs.install(helper, wheels, target=site)


def source_built_python(venvs: VenvFactory, root: Path, version: str, wheels: list[WheelSpec],
                        extra_index: str) -> Path:
    """The Neuron PyTorch training DLC (aws-neuron/deep-learning-containers docker/pytorch/training/*/
    Dockerfile.neuronx): Python built from source with `./configure --prefix=/usr/local`, `ln -s
    /usr/local/bin/pythonX.Y /usr/local/bin/python`, `pip config set global.extra-index-url …` run as root (so
    `/root/.config/pip/pip.conf`), then `pip install torch-neuronx==… neuronx-cc==…` into
    `/usr/local/lib/pythonX.Y/site-packages`. No venv."""
    prefix = root / "usr" / "local"
    installation(prefix, version)
    install_into(venvs, prefix / "lib" / f"python{version}" / "site-packages", wheels)
    pip_conf = root / "root" / ".config" / "pip" / "pip.conf"
    pip_conf.parent.mkdir(parents=True, exist_ok=True)
    pip_conf.write_text(f"[global]\nextra-index-url = {extra_index}\n")
    return prefix


def conda_install(venvs: VenvFactory, prefix: Path, version: str, wheels: list[WheelSpec],
                  conda_packages: tuple[str, ...] = ("pip-23.3-pyhd8ed1ab_0",),
                  runnable: bool = False) -> Path:
    """A Miniforge/Mambaforge install (`mambaforge.sh -b -p /opt/conda`, then `pip install …`: the Neuron
    PyTorch inference DLC for Inf1, docker/pytorch/inference/1.13.1/Dockerfile.neuron): `conda-meta/` with one
    JSON record per conda package (`NAME-VERSION-BUILD.json`, the Python's own among them, for the version
    installed) and a `history`, its own `bin/python`, no pyvenv.cfg."""
    if runnable:
        version = runnable_installation(prefix)
    else:
        installation(prefix, version)
    meta = prefix / "conda-meta"
    meta.mkdir(parents=True, exist_ok=True)
    (meta / "history").write_text("==> 2024-10-01 12:00:00 <==\n# cmd: /opt/conda/bin/conda install python\n")
    for package in (f"python-{version}.12-hd12c33a_0_cpython", *conda_packages):
        name, package_version = package.split("-")[0], package.split("-")[1]
        (meta / f"{package}.json").write_text(json.dumps({"name": name, "version": package_version}))
    install_into(venvs, prefix / "lib" / f"python{version}" / "site-packages", wheels)
    return prefix


def kernelspec(folder: Path, name: str, interpreter: str, display_name: str) -> None:
    """What `python -m ipykernel install --user --name NAME --display-name …` writes (the Neuron install pages run
    it for `aws_neuron_venv_pytorch`)."""
    spec = folder / name / "kernel.json"
    spec.parent.mkdir(parents=True, exist_ok=True)
    spec.write_text(json.dumps({"argv": [interpreter, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
                                "display_name": display_name, "language": "python",
                                "metadata": {"debugger": True}}, indent=1))
