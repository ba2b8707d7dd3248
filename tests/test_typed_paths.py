"""A path typed on the command line that leads nowhere is a usage error: one line on stderr, exit 2, nothing on
stdout. What the host says stays a finding: a venv whose interpreter is gone, a missing environment
that health.conf names."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import check_json, findings_by_id, run_cli


@pytest.mark.parametrize("args", [
    ["check", "--python", "{missing}/bin/python"],
    ["check", "--python", "python3-no-such-interpreter"],
    ["check", "--json", "--venv", "{missing}"],
    ["check", "--venv", "{file}"],
    ["probe", "ops", "builtin:mlp", "--json", "--python", "{missing}/bin/python"],
    ["probe", "canary", "--python", "{missing}/bin/python3"],
    ["bundle", "--venv", "{missing}", "-o", "{tmp}/out.tar.gz"],
    ["venv", "create", "{tmp}/new", "--release", "2.31.1", "--python", "{missing}/python3"],
    ["venv", "create", "{tmp}/new", "--release", "2.31.1", "--find-links", "{missing}", "--dry-run"],
], ids=lambda args: " ".join(args[:2] + [arg for arg in args if arg.startswith("--")][-1:]))
def test_a_typed_path_that_leads_nowhere_is_a_usage_error(tmp_path: Path, args: list[str]) -> None:
    (tmp_path / "a-file").write_text("not a directory\n")
    words = [arg.format(missing=tmp_path / "typo", file=tmp_path / "a-file", tmp=tmp_path) for arg in args]
    result = run_cli(words)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --"), lines
    assert "Traceback" not in result.stderr
    assert sorted(path.name for path in tmp_path.iterdir()) == ["a-file"]  # nothing created at the typo or beside


def test_near_miss_a_venv_whose_interpreter_is_gone_stays_broken_venv(tmp_path: Path) -> None:
    """`--python venv/bin/python` whose base Python was removed: the link is there, its target is the host's
    state, so the answer is ND-VENV-001 with the relink fix, not a usage error."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    for name in ("python", "python3"):
        (venv / "bin" / name).unlink(missing_ok=True)
    os.symlink("/usr/bin/python3.99-removed", venv / "bin" / "python")
    code, document, _ = check_json(["--python", str(venv / "bin" / "python")])
    assert code == 1
    assert [finding["evidence"]["venv"] for finding in findings_by_id(document)["ND-VENV-001"]] == [
        str(venv / "bin" / "python")]


def test_near_miss_a_bare_interpreter_name_found_on_path_is_accepted(tmp_path: Path) -> None:
    """`--python python3` is looked up on PATH, as the shell would."""
    code, document, stderr = check_json(["--python", Path(sys.executable).name])
    assert code in (0, 1) and "error:" not in stderr
    assert len(document["environments"]) == 1
