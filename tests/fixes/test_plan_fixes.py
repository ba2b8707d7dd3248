"""One plan per environment, on four PyPI placeholders. `pip install torch-neuronx
neuronx-cc libneuronxla transformers-neuronx` without the Neuron repository leaves four PyPI placeholders and no
torch; their four fixes, each its own pip run, ended in ND-PIN-001 (transformers-neuronx from another release) and
said nothing about torch. The plan is one uninstall and one resolver run that lands on the host's release with
the CPU torch, and it keeps the user's two team indexes."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.conftest import check_json, findings_by_id, run_cli
from tests.fixes.conftest import PLACEHOLDERS, STACK, FixIndexes, fix_setting, placeholder_venv
from tests.fixes.harness import bad_findings, pip_config, run_verbatim
from tests.neuron_envs import placeholder_wheel
from tests.wheelhouse import VenvFactory, add_pip, venv_python, write_pip_conf


def test_four_placeholders_get_one_plan_that_lands_on_one_release(tmp_path: Path, venvs: VenvFactory,
                                                                  indexes: FixIndexes) -> None:
    root, env = fix_setting(tmp_path, indexes)
    venv = placeholder_venv(venvs, "plan-placeholders", indexes)
    args = ["--root", str(root), "--venv", str(venv)]
    before = check_json(args, env=env)[1]
    assert len(findings_by_id(before)["ND-PIP-001"]) == 4
    summary = before["environments"][0]
    python = venv_python(venv)
    assert summary["fix_plan"][:2] == [
        f"{python} -m pip config --site set global.extra-index-url "
        f"'{indexes.team[0]} {indexes.team[1]} {indexes.neuron}'",
        f"{python} -m pip uninstall -y transformers-neuronx"]
    install = summary["fix_plan"][2]
    assert install.startswith(f"{python} -m pip install 'libneuronxla==2.2.17544.0' 'neuronx-cc==2.26.6360.0' "
                              f"'torch-neuronx=={STACK.torch_neuronx}' 'torch==2.9.0+cpu' ")
    assert install.endswith(f" --extra-index-url {indexes.neuron} --extra-index-url {indexes.cpu}")
    assert summary["fix_plan"][3] == ("# transformers-neuronx is not part of Neuron 2.31.1 (its last release is "
                                      "2.26.1): nothing to install instead")
    text = run_cli(["check", *args], env=env).stdout
    assert "One plan for " in text and "(ND-PIP-001 ×4, ND-PIP-002), in this order:" in text
    for line in summary["fix_plan"]:
        run_verbatim(line, env)
    after = check_json(args, env=env)[1]
    assert bad_findings(after) == set(), bad_findings(after)
    assert after["environments"][0]["release"] == "2.31.1" and after["environments"][0]["torch"] == "2.9.0+cpu"
    assert indexes.team[0] in pip_config(venv, env) and indexes.team[1] in pip_config(venv, env)


def test_user_site_placeholders_each_fix_alone_then_clean(tmp_path: Path, venvs: VenvFactory,
                                                          indexes: FixIndexes) -> None:
    """`pip install --user torch-neuronx neuronx-cc libneuronxla` without the Neuron repository, seen from a venv
    with the system site packages: pip cannot uninstall outside its environment, so each fix removes the files,
    then installs the release's package into the venv. Run finding by finding, they converge too."""
    root, env = fix_setting(tmp_path, indexes)
    env["HOME"] = str(root / "home/ubuntu")  # the user site is read inside the root
    site = root / f"home/ubuntu/.local/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
    venv = venvs.create("plan-user-site", system_site=True)
    add_pip(venv)
    venvs.install(venv, [placeholder_wheel(package, version) for package, version in PLACEHOLDERS[:3]],
                  target=site)
    write_pip_conf(venv, extra_index=indexes.neuron)
    args = ["--root", str(root), "--venv", str(venv)]
    found = findings_by_id(check_json(args, env=env)[1])["ND-PIP-001"]
    assert len(found) == 3 and all(str(item["fix"][0]).startswith(f"rm -rf {site}/") for item in found)
    for item in found:
        for line in item["fix"]:
            run_verbatim(str(line), env)
    after = check_json(args, env=env)[1]
    assert bad_findings(after) == set(), bad_findings(after)
    assert not list(site.iterdir())
