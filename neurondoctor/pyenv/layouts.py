"""What kind of Python environment a directory is, read from its files.

Each layout has its own marks, and its own meaning of "interpreter missing" and "damaged":
- `venv` (python -m venv, virtualenv), `uv` (`uv venv`: `uv = …` in pyvenv.cfg, no pip), `project` (a `.venv` of
  poetry, pdm, uv or pipenv, or their cache folders), `pipx` (`…/pipx/venvs/NAME`): a `pyvenv.cfg`, and a
  `bin/python` link to a base interpreter.
- `conda` (Miniconda, Miniforge, the DLC images' `/opt/conda`): a `conda-meta/` folder, its own `bin/python`, no
  pyvenv.cfg (which is not damage there).
- `pyenv`: `~/.pyenv/versions/X.Y.Z` is a whole installation (no pyvenv.cfg); a pyenv-virtualenv one is a venv.
- `system`: an installation with no venv marks: `/usr` (the distribution's python3, whose pip installs go to
  `/usr/local/lib/pythonX.Y/dist-packages` on Debian) or `/usr/local` (Python built from source, as the Neuron DLC
  Dockerfiles do for `/usr/local/bin/python`).
- `jupyter-kernel`: an interpreter a kernelspec names whose folder is none of the above.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path
from typing import Optional

from neurondoctor.facts.python_env import INSTALLATION_KINDS, KINDS, SITE_ROLE_SYSTEM, SITE_ROLE_VENV
from neurondoctor.host.rootfs import RootFS
from neurondoctor.neuron_version import release_tuple
from neurondoctor.python_packaging import canonical_name

__all__ = ["INSTALLATION_KINDS", "KINDS", "PYTHON_DIR", "conda_python_version", "holds_any", "installation_sites",
           "layout_of", "python_versions", "site_folders", "site_packages_dirs", "stdlib_version", "stranded_sites"]


_PROJECT_FILES = ("pyproject.toml", "poetry.lock", "pdm.lock", "uv.lock", "Pipfile", "Pipfile.lock")
_PROJECT_CACHES = ("/pypoetry/virtualenvs/", "/.local/share/virtualenvs/", "/pdm/venvs/")
PYTHON_DIR = re.compile(r"^python([0-9]{1,3}\.[0-9]{1,3})t?$")  # ASCII digits: `python٣.١٢` is no Python


def _has_interpreter(fs: RootFS, inner: str) -> bool:
    return any(fs.lexists(f"{inner}/bin/{name}") for name in ("python", "python3"))


def _is_installation(fs: RootFS, inner: str) -> bool:
    """A prefix with its own interpreter and standard library (`lib/pythonX.Y/os.py`)."""
    return _has_interpreter(fs, inner) and any(
        fs.exists(f"{library}/os.py") for library in fs.glob(f"{inner}/lib", "python3*"))


def _venv_kind(fs: RootFS, inner: str, pyvenv_cfg: str) -> str:
    if "/.pyenv/versions/" in f"{inner}/":
        return "pyenv"
    if "/pipx/venvs/" in inner:
        return "pipx"
    parent = inner.rsplit("/", 1)[0] or "/"
    if (inner.endswith("/.venv") or any(cache in f"{inner}/" for cache in _PROJECT_CACHES)
            or any(fs.exists(f"{parent}/{name}") for name in _PROJECT_FILES)):
        return "project"
    if re.search(r"(?m)^\s*uv\s*=", pyvenv_cfg):
        return "uv"
    return "venv"


def read_pyvenv_cfg(fs: RootFS, inner: str) -> Optional[str]:
    """The text of a prefix's `pyvenv.cfg`, which its owner writes: read as a file in a folder others write (a hard
    link to a file the owner may not read is refused; a link is followed, as Python follows it); None when it
    cannot be read."""
    return fs.try_read_untrusted_text(f"{inner}/pyvenv.cfg", 64 * 1024, follow_links=True)


def layout_of(fs: RootFS, inner: str) -> Optional[str]:
    """The kind of environment whose prefix is the in-view folder `inner`, or None when it is none."""
    if fs.is_dir(f"{inner}/conda-meta"):
        return "conda"
    if fs.lexists(f"{inner}/pyvenv.cfg"):
        return _venv_kind(fs, inner, read_pyvenv_cfg(fs, inner) or "")
    if not _is_installation(fs, inner):
        return None
    return "pyenv" if "/.pyenv/versions/" in f"{inner}/" else "system"


def python_versions(fs: RootFS, inner: str) -> list[str]:
    """X.Y of every `lib*/pythonX.Y` folder of a prefix, oldest first."""
    names = [path.rsplit("/", 1)[-1] for lib in ("lib", "lib64") for path in fs.glob(f"{inner}/{lib}", "python3*")]
    return sorted({found.group(1) for found in map(PYTHON_DIR.match, names) if found}, key=release_tuple)


def site_packages_dirs(fs: RootFS, inner: str) -> list[tuple[str, str]]:
    """(X.Y, in-view site-packages path) for each `lib*/pythonX.Y/site-packages` that exists, once per folder
    (lib64 is often a link to lib)."""
    found: list[tuple[str, str]] = []
    seen: set[Path] = set()
    for lib in ("lib", "lib64"):
        for python_dir in fs.glob(f"{inner}/{lib}", "python*"):
            match = PYTHON_DIR.match(python_dir.rsplit("/", 1)[-1])
            site = f"{python_dir}/site-packages"
            resolved = fs.resolve(site)
            if match and resolved is not None and resolved.is_dir() and resolved not in seen:
                seen.add(resolved)
                found.append((match.group(1), site))
    return found


def installation_sites(fs: RootFS, inner: str, major_minor: str) -> list[tuple[str, str]]:
    """(in-view folder, role) of an installation's own import path, in import order: its
    `lib*/pythonX.Y/site-packages`; for `/usr`, Debian's and Amazon Linux's `/usr/local` folders (where its pip
    installs) before the distribution's own packages, which keep their Debian-style versions (role system)."""
    if inner != "/usr":
        return [(site, SITE_ROLE_VENV) for version, site in site_packages_dirs(fs, inner) if version == major_minor]
    own = [f"/usr/local/{lib}/python{major_minor}/{leaf}" for lib in ("lib64", "lib")
           for leaf in ("dist-packages", "site-packages")]
    system = [f"/usr/{lib}/python{major_minor}/site-packages" for lib in ("lib64", "lib")]
    system += ["/usr/lib/python3/dist-packages"]
    return [(site, SITE_ROLE_VENV) for site in own if fs.is_dir(site)] + [
        (site, SITE_ROLE_SYSTEM) for site in system if fs.is_dir(site)]


def _own_prefixes(inner: str) -> list[str]:
    """The prefixes whose `lib/pythonX.Y` an installation's packages live in: `/usr`'s pip installs go to
    `/usr/local` (Debian's `dist-packages`, Amazon Linux's `site-packages`)."""
    return [inner, "/usr/local"] if inner == "/usr" else [inner]


def _has_python(fs: RootFS, prefixes: list[str], version: str) -> bool:
    """Whether a Python `version` is installed in one of these prefixes: its standard library (`os.py`) or its
    `bin/pythonX.Y` is there."""
    return any(fs.exists(f"{prefix}/{lib}/python{version}/os.py") for prefix in prefixes for lib in ("lib", "lib64")) \
        or any(fs.exists(f"{prefix}/bin/python{version}") for prefix in prefixes)


def stranded_sites(fs: RootFS, inner: str, kind: str, running: str) -> list[str]:
    """The package folders of a prefix that were installed for another Python minor version than the `running` one
    and that no interpreter of the prefix can import: a venv's other `lib/pythonX.Y/site-packages` (a venv runs one
    Python), an installation's when that Python is no longer installed there (`conda install python=3.12` leaves
    the pip-installed packages in lib/python3.10; an Ubuntu release upgrade removes python3.10 and leaves
    `/usr/local/lib/python3.10/dist-packages`). A Python that is still installed beside the default one
    (deadsnakes' python3.10 next to 3.12) owns its folders: they are not stranded."""
    prefixes = _own_prefixes(inner) if kind in INSTALLATION_KINDS else [inner]
    found: list[str] = []
    try:
        versions = {version for prefix in prefixes for version in python_versions(fs, prefix)} - {running}
        for version in sorted(versions, key=release_tuple):
            if kind in INSTALLATION_KINDS and _has_python(fs, prefixes, version):
                continue
            found += [site for site, role in installation_sites(fs, inner, version) if role == SITE_ROLE_VENV]
    except OSError:  # a folder this user may not list: its packages are not judged (the site readers say why)
        return found
    return found


def stdlib_version(fs: RootFS, interpreter: str) -> Optional[str]:
    """X.Y of an interpreter file from its own installation: the one `lib/pythonX.Y/os.py` beside its `bin/` (where
    Python finds its standard library). None when there is none, or more than one (which of them it is, its file
    name would have to say)."""
    parent, _, _ = interpreter.rpartition("/")
    if not parent.endswith("/bin"):
        return None
    prefix = parent[: -len("/bin")] or "/"
    try:
        versions = [version for version in python_versions(fs, prefix)
                    if any(fs.exists(f"{prefix}/{lib}/python{version}/os.py") for lib in ("lib", "lib64"))]
    except OSError:  # an installation this user may not list (another user's ~/.pyenv): not known
        return None
    return versions[0] if len(versions) == 1 else None


_CONDA_PYTHON = r"^python-([0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3})-[^/]*\.json$"  # compiled by `re` for a conda prefix


def conda_python_version(fs: RootFS, inner: str) -> Optional[str]:
    """X.Y.Z of the Python conda installed into a prefix, from its own record: `conda-meta/python-3.10.14-h955ad1f_0
    .json` (conda names each record `NAME-VERSION-BUILD.json`). None without exactly one such record."""
    versions = {found.group(1) for found in map(re.compile(_CONDA_PYTHON).match, (path.rsplit("/", 1)[-1] for path in
                                                                      fs.glob(f"{inner}/conda-meta", "python-*.json")))
                if found}
    return versions.pop() if len(versions) == 1 else None


def site_folders(fs: RootFS, inner: str) -> list[str]:
    """The folders an environment's packages live in, for a look before reading them: the ones its inspection
    reads (`installation_sites`), for every Python of the prefix (`/usr`'s pip folders in `/usr/local` too, where
    an OS upgrade leaves them behind)."""
    versions = set(python_versions(fs, inner))
    for prefix in _own_prefixes(inner)[1:]:
        try:
            versions.update(python_versions(fs, prefix))
        except OSError:  # `/usr/local/lib` this user may not list: `/usr`'s own folders are still looked at
            continue
    return list(dict.fromkeys(site for version in sorted(versions, key=release_tuple)
                              for site, _ in installation_sites(fs, inner, version)))


def _record_name(entry: str) -> Optional[str]:
    """`torch_neuronx-2.9.0.dist-info` → `torch-neuronx`; None for what is not an install record."""
    for suffix in (".dist-info", ".egg-info"):
        if entry.endswith(suffix):
            return canonical_name(entry[: -len(suffix)].split("-", 1)[0])
    return None


def holds_any(fs: RootFS, inner: str, names: Collection[str], limit: int = 20000) -> bool:
    """Whether any install record in the environment's package folders has one of these names: a listing of the
    folders, no metadata read, so that a host's hundred unrelated environments cost little."""
    seen = 0
    for folder in site_folders(fs, inner):
        try:
            entries = fs.listdir(folder)
        except OSError:
            continue
        for entry in entries:
            seen += 1
            if seen > limit:
                return True  # too many to look at: judge it rather than pass it over
            name = _record_name(entry)
            if name is not None and name in names:
                return True
    return False
