"""The guard a built environment carries, so a later install cannot move its pins.

- `neurondoctor-constraints.txt`: the release's exact pins.
- `pip.conf` in the venv (pip's "site" configuration, which outranks the user and global files): the index
  settings the build used plus `constraint = …`, so `pip install transformers` or `pip install -U torch` inside
  the venv resolves with the pins or refuses with a conflict.
- `bin/activate`: exports `UV_CONSTRAINT` while the venv is active (uv reads no pip configuration; `uv pip
  install` in an activated bash/zsh shell then honours the pins). Not covered: `uv pip install --python …`
  from outside an activated shell, and fish/csh activation.
- `neurondoctor.json`: what was built, so `check` recognises the environment and verifies its guard.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Optional

from neurondoctor import json_data
from neurondoctor.actions.venv.plan import VenvPlan
from neurondoctor.facts.guard_files import CONSTRAINTS_FILE, MARKER_FILE, MARKER_SCHEMA

ACTIVATE_MARK = "# neurondoctor guard"


def pip_conf_text(plan: VenvPlan, final: Path) -> str:
    lines = ["# Written by neurondoctor venv create: keeps this environment's Neuron pins (see the constraint).",
             "[global]"]
    if plan.index_url:
        lines.append(f"index-url = {plan.index_url}")
    if plan.extra_index_urls:
        lines.append("extra-index-url = " + " ".join(plan.extra_index_urls))
    if plan.find_links:
        lines.append("find-links = " + " ".join(plan.find_links))
    if plan.no_index:
        lines.append("no-index = true")
    lines.append(f"constraint = {final / CONSTRAINTS_FILE}")
    return "\n".join(lines) + "\n"


def marker_document(plan: VenvPlan, installer: str) -> dict[str, Any]:
    return {
        "schema": MARKER_SCHEMA,
        "release": plan.release,
        "framework": plan.framework,
        "python": plan.python,
        "installer": installer,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "packages": {package.name: package.version for package in plan.packages},
        "constraints": CONSTRAINTS_FILE,
    }


def activate_addition(venv: Path) -> str:
    return (f"\n{ACTIVATE_MARK}: uv pip honours this environment's pins while it is active\n"
            f"export UV_CONSTRAINT=\"{venv / CONSTRAINTS_FILE}\"\n")


def _guard_activate(venv: Path, final: Path) -> None:
    """Export UV_CONSTRAINT on activation and unset it in `deactivate` (which activation itself calls first)."""
    activate = venv / "bin" / "activate"
    if not activate.is_file():
        return
    text = activate.read_text(encoding="utf-8")
    if ACTIVATE_MARK in text:
        return
    marker = "deactivate () {\n"
    if marker in text:
        text = text.replace(marker, marker + f"    unset UV_CONSTRAINT  {ACTIVATE_MARK}\n", 1)
    activate.write_text(text + activate_addition(final), encoding="utf-8")


def write_guard(plan: VenvPlan, venv: Path, installer: str, final: Optional[Path] = None) -> None:
    """Write the guard into `venv`, naming paths as they will be at `final` (the build renames it there)."""
    final = final or venv
    (venv / CONSTRAINTS_FILE).write_text(plan.constraints_text(), encoding="utf-8")
    (venv / "pip.conf").write_text(pip_conf_text(plan, final), encoding="utf-8")
    (venv / MARKER_FILE).write_text(json_data.dumps(marker_document(plan, installer), indent=1) + "\n", encoding="utf-8")
    _guard_activate(venv, final)

