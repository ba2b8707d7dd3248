"""Default discovery under --root (DLAMI and manual venv names), links inside the root, live import paths."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from neurondoctor.facts.python_env import SITE_ROLE_PYTHONPATH, SITE_ROLE_USER, SITE_ROLE_VENV
from neurondoctor.host.rootfs import RootFS
from neurondoctor.pyenv.discovery import discover_environments
from neurondoctor.pyenv.live_interpreter import import_path
from tests.conftest import check_json, cli_env, findings_by_id
from tests.neuron_envs import HEALTHY_STACKS, image_stack_venv, stack_wheels
from tests.wheelhouse import (
    VenvFactory,
    write_pip_conf,
)

PY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def _image_venv(venvs: VenvFactory, root: Path, relative: str, release: str) -> Path:
    return image_stack_venv(venvs, root, relative, release, PY)


def test_check_discovers_dlami_and_manual_venvs_in_an_image(venvs: VenvFactory, host_root: Path) -> None:
    dlami = _image_venv(venvs, host_root, "opt/aws_neuronx_venv_pytorch_2_9", "2.30.0")
    manual = _image_venv(venvs, host_root, "home/ubuntu/aws_neuron_venv_pytorch", "2.31.1")
    code, report, _ = check_json(["--root", str(host_root)])
    assert report["release"]["environments"] == {str(dlami): "2.30.0", str(manual): "2.31.1"}
    assert report["findings"] == []
    assert code == 0
    discovered = {env["path"]: env["discovered_by"] for env in report["environments"]}
    assert set(discovered.values()) == {"Neuron environment location"}


def test_links_resolve_inside_the_root(venvs: VenvFactory, host_root: Path) -> None:
    venv = _image_venv(venvs, host_root, "opt/aws_neuronx_venv_pytorch_2_9", "2.30.0")
    (host_root / "usr" / "bin" / f"python{PY}").unlink()
    _, report, _ = check_json(["--root", str(host_root), "--venv", str(venv)])
    finding = findings_by_id(report)["ND-VENV-001"][0]
    # The machine running the doctor has this interpreter; the image does not, and the image is what counts.
    assert finding["evidence"]["target"] == f"/usr/bin/python{PY}"


def test_active_virtualenv_is_the_default_on_a_live_host(venvs: VenvFactory, tmp_path: Path) -> None:
    venv = venvs.create("active")
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.29.1"]))
    write_pip_conf(venv)
    found = discover_environments(RootFS("/"), {"VIRTUAL_ENV": str(venv), "PATH": ""}).found
    assert [(item.path, item.live, item.always_judged) for item in found][:1] == [(str(venv), False, True)]
    _, report, _ = check_json([], env=cli_env({"VIRTUAL_ENV": str(venv), "HOME": str(tmp_path)}))
    assert report["release"]["environments"] == {str(venv): "2.29.1"}


def test_live_import_path_puts_pythonpath_then_user_site_before_site_packages() -> None:
    report = {
        "prefix": "/v", "in_venv": True, "user_site_enabled": True, "user_site": "/home/u/.local/lib/site",
        "pythonpath": ["/extra"], "stdlib": ["/usr/lib/python3.11"],
        "sys_path": ["/usr/lib/python311.zip", "/usr/lib/python3.11", "/usr/lib/python3.11/lib-dynload",
                     "/v/lib/python3.11/site-packages", "/usr/lib/python3.11/site-packages"],
        "site_packages": ["/v/lib/python3.11/site-packages", "/usr/lib/python3.11/site-packages"],
    }
    assert import_path(report) == [
        ("/extra", SITE_ROLE_PYTHONPATH),
        ("/home/u/.local/lib/site", SITE_ROLE_USER),
        ("/v/lib/python3.11/site-packages", SITE_ROLE_VENV),
        ("/usr/lib/python3.11/site-packages", "system-site"),
    ]


def test_the_invoking_users_home_under_sudo(tmp_path: Path) -> None:
    """`sudo neurondoctor check` searches the home of the user who ran sudo, not root's alone."""
    import pwd

    from neurondoctor.pyenv.discovery import _homes, _invoking_home

    someone = next((entry for entry in pwd.getpwall() if entry.pw_uid != 0), None)
    if someone is None:
        pytest.skip("no user other than root on this machine")
    assert _invoking_home({"SUDO_USER": someone.pw_name, "HOME": "/root"}) == someone.pw_dir
    assert _invoking_home({"SUDO_USER": "root", "HOME": str(tmp_path)}) == str(tmp_path)
    assert _homes(RootFS("/"), {"HOME": str(tmp_path)})[0] == str(tmp_path)
