"""Which environments `check` inspects when none is named: the active one, else the usual Neuron places.

Places (ARCHITECTURE.md §3): DLAMI `/opt/aws_neuronx_venv_*`, manual installs `~/aws_neuron_venv_*`
(`/home/*/` and `/root/`). On a live host with none of those, the `python3` on PATH is inspected live, so a
laptop or CI machine still gets its Python line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath

from neurondoctor.host.rootfs import RootFS
from neurondoctor.run_trust import foreign_control

DISCOVERY_GLOBS = (
    ("/opt", "aws_neuronx_venv_*"),
    ("/home/*", "aws_neuron_venv_*"),
    ("/root", "aws_neuron_venv_*"),
)


@dataclass(frozen=True)
class DiscoveredEnvironment:
    """A place to inspect: a venv directory (static) or an interpreter (live), and why it was chosen."""

    path: str
    live: bool
    reason: str


def _expand(fs: RootFS, directory: str, pattern: str) -> list[str]:
    if "*" not in directory:
        return fs.glob(directory, pattern)
    parent, _, child_pattern = directory.rpartition("/")
    found: list[str] = []
    for child in fs.glob(parent or "/", child_pattern):
        found.extend(fs.glob(child, pattern))
    return found


def _operator_controlled(fs: RootFS, inner: str) -> bool:
    """The environment's folder, every folder above it inside the root, its pyvenv.cfg and site-packages: none
    owned by another user than root or writable by one (run_trust's rule, read under the root)."""
    parts = PurePosixPath(inner).parts[1:]
    inner_paths = ["/" + "/".join(parts[:count]) for count in range(1, len(parts) + 1)]
    libraries = fs.glob(f"{inner}/lib", "python*")
    inner_paths += [f"{inner}/pyvenv.cfg", *libraries, *(f"{path}/site-packages" for path in libraries)]
    for path in inner_paths:
        machine = fs.host_path(path)
        if (machine.exists() or machine.is_symlink()) and foreign_control(str(machine)):
            return False
    return True


def operator_environments(fs: RootFS) -> list[DiscoveredEnvironment]:
    """What unattended `health` judges when health.conf names no environment: the DLAMI places under /opt that only
    root controls (issue 25 §2). An environment an unprivileged user can create or edit (a home venv, an /opt venv
    of theirs) never changes a node's verdict or drains it: with a shared /home, it would drain every node."""
    directory, pattern = DISCOVERY_GLOBS[0]
    return [DiscoveredEnvironment(str(fs.host_path(inner)), False, "root-owned Neuron environment location")
            for inner in _expand(fs, directory, pattern)
            if (fs.exists(f"{inner}/pyvenv.cfg") or fs.exists(f"{inner}/bin/python"))
            and _operator_controlled(fs, inner)]


def discover_environments(fs: RootFS, environ: Mapping[str, str]) -> list[DiscoveredEnvironment]:
    if fs.is_live:
        for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
            if environ.get(variable):
                return [DiscoveredEnvironment(environ[variable], False, f"active environment (${variable})")]
    found = [
        DiscoveredEnvironment(str(fs.host_path(inner)), False, "Neuron environment location")
        for directory, pattern in DISCOVERY_GLOBS
        for inner in _expand(fs, directory, pattern)
        if fs.exists(f"{inner}/pyvenv.cfg") or fs.exists(f"{inner}/bin/python")
    ]
    if found or not fs.is_live:
        return found
    import shutil  # only on a live host with nothing else to inspect

    python = shutil.which("python3", path=environ.get("PATH"))
    return [DiscoveredEnvironment(python, True, "python3 on PATH")] if python else []
