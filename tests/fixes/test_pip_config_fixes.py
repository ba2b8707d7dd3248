"""Fix execution for pip configuration: the printed fix lines run verbatim through a shell, then `check` again:
the finding is gone, nothing new is wrong, and the user's other pip settings are still there."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import check_json, findings_by_id
from tests.fixes.harness import bad_findings, pip_config, run_verbatim, user_env
from tests.neuron_envs import NEURON_REPO, simple_wheel
from tests.wheelhouse import VenvFactory, add_pip, venv_python

TEAM_INDEXES = ("http://127.0.0.1:9/team-a/simple", "http://127.0.0.1:9/team-b/simple")


def test_the_neuron_index_fix_keeps_the_users_two_indexes(tmp_path: Path, venvs: VenvFactory) -> None:
    conf = tmp_path / "home/.config/pip/pip.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text(f"[global]\nextra-index-url = {TEAM_INDEXES[0]}\n    {TEAM_INDEXES[1]}\n"
                    "find-links = /srv/team-wheels\n")
    venv = venvs.create("fix-pip-002")
    add_pip(venv)
    venvs.install(venv, [simple_wheel("neuronx-cc", "2.26.6360.0")])
    env = user_env(tmp_path)
    before = check_json(["--venv", str(venv)], env=env)[1]
    finding = findings_by_id(before)["ND-PIP-002"][0]
    assert finding["fix"] == [f"{venv_python(venv)} -m pip config --site set global.extra-index-url "
                              f"'{TEAM_INDEXES[0]} {TEAM_INDEXES[1]} {NEURON_REPO}'"]
    for line in finding["fix"]:
        run_verbatim(line, env)
    after = check_json(["--venv", str(venv)], env=env)[1]
    assert "ND-PIP-002" not in findings_by_id(after)
    assert bad_findings(after) <= bad_findings(before) - {("ND-PIP-002", str(finding["title"]))}
    effective = pip_config(venv, env)
    assert all(url in effective for url in (*TEAM_INDEXES, NEURON_REPO)), effective
    assert "/srv/team-wheels" in effective and os.path.exists(conf)  # the user's own file is untouched
    assert conf.read_text().count("team-a") == 1
