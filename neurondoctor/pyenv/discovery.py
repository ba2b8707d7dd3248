"""Which environments `check` inspects when none is named: the active one, else the usual Neuron places.

Places (ARCHITECTURE.md §3): DLAMI `/opt/aws_neuronx_venv_*`, manual installs `~/aws_neuron_venv_*`
(`/home/*/` and `/root/`). On a live host with none of those, the `python3` on PATH is inspected live, so a
laptop or CI machine still gets its Python line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from neurondoctor.host.rootfs import RootFS

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
