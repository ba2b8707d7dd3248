"""`check --fix` touches only the environment it inspected: a pip.conf that is a link to another
file, and a plan line that removes something outside the environment's folders, are left alone."""

from __future__ import annotations

import shlex
from pathlib import Path

from neurondoctor.actions.check.fix_apply import MOVE, RUN, SKIP, apply_step, classify
from neurondoctor.facts.python_env import PythonEnvironment, SiteDir
from neurondoctor.rules.fix import Command, command


def _step(line: str) -> Command:
    """The plan step whose words a user reads in this line."""
    return command(*shlex.split(line))


def _environment(tmp_path: Path) -> PythonEnvironment:
    venv = tmp_path / "venv"
    site = venv / "lib/python3.11/site-packages"
    site.mkdir(parents=True)
    return PythonEnvironment(path=str(venv), mode="static", interpreter=str(venv / "bin/python"),
                             site_dirs=[SiteDir(str(site), "venv")])


def test_a_linked_pip_conf_is_not_edited(tmp_path: Path) -> None:
    env = _environment(tmp_path)
    elsewhere = tmp_path / "shared.conf"
    elsewhere.write_text("[global]\nindex-url = http://127.0.0.1:9/simple\n")
    (Path(env.path) / "pip.conf").symlink_to(elsewhere)
    step = classify(_step(f"{env.interpreter} -m pip config --site set global.extra-index-url 'http://x'"), env, {})
    assert step.action == SKIP and "is not a regular file" in step.why
    assert elsewhere.read_text() == "[global]\nindex-url = http://127.0.0.1:9/simple\n"


def test_machine_wide_pip_config_and_host_commands_are_not_applied(tmp_path: Path) -> None:
    env = _environment(tmp_path)
    assert classify(_step(f"{env.interpreter} -m pip config --global set global.index-url http://x"), env,
                    {}).action == SKIP
    assert classify(_step("sudo apt-get install -y aws-neuronx-dkms=2.24.7.0*"), env, {}).action == SKIP
    assert classify(_step("export NEURON_RT_VISIBLE_CORES=0-1"), env, {}).action == SKIP
    assert classify(_step("/usr/bin/python3 -m pip install torch"), env, {}).action == SKIP  # another interpreter


def test_a_removal_outside_the_environment_is_not_applied(tmp_path: Path) -> None:
    env = _environment(tmp_path)
    victim = tmp_path / "home/important"
    victim.mkdir(parents=True)
    for line in (f"rm -rf {victim}", f"rm -rf {env.path}/../home/important", "rm -rf /"):
        step = classify(_step(line), env, {})
        assert step.action == SKIP, line
    (Path(env.site_dirs[0].path) / "link").symlink_to(victim)  # a link out of the site is not inside it
    assert classify(_step(f"rm -rf {Path(env.site_dirs[0].path) / 'link'}/x"), env, {}).action == SKIP
    assert victim.is_dir()


def test_a_removal_inside_moves_to_a_backup_folder(tmp_path: Path) -> None:
    env = _environment(tmp_path)
    site = Path(env.site_dirs[0].path)
    (site / "torch_neuronx").mkdir()
    (site / "torch_neuronx/__init__.py").write_text("raise ImportError('WRONG PACKAGE')\n")
    step = classify(_step(f"rm -rf {site / 'torch_neuronx'}"), env, {})
    assert step.action == MOVE
    result = apply_step(step, "20261201T120000Z", {})
    moved = site.parent / "site-packages.neurondoctor-20261201T120000Z/torch_neuronx/__init__.py"
    assert result.ok and moved.read_text() == "raise ImportError('WRONG PACKAGE')\n"
    assert not (site / "torch_neuronx").exists()
    assert classify(_step(f"{env.interpreter} -m pip install 'torch==2.9.0+cpu'"), env, {}).action == RUN
