"""`--venv DIR`: inspect an environment by reading its files only; nothing is started.

Works on a venv whose interpreter is gone (that itself is a finding) and on a venv inside a mounted
image: when DIR lies under `--root`, its links resolve inside the root (docs/contracts.md §4).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

from neurondoctor.facts.python_env import SITE_ROLE_SYSTEM, SITE_ROLE_USER, SITE_ROLE_VENV, PythonEnvironment, SiteDir
from neurondoctor.host.rootfs import RootFS
from neurondoctor.pyenv.layouts import (
    INSTALLATION_KINDS,
    PYTHON_DIR,
    conda_python_version,
    installation_sites,
    layout_of,
    python_versions,
    read_pyvenv_cfg,
    site_packages_dirs,
    stdlib_version,
    stranded_sites,
)
from neurondoctor.pyenv.pip_config import read_pip_config
from neurondoctor.pyenv.site_scan import inspect_site_dir
from neurondoctor.pyenv.venv_marker import read_venv_marker


def parse_pyvenv_cfg(text: str) -> dict[str, str]:
    """`key = value` lines; anything else is ignored, as the `venv` module itself does."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, separator, value = line.partition("=")
        if separator and key.strip():
            values[key.strip().lower()] = value.strip()
    return values


def filesystem_for(root: RootFS, venv_dir: str) -> tuple[RootFS, str]:
    """The filesystem view and in-view path to read a venv through: the root's when DIR lies under it."""
    if not root.is_live:
        inner = root.inner_path(venv_dir)
        if inner is not None:
            return root, inner
    return RootFS("/"), str(Path(venv_dir).absolute())


def _homes_under(fs: RootFS) -> list[str]:
    """Every home in a tree: `home/*` and `root` (an image or a copied tree has no logged-in user)."""
    homes = [path for path in fs.glob("/home", "*") if fs.is_dir(path)]
    return homes + (["/root"] if fs.is_dir("/root") else [])


def home_dirs_for(fs: RootFS, inner_dir: Optional[str], environ: Mapping[str, str]) -> list[str]:
    """Homes (in-view paths) whose user site and pip config apply (docs/contracts.md §4).

    The venv's owner's when it lies in a home; on a live host also `$HOME`. Under another root: `$HOME` mapped
    into the root when it lies under it, else every home under the root, because whoever runs the venv there
    gets their own `~/.config/pip/pip.conf` and `~/.local` (a support engineer's copied tree, a venv kept
    outside the image).
    """
    homes: list[str] = []
    match = re.match(r"^(/home/[^/]+|/root)(/|$)", inner_dir or "")
    if match:
        homes.append(match.group(1))
    home = (environ.get("HOME") or "").rstrip("/")
    if fs.is_live:
        if home and home not in homes:
            homes.append(home)
        return homes
    if homes:
        return homes
    mapped = fs.inner_path(home) if home else None
    if mapped is not None and mapped != "/" and fs.is_dir(mapped):
        return [mapped]
    return _homes_under(fs)


def _leads_to_a_file(path: Optional[Path]) -> bool:
    """Whether the chain ends at a file; one this user may not look at counts as present (it is not *gone*)."""
    if path is None:
        return False
    try:
        return path.is_file()
    except PermissionError:
        return True


def _interpreter(fs: RootFS, inner_dir: str) -> tuple[str, bool, Optional[str]]:
    """(bin/python path, whether it leads to a real file, where the link chain ends)."""
    for name in ("python", "python3"):
        inner = f"{inner_dir}/bin/{name}"
        link = fs.host_path(inner)
        if link.is_symlink() or link.exists():
            target = fs.resolve(inner)
            exists = _leads_to_a_file(target)
            shown = fs.inner_path(target) if target is not None and not fs.is_live else (
                str(target) if target is not None else None)
            return str(link), exists, shown
    return str(fs.host_path(f"{inner_dir}/bin/python")), False, None


def launched_version(target: Optional[str]) -> Optional[str]:
    """X.Y of the interpreter a launcher's link chain ends at, from that file's own name: CPython installs itself as
    `pythonX.Y` and links `python3` and `python` to it (`/usr/bin/python3 -> python3.12`). None for a file named
    otherwise, which does not say."""
    match = PYTHON_DIR.match((target or "").rsplit("/", 1)[-1])
    return match.group(1) if match else None


def running_version(fs: RootFS, target: Optional[str]) -> Optional[str]:
    """X.Y of the interpreter file a launcher's chain ends at (`target`, an in-view path of `fs`): its own name,
    else its own installation's standard library (a `python3` that is a file, not a link to `python3.12`)."""
    return launched_version(target) or (stdlib_version(fs, target) if target and target.startswith("/") else None)


def _base_interpreter_in_root(root: RootFS, env: PythonEnvironment) -> None:
    """A venv copied out of the host beside its root: its absolute `bin/python -> /usr/bin/python3.10` names the
    host's interpreter, which lies in the root, not on the machine reading the copy (docs/contracts.md §4: the base
    Python is a host fact). Gone only when it is in neither."""
    target = env.interpreter_target
    if target and target.startswith("/") and _leads_to_a_file(root.resolve(target)):
        env.interpreter_exists = True
        env.interpreter_target = root.shown_path(target)


def _version(cfg: dict[str, str], python_dirs: list[tuple[str, str]]) -> Optional[str]:
    for key in ("version_info", "version"):
        value = cfg.get(key, "")
        if re.match(r"^[0-9]+\.[0-9]+", value):
            return value.split()[0]
    return python_dirs[0][0] if python_dirs else None


def _system_site(fs: RootFS, cfg: dict[str, str], major_minor: str) -> Optional[str]:
    """The base interpreter's site-packages, from `home = /usr/bin` in pyvenv.cfg."""
    home = cfg.get("home")
    if not home:
        return None
    prefix = home.rstrip("/").rsplit("/", 1)[0] or "/"
    for lib in ("lib", "lib64"):
        for leaf in ("site-packages", "dist-packages"):
            candidate = f"{prefix}/{lib}/python{major_minor}/{leaf}"
            if fs.exists(candidate):
                return candidate
    return None


def _installation_version(env: PythonEnvironment, fs: RootFS, inner: str) -> Optional[str]:
    """X.Y of the interpreter `bin/python3` leads to (`python3.12`, or its own standard library), else of the newest
    `lib*/pythonX.Y`; for conda the X.Y.Z its `conda-meta/python-X.Y.Z-*.json` record names when that is the same
    minor version."""
    launched = running_version(fs, env.interpreter_target) if env.interpreter_exists else None
    env.interpreter_version = launched
    recorded = conda_python_version(fs, inner) if env.kind == "conda" else None
    if recorded and (launched is None or recorded.startswith(f"{launched}.")):
        return recorded
    if launched:
        return launched
    versions = python_versions(fs, inner)
    return versions[-1] if versions else None


def _add_user_sites(root: RootFS, env: PythonEnvironment, homes: list[str], major_minor: str) -> None:
    """The user sites of these homes, first on the import path (Python puts the user site before site-packages);
    read from the root, where a host's homes are."""
    env.user_site_enabled = True
    for home in homes:
        user_site = f"{home}/.local/lib/python{major_minor}/site-packages"
        if root.is_dir(user_site):
            env.site_dirs.append(inspect_site_dir(root, user_site, SITE_ROLE_USER, follow_links=root.is_live))


def _inspect_installation(root: RootFS, fs: RootFS, inner: str, env: PythonEnvironment,
                          environ: Mapping[str, str]) -> None:
    """A conda, pyenv or system installation: its own interpreter, no pyvenv.cfg (not damage here), and the user
    site on its import path, because such an interpreter enables it (`python -m site`: ENABLE_USER_SITE True),
    which is how `pip install --user torch` shadows a conda torch."""
    env.interpreter, env.interpreter_exists, env.interpreter_target = _interpreter(fs, inner)
    env.python_version = _installation_version(env, fs, inner)
    major_minor = env.python_major_minor
    homes = home_dirs_for(root, inner if fs is root or root.is_live else None, environ)
    sites = installation_sites(fs, inner, major_minor) if major_minor else []
    if major_minor:
        _add_user_sites(root, env, homes, major_minor)
    for site, role in sites:
        env.site_dirs.append(inspect_site_dir(fs, site, role, follow_links=fs.is_live))
    if env.interpreter_version:  # packages left for a Python no longer installed here (ND-VENV-005 reads them)
        for site in stranded_sites(fs, inner, env.kind, env.interpreter_version):
            env.site_dirs.append(inspect_site_dir(fs, site, SITE_ROLE_VENV, follow_links=fs.is_live))
    if not sites:
        env.problems.append(f"no lib/python{major_minor or 'X.Y'}/site-packages directory")
    env.pip_config = read_pip_config(root, homes, fs, inner, environ)


def inspect_venv(root: RootFS, venv_dir: str, environ: Mapping[str, str],
                 discovered_by: str = "argument", kind: Optional[str] = None) -> PythonEnvironment:
    """Static facts for one environment folder, of any layout (pyenv/layouts.py): `kind` when discovery already
    read it, else read here."""
    venv_dir = os.path.abspath(venv_dir)  # fix commands name it absolutely, without `..` (docs/contracts.md §4)
    fs, inner = filesystem_for(root, venv_dir)
    env = PythonEnvironment(path=str(Path(venv_dir).absolute()), mode="static", interpreter="",
                            discovered_by=discovered_by)
    if not fs.exists(inner):
        env.exists = env.interpreter_exists = False
        env.problems.append("directory does not exist")
        return env
    env.kind = kind or layout_of(fs, inner) or "venv"
    if env.kind in INSTALLATION_KINDS:
        _inspect_installation(root, fs, inner, env, environ)
        return env
    cfg_text = read_pyvenv_cfg(fs, inner)
    if cfg_text is None:
        env.problems.append("no readable pyvenv.cfg: not a virtual environment, or it is damaged")
    env.pyvenv_cfg = parse_pyvenv_cfg(cfg_text or "")
    env.include_system_site_packages = env.pyvenv_cfg.get("include-system-site-packages", "").lower() == "true"
    env.interpreter, env.interpreter_exists, env.interpreter_target = _interpreter(fs, inner)
    if env.interpreter_exists:
        env.interpreter_version = running_version(fs, env.interpreter_target)
    elif fs is not root and not root.is_live:
        _base_interpreter_in_root(root, env)
        if env.interpreter_exists:  # the root's interpreter: its name says which Python it is
            env.interpreter_version = launched_version(env.interpreter_target)
    python_dirs = site_packages_dirs(fs, inner)
    env.python_version = _version(env.pyvenv_cfg, python_dirs)
    major_minor = env.python_major_minor
    # User sites and pip configuration are host facts: read from the root, for the homes that apply to this venv
    # (its owner's, $HOME, or every home under the root for a venv that names none).
    homes = home_dirs_for(root, inner if fs is root or root.is_live else None, environ)
    if env.include_system_site_packages and major_minor:
        _add_user_sites(root, env, homes, major_minor)
    for _, site in python_dirs:
        env.site_dirs.append(inspect_site_dir(fs, site, SITE_ROLE_VENV, follow_links=fs.is_live))
    if not python_dirs:
        env.problems.append("no lib/pythonX.Y/site-packages directory")
    if env.include_system_site_packages and major_minor:
        system = _system_site(fs, env.pyvenv_cfg, major_minor)
        if system is not None:
            env.site_dirs.append(inspect_site_dir(fs, system, SITE_ROLE_SYSTEM, follow_links=fs.is_live))
    env.pip_config = read_pip_config(root, homes, fs, inner, environ)
    read_venv_marker(fs, inner, env)
    return env


def site_dir_problems(sites: list[SiteDir]) -> list[str]:
    """One line per directory on the path that could not be read."""
    return [f"{site.path}: {site.error}" for site in sites if site.error and site.error != "missing"]
