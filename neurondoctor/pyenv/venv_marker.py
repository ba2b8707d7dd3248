"""Recognises environments built by `neurondoctor venv create`: the marker and the guard's pins."""

from __future__ import annotations

import re

from neurondoctor.facts.guard_files import CONSTRAINTS_FILE, MARKER_FILE, read_marker
from neurondoctor.facts.python_env import PythonEnvironment
from neurondoctor.host.rootfs import RootFS
from neurondoctor.python_packaging import canonical_name

_PIN = r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;#]+)"  # compiled by `re` for a venv this doctor made


def parse_pins(text: str) -> dict[str, str]:
    """`name==version` lines of a constraints file; comments and anything else are ignored."""
    pins = {}
    for line in text.splitlines():
        match = re.match(_PIN, line)
        if match:
            pins[canonical_name(match.group(1))] = match.group(2)
    return pins


def read_venv_marker(fs: RootFS, inner_dir: str, env: PythonEnvironment) -> None:
    """Fill the marker and the guard's pins when the environment was built by neurondoctor."""
    marker = read_marker(fs.try_read_untrusted_text(f"{inner_dir}/{MARKER_FILE}", 256 * 1024, follow_links=True))
    if marker is None:
        return
    env.neurondoctor_venv = marker
    constraints = fs.try_read_untrusted_text(f"{inner_dir}/{CONSTRAINTS_FILE}", 256 * 1024, follow_links=True)
    env.guard_pins = parse_pins(constraints) if constraints is not None else None
