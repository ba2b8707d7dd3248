"""Run by the *target* interpreter as `EXE -I live_probe.py`: prints its import-path facts as one JSON line.

Standard library only, and no syntax newer than Python 3.6, because it runs inside environments whose
torch (or anything else) may be broken. `-I` keeps the target's PYTHONPATH, user site and
sitecustomize from running this script; the script reports what they would add for the user's own runs.
"""

import json
import os
import site
import sys
import sysconfig


def _user_site_enabled(in_venv, system_site):
    # type: (bool, bool) -> bool
    if os.environ.get("PYTHONNOUSERSITE"):
        return False
    if in_venv and not system_site:
        return False
    if hasattr(os, "geteuid") and os.geteuid() != os.getuid():
        return False
    return True


def _system_site_packages_flag(prefix):
    # type: (str) -> bool
    try:
        with open(os.path.join(prefix, "pyvenv.cfg"), encoding="utf-8", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition("=")
                if key.strip().lower() == "include-system-site-packages":
                    return value.strip().lower() == "true"
    except OSError:
        pass
    return False


def main():
    # type: () -> None
    in_venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)
    system_site = _system_site_packages_flag(sys.prefix) if in_venv else True
    paths = sysconfig.get_paths()
    stdlib = sorted({paths.get("stdlib", ""), paths.get("platstdlib", "")} - {""})
    try:
        site_packages = site.getsitepackages()
    except AttributeError:
        site_packages = [paths.get("purelib", "")]
    report = {
        "executable": sys.executable,
        "version": "%d.%d.%d" % sys.version_info[:3],
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "in_venv": in_venv,
        "include_system_site_packages": system_site,
        "sys_path": [entry for entry in sys.path if entry],
        "stdlib": stdlib,
        "site_packages": site_packages,
        "user_site": site.getusersitepackages(),
        "user_site_enabled": _user_site_enabled(in_venv, system_site),
        "pythonpath": [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry],
    }
    sys.stdout.write(json.dumps(report) + "\n")


main()
