"""The wheel carries `manifests/`: a non-editable install in a fresh venv works without the repository."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO, make_host_root


@pytest.fixture(scope="module")
def built_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(REPO)],
                   check=True, capture_output=True, timeout=600)
    return next(out.glob("neurondoctor-*.whl"))


def test_wheel_contains_the_manifests(built_wheel: Path) -> None:
    names = zipfile.ZipFile(built_wheel).namelist()
    assert "neurondoctor/_manifests/sdk.json" in names
    assert "neurondoctor/_manifests/compat.json" in names
    assert sum(1 for name in names if name.startswith("neurondoctor/_manifests/releases/")) == 54
    assert "neurondoctor/pyenv/live_probe.py" in names


def test_installed_wheel_finds_its_manifests(built_wheel: Path, tmp_path: Path) -> None:
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=300)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", str(built_wheel)],
                   check=True, capture_output=True, timeout=600)
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "NEURONDOCTOR_MANIFESTS")}
    listing = subprocess.run([str(venv / "bin" / "neurondoctor"), "manifests", "list"], capture_output=True,
                             text=True, cwd=str(tmp_path), env=env, timeout=120)
    assert listing.returncode == 0, listing.stderr
    assert "_manifests" in listing.stdout and "54 releases" in listing.stdout
    host = make_host_root(tmp_path / "host", instance_type=None)
    check = subprocess.run([str(python), "-m", "neurondoctor", "check", "--json", "--root", str(host)],
                           capture_output=True, text=True, cwd=str(tmp_path), env=env, timeout=120)
    assert check.returncode == 0, check.stderr
    assert '"latest_known": "2.34.0"' in check.stdout
