"""Homes under the root (docs/contracts.md §4): the user's pip configuration and user site-packages
apply to a venv outside the root too. `$HOME` is mapped into the root when it lies under it, else every home under
the root counts — as a support engineer runs `check --root copied-tree --venv copied-venv`."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.conftest import check_json, cli_env, findings_by_id
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import HEALTHY_STACKS, NEURON_REPO, stack_wheels, torch_wheel
from tests.wheelhouse import VenvFactory

USER_PIP_CONF = f"[global]\nextra-index-url = {NEURON_REPO}\n"


def _venv_without_own_pip_conf(venvs: VenvFactory, name: str, system_site: bool = False) -> Path:
    venv = venvs.create(name, system_site=system_site)
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.31.1"]))
    return venv


def test_the_neuron_index_in_the_users_pip_conf_reaches_a_venv_outside_the_root(venvs: VenvFactory,
                                                                                tmp_path: Path) -> None:
    venv = _venv_without_own_pip_conf(venvs, "outside-root-user-conf")
    for layout in (".config/pip/pip.conf", ".pip/pip.conf"):
        root = build_host(tmp_path / f"root-{layout.split('/')[0]}", HostSpec())
        conf = root / "home/ubuntu" / layout
        conf.parent.mkdir(parents=True)
        conf.write_text(USER_PIP_CONF)
        code, report, _ = check_json(["--root", str(root), "--venv", str(venv)],
                                     env=cli_env({"HOME": str(tmp_path / "support-engineer")}))
        assert "ND-PIP-002" not in findings_by_id(report), layout
        assert report["health"]["state"] == "ok" and code == 0


def test_near_miss_no_home_holds_the_index(venvs: VenvFactory, tmp_path: Path) -> None:
    venv = _venv_without_own_pip_conf(venvs, "outside-root-no-conf")
    root = build_host(tmp_path / "root", HostSpec())
    (root / "home/ubuntu").mkdir(parents=True)
    _, report, _ = check_json(["--root", str(root), "--venv", str(venv)],
                              env=cli_env({"HOME": str(tmp_path / "support-engineer")}))
    finding = findings_by_id(report)["ND-PIP-002"][0]
    assert finding["category"] == "wrong-pip-index"


def test_home_mapped_into_the_root_is_the_one_that_counts(venvs: VenvFactory, tmp_path: Path) -> None:
    """$HOME lies under the root: only that user's configuration applies, not another user's."""
    venv = _venv_without_own_pip_conf(venvs, "outside-root-mapped-home")
    root = build_host(tmp_path / "root", HostSpec())
    other = root / "home/someone-else/.config/pip/pip.conf"
    other.parent.mkdir(parents=True)
    other.write_text(USER_PIP_CONF)
    (root / "home/ubuntu").mkdir(parents=True)
    _, report, _ = check_json(["--root", str(root), "--venv", str(venv)],
                              env=cli_env({"HOME": str(root / "home/ubuntu")}))
    assert "ND-PIP-002" in findings_by_id(report)
    _, mapped, _ = check_json(["--root", str(root), "--venv", str(venv)],
                              env=cli_env({"HOME": str(root / "home/someone-else")}))
    assert "ND-PIP-002" not in findings_by_id(mapped)


def test_a_user_site_torch_under_the_root_shadows_a_venv_outside_it(venvs: VenvFactory, tmp_path: Path) -> None:
    venv = _venv_without_own_pip_conf(venvs, "outside-root-shadowed", system_site=True)
    root = build_host(tmp_path / "root", HostSpec())
    (root / "home/ubuntu/.config/pip").mkdir(parents=True)
    (root / "home/ubuntu/.config/pip/pip.conf").write_text(USER_PIP_CONF)
    user_site = root / f"home/ubuntu/.local/lib/python{sys.version_info[0]}.{sys.version_info[1]}/site-packages"
    venvs.install(venv, [torch_wheel("2.10.0")], target=user_site)
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)],
                                 env=cli_env({"HOME": str(tmp_path / "support-engineer")}))
    shadow = findings_by_id(report)["ND-SHADOW-001"][0]
    assert (shadow["category"], shadow["severity"]) == ("shadowing", "error")
    assert "torch 2.10.0 (environment has 2.9.0)" in shadow["title"]
    assert code == 1
