"""`neurondoctor manifests list|show`."""

from __future__ import annotations

import re

from tests.conftest import run_cli


def test_manifests_list_shows_every_release() -> None:
    result = run_cli(["manifests", "list"])
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    rows = [line for line in lines if re.match(r"^\d+\.\d+\.\d+ ", line)]
    assert len(rows) == 54
    partial, newest, previous = rows[0].split(), rows[1].split(), rows[2].split()
    # 2.34.0 is known only in part: `?` where its version is not known, never `-` (which says "not in it")
    assert partial == ["2.34.0", "?", "?", "?", "?", "?", "2.13.3.1.*,", "2.14.3.1.*", "?", "?"]
    assert newest[:6] == ["2.33.1", "2.31.8.0", "2.35.33.0", "2.35.49.0", "2.33.38.0", "2.28.7631.0"]
    assert previous[:6] == ["2.33.0", "2.31.7.0", "2.35.30.0", "2.35.43.0", "2.33.38.0", "2.28.7631.0"]
    assert "2.9.0.2.15.32035*" in rows[3]
    assert "54 releases" in result.stdout and "? = not known: 2.34.0 is known only in part" in result.stdout


def test_manifests_show_one_release() -> None:
    result = run_cli(["manifests", "show", "2.31.1"])
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Neuron 2.31.1: 30 packages")
    torch_neuronx = next(line for line in result.stdout.splitlines() if line.startswith("torch-neuronx "))
    assert torch_neuronx.split()[:2] == ["torch-neuronx", "2.9.0.2.15.32035"]
    assert "3.11, 3.12, 3.13" in torch_neuronx


def test_manifests_show_unknown_release() -> None:
    result = run_cli(["manifests", "show", "2.99.0"])
    assert result.returncode == 2
    assert result.stderr.strip().startswith("error: 2.99.0: not a known Neuron release")
