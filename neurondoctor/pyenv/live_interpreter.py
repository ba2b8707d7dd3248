"""`--python EXE`: inspect an environment by running its interpreter with a stdlib-only script.

The script (`live_probe.py`) runs as `EXE -I`, so a broken torch, a sitecustomize or PYTHONPATH cannot
break the inspection itself; it reports the import path the user's own runs get (PYTHONPATH first, then
the user site ahead of site-packages when enabled) and the parent reads the metadata on it statically.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from neurondoctor import json_data
from neurondoctor.command_runner import run_command
from neurondoctor.facts.python_env import (
    SITE_ROLE_OTHER,
    SITE_ROLE_PYTHONPATH,
    SITE_ROLE_SYSTEM,
    SITE_ROLE_USER,
    SITE_ROLE_VENV,
    PythonEnvironment,
)
from neurondoctor.host.rootfs import RootFS
from neurondoctor.pyenv.layouts import PYTHON_DIR, layout_of, read_pyvenv_cfg, stranded_sites
from neurondoctor.pyenv.pip_config import read_pip_config
from neurondoctor.pyenv.site_scan import inspect_site_dir
from neurondoctor.pyenv.static_venv import home_dirs_for, parse_pyvenv_cfg
from neurondoctor.pyenv.venv_marker import read_venv_marker

LIVE_PROBE_TIMEOUT = 20.0
_PROBE_SCRIPT = Path(__file__).with_name("live_probe.py")


def import_path(report: dict[str, Any]) -> list[tuple[str, str]]:
    """(directory, role) in the order the user's own `python` would import from, duplicates kept once."""
    site_packages = [str(entry) for entry in report.get("site_packages", [])]
    stdlib = {str(entry) for entry in report.get("stdlib", [])}
    prefix = str(report.get("prefix", ""))
    in_venv = bool(report.get("in_venv"))
    ordered: list[tuple[str, str]] = [(entry, SITE_ROLE_PYTHONPATH) for entry in report.get("pythonpath", [])]
    user_site_added = False
    for entry in report.get("sys_path", []):
        entry = str(entry)
        if entry == str(_PROBE_SCRIPT.parent) or entry in stdlib or entry.endswith(".zip"):
            continue
        if "lib-dynload" in entry:
            continue
        if entry in site_packages and not user_site_added and report.get("user_site_enabled"):
            ordered.append((str(report.get("user_site", "")), SITE_ROLE_USER))
            user_site_added = True
        if entry in site_packages:
            role = SITE_ROLE_VENV if in_venv and entry.startswith(prefix) else SITE_ROLE_SYSTEM
        else:
            role = SITE_ROLE_OTHER
        ordered.append((entry, role))
    unique: list[tuple[str, str]] = []
    seen: set[str] = set()
    for entry, role in ordered:
        key = os.path.normpath(entry)
        if entry and key not in seen:
            seen.add(key)
            unique.append((entry, role))
    return unique


# What live_probe.py prints: a key and the type its value must have. A document of another shape (an interpreter
# whose `sitecustomize` prints JSON, a hostile or broken one) could not be inspected: it is never read as healthy.
_REPORT_SHAPE: dict[str, tuple[type, ...]] = {
    "executable": (str,), "version": (str,), "prefix": (str,), "in_venv": (bool,),
    "include_system_site_packages": (bool,), "sys_path": (list,), "stdlib": (list,), "site_packages": (list,),
    "user_site": (str, type(None)), "user_site_enabled": (bool,), "pythonpath": (list,),
}


def report_shape_problem(report: Any) -> Optional[str]:
    """Why a probe document is not what live_probe.py prints, or None when it is."""
    if not isinstance(report, dict):
        return f"a JSON {type(report).__name__}, not an object"
    for key, kinds in _REPORT_SHAPE.items():
        if not isinstance(report.get(key), kinds) or (key not in report and type(None) not in kinds):
            return f"`{key}` missing or not {' or '.join(kind.__name__ for kind in kinds)}"
        if kinds == (list,) and not all(isinstance(item, str) for item in report[key]):
            return f"`{key}` holds something other than strings"
    return None


def _failed(env: PythonEnvironment, message: str) -> PythonEnvironment:
    env.problems.append(message)
    return env


def absolute_executable(executable: str, environ: Mapping[str, str]) -> str:
    """`a1b/bin/python` as an absolute path (links kept: a venv's bin/python is one), a bare `python3` as the PATH
    finds it, so every fix command printed for this environment works from any directory."""
    if "/" in executable:
        return os.path.abspath(executable)
    return shutil.which(executable, path=environ.get("PATH")) or executable


def inspect_interpreter(root: RootFS, executable: str, environ: Mapping[str, str],
                        timeout: float = LIVE_PROBE_TIMEOUT,
                        discovered_by: str = "argument") -> PythonEnvironment:
    """Live facts for the environment of one interpreter; a failure to run is itself recorded."""
    executable = absolute_executable(executable, environ)
    env = PythonEnvironment(path=executable, mode="live", interpreter=executable, discovered_by=discovered_by)
    if not Path(executable).exists():
        env.interpreter_exists = False
        return _failed(env, f"interpreter {executable} does not exist")
    result = run_command([executable, "-I", str(_PROBE_SCRIPT)], timeout=timeout, env=dict(environ))
    if not result.ok:
        env.interpreter_exists = result.error is None
        return _failed(env, result.describe_failure())
    if result.truncated:
        return _failed(env, f"`{executable} -I` printed more than the doctor reads (it is not our probe's answer)")
    try:
        report = json_data.loads(result.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError, RecursionError):
        return _failed(env, f"`{executable} -I` printed no JSON: {result.stdout[:200]!r}")
    problem = report_shape_problem(report)
    if problem is not None:
        return _failed(env, f"could not inspect: `{executable} -I` printed JSON of an unexpected shape ({problem})")
    return _fill_from_report(env, root, report, environ)


def _fill_from_report(env: PythonEnvironment, root: RootFS, report: dict[str, Any],
                      environ: Mapping[str, str]) -> PythonEnvironment:
    prefix = str(report.get("prefix", ""))
    env.path = prefix if report.get("in_venv") else str(report.get("executable") or env.interpreter)
    executable = str(report.get("executable", ""))
    # Where the launcher's link chain ends (a venv's `sys.executable` is its own bin/python): the interpreter a
    # rebuild of the venv must name, as static mode names it.
    env.interpreter_target = os.path.realpath(executable) if executable.startswith("/") else executable
    env.python_version = str(report.get("version", "")) or None
    env.include_system_site_packages = bool(report.get("include_system_site_packages"))
    env.user_site_enabled = bool(report.get("user_site_enabled"))
    env.pythonpath = [str(entry) for entry in report.get("pythonpath", [])]
    live_fs = RootFS("/")
    env.kind = (layout_of(live_fs, prefix) if prefix else None) or ("venv" if report.get("in_venv") else "system")
    if report.get("in_venv"):
        env.pyvenv_cfg = parse_pyvenv_cfg(read_pyvenv_cfg(live_fs, prefix) or "")
    for entry, role in import_path(report):
        if live_fs.is_dir(entry):
            env.site_dirs.append(inspect_site_dir(live_fs, entry, role))
    running = PYTHON_DIR.match(f"python{env.python_major_minor or ''}")  # the probe's sys.version_info, X.Y
    env.interpreter_version = running.group(1) if running else None
    if prefix.startswith("/") and env.interpreter_version:
        # What the interpreter cannot see is judged as static mode judges it (ND-VENV-005): the prefix's packages
        # installed for another Python, which its `sys.path` does not name.
        on_path = {os.path.normpath(site.path) for site in env.site_dirs}
        for site in stranded_sites(live_fs, prefix, env.kind, env.interpreter_version):
            if os.path.normpath(site) not in on_path:
                env.site_dirs.append(inspect_site_dir(live_fs, site, SITE_ROLE_VENV))
    venv_inner: Optional[str] = prefix if report.get("in_venv") else None
    homes = home_dirs_for(live_fs, venv_inner, environ)
    # pip's site configuration is `sys.prefix/pip.conf` for every interpreter, not only a venv's (pip's
    # configuration.py; `pip config --site set` in a conda environment writes it there).
    env.pip_config = read_pip_config(root if root.is_live else live_fs, homes, live_fs, prefix or None, environ)
    if venv_inner:
        read_venv_marker(live_fs, venv_inner, env)
    return env
