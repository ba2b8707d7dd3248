"""Builds small real wheels and installs them into real venvs with pip, so dist-infos are pip's own.

A wheel here is what a build backend writes: `{name}-{version}.dist-info/{METADATA,WHEEL,RECORD,top_level.txt}`
plus package files. `pip install --no-index --find-links` then leaves INSTALLER, REQUESTED and RECORD
exactly as it does for any install.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional

PLACEHOLDER_INIT = ('raise ImportError("WRONG PACKAGE. Please install the package from Neuron Repository - '
                    'pip.repos.neuron.amazonaws.com")\n')


@dataclass(frozen=True)
class WheelSpec:
    """One distribution to build: its name, version, dependencies and files (path -> text)."""

    name: str
    version: str
    requires: tuple[str, ...] = ()
    files: tuple[tuple[str, str], ...] = ()
    description: str = ""
    requires_python: str = ""

    @property
    def dist_name(self) -> str:
        return self.name.replace("-", "_")

    @property
    def filename(self) -> str:
        return f"{self.dist_name}-{self.version}-py3-none-any.whl"


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_wheel(spec: WheelSpec, out_dir: Path) -> Path:
    """Build once per distinct spec: a CPU and a CUDA `torch 2.9.0` share a file name, not a directory."""
    key = hashlib.sha256(repr(spec).encode()).hexdigest()[:12]
    target = out_dir / key / spec.filename
    target.parent.mkdir(parents=True, exist_ok=True)
    if target.exists():
        return target
    files = dict(spec.files) or {f"{spec.dist_name.lower()}/__init__.py": f'__version__ = "{spec.version}"\n'}
    info = f"{spec.dist_name}-{spec.version}.dist-info"
    metadata = ["Metadata-Version: 2.1", f"Name: {spec.name}", f"Version: {spec.version}",
                "Summary: test distribution built by neurondoctor's tests"]
    if spec.requires_python:
        metadata.append(f"Requires-Python: {spec.requires_python}")
    extras = dict.fromkeys(re.findall(r"extra\s*==\s*['\"]([^'\"]+)['\"]", " ".join(spec.requires)))
    metadata += [f"Provides-Extra: {extra}" for extra in extras]  # as setuptools writes them, before the needs
    metadata += [f"Requires-Dist: {requirement}" for requirement in spec.requires]
    metadata_text = "\n".join(metadata) + "\n\n" + (spec.description or "") + "\n"
    top_levels = sorted({path.split("/", 1)[0] for path in files if "/" in path})
    members = {path: text.encode() for path, text in files.items()}
    members[f"{info}/METADATA"] = metadata_text.encode()
    members[f"{info}/WHEEL"] = (b"Wheel-Version: 1.0\nGenerator: bdist_wheel (0.43.0)\nRoot-Is-Purelib: true\n"
                                b"Tag: py3-none-any\n\n")
    members[f"{info}/top_level.txt"] = ("\n".join(top_levels) + "\n").encode()
    record = [_record_line(path, data) for path, data in members.items()] + [f"{info}/RECORD,,"]
    members[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
    with zipfile.ZipFile(target, "w") as archive:
        for path, data in members.items():
            archive.writestr(path, data)
    return target


def torch_files(version_py_version: str, cuda: Optional[str]) -> tuple[tuple[str, str], ...]:
    """torch's own `version.py` layout: PyPI's x86_64 wheel says `cuda = '12.8'`, the CPU one `cuda = None`."""
    cuda_text = repr(cuda) if cuda else "None"
    version_py = (f"__version__ = '{version_py_version}'\n"
                  f"debug = False\ncuda: Optional[str] = {cuda_text}\ngit_version = 'deadbeef'\nhip = None\n")
    return (("torch/__init__.py", "from torch.version import __version__\n"), ("torch/version.py", version_py))


@dataclass
class VenvFactory:
    """Creates real venvs (`python -m venv`) and installs built wheels into them with pip."""

    base: Path
    wheel_dir: Path
    counter: int = 0
    built: dict[str, Path] = field(default_factory=dict)

    def create(self, name: Optional[str] = None, python: str = sys.executable, system_site: bool = False,
               parent: Optional[Path] = None) -> Path:
        self.counter += 1
        venv = (parent or self.base) / (name or f"venv{self.counter}")
        venv.parent.mkdir(parents=True, exist_ok=True)
        command = [python, "-m", "venv", "--without-pip", str(venv)]
        if system_site:
            command.insert(4, "--system-site-packages")
        subprocess.run(command, check=True, capture_output=True, timeout=120)
        return venv

    def install(self, venv: Path, specs: list[WheelSpec], target: Optional[Path] = None) -> None:
        """`pip --python VENV install --no-deps` (or `--target DIR`): pip writes the dist-infos itself."""
        wheels = [str(build_wheel(spec, self.wheel_dir)) for spec in specs]
        command = [sys.executable, "-m", "pip", "--python", str(venv_python(venv)), "install", "--no-deps",
                   "--no-index", "--no-compile", "--disable-pip-version-check", "-q"]
        if target is not None:
            command += ["--target", str(target)]
        env = dict(os.environ)
        for variable in ("PIP_CONSTRAINT", "PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL"):
            env.pop(variable, None)
        env["PIP_CONFIG_FILE"] = os.devnull
        subprocess.run(command + wheels, check=True, capture_output=True, timeout=300, env=env)


def add_pip(venv: Path) -> Path:
    """pip inside the venv, as `python3 -m venv` leaves it (VenvFactory makes them `--without-pip`), so a printed
    `bin/python -m pip …` fix runs as it would for the user."""
    subprocess.run([str(venv_python(venv)), "-m", "ensurepip"], check=True, capture_output=True, timeout=300)
    return venv


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def write_pip_conf(venv: Path, extra_index: str = "https://pip.repos.neuron.amazonaws.com") -> None:
    """What `python -m pip config --site set global.extra-index-url …` writes."""
    (venv / "pip.conf").write_text(f"[global]\nextra-index-url = {extra_index}\n", encoding="utf-8")


def install_image_interpreter(root: Path, version: str) -> str:
    """Put `usr/bin/pythonX.Y` into a host tree, as an AMI has it; returns its in-root path."""
    interpreter = root / "usr" / "bin" / f"python{version}"
    interpreter.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(Path(sys.executable).resolve(), interpreter)
    interpreter.chmod(0o755)
    return f"/usr/bin/python{version}"


def repoint_to_image_interpreter(venv: Path, inner_interpreter: str) -> None:
    """What `pythonX.Y -m venv` leaves inside the image: absolute links to the image's interpreter."""
    for link in (venv / "bin").iterdir():
        if link.is_symlink() and link.name.startswith("python"):
            link.unlink()
            link.symlink_to(inner_interpreter)
    cfg = venv / "pyvenv.cfg"
    lines = [f"home = {Path(inner_interpreter).parent}" if line.startswith("home") else line
             for line in cfg.read_text().splitlines()]
    cfg.write_text("\n".join(lines) + "\n")


def relabel_python(venv: Path, version: str, micro: int = 12) -> None:
    """Make a venv built here by `python3.11 -m venv` look as one built by `pythonX.Y -m venv` on the user's host
    and copied: `lib/pythonX.Y`, pyvenv.cfg's version, and `bin/python*` links to `/usr/bin/pythonX.Y`, which the
    machine reading the copy does not have. This machine has only Python 3.11 (docs/measured.md), and a copied
    venv is read statically: nothing of it is run."""
    built = next((venv / "lib").glob("python3.*"))
    if built.name != f"python{version}":
        built.rename(venv / "lib" / f"python{version}")
    for link in (venv / "bin").iterdir():
        if link.is_symlink() and link.name.startswith("python"):
            link.unlink()
    for name in ("python", "python3", f"python{version}"):
        (venv / "bin" / name).symlink_to(f"/usr/bin/python{version}")
    cfg = venv / "pyvenv.cfg"
    full = f"{version}.{micro}"
    lines = []
    for line in cfg.read_text().splitlines():
        key = line.split("=", 1)[0].strip()
        if key == "home":
            line = "home = /usr/bin"
        elif key in ("version", "version_info"):
            line = f"{key} = {full}"
        elif key == "executable":
            line = f"executable = /usr/bin/python{version}"
        elif key == "command":
            line = f"command = /usr/bin/python{version} -m venv {venv}"
        lines.append(line)
    cfg.write_text("\n".join(lines) + "\n")


def image_venv(venvs: VenvFactory, root: Path, parent: Path, name: str, version: str,
               wheels: list[WheelSpec]) -> Path:
    """A venv in a host tree as the image's own `pythonX.Y -m venv` left it, with `wheels` installed and the
    Neuron repository in its pip.conf: read statically under `--root`."""
    interpreter = install_image_interpreter(root, version)
    venv = venvs.create(name, parent=parent)
    venvs.install(venv, wheels)
    write_pip_conf(venv)
    repoint_to_image_interpreter(venv, interpreter)
    relabel_python(venv, version)
    return venv
