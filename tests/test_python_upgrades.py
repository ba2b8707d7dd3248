"""Environments an operating-system upgrade moved to another Python, judged in every layout from their own files:
the interpreter the launcher really runs against the `lib/pythonX.Y` that holds the packages (ND-VENV-005), each
beside a near miss that must stay clean.

The shapes come from what users reported after upgrades: an Ubuntu 22.04 → 24.04 upgrade moves `python3` to 3.12
and a tool pip-installed into `/usr/local/lib/python3.10/dist-packages` fails with `ModuleNotFoundError`, while
`pip3 install` is refused as externally managed (yboetz/pyznap's tracker: "Upgrade from Ubuntu 22.04 to 24.04 broke
pyznap"); a venv under /opt stops starting after the next release upgrade (PegaProx's tracker: "Ubuntu 26.04
compatibility issue", `/opt/PegaProx/venv/bin/python`); a Poetry environment in `~/.cache/pypoetry/virtualenvs`
breaks when the Python it was made with goes from 3.9 to 3.10 (python-poetry/poetry's tracker: "Recreate
virtualenv automatically if needed"), Poetry naming the folder `NAME-HASH-pyX.Y` ("Unable to create poetry
environment with python3.10": `poetry-issue-wxXJaBmj-py3.10`). virtualenv's pyvenv.cfg carries `virtualenv = …`
and `version_info = 3.10.4.final.0` (pypa/virtualenv's tracker: "Using venv creator creates broken environment in
Ubuntu 22.04").
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.conftest import check_json, cli_env, findings_by_id
from tests.host_fixture import HostSpec, build_host
from tests.layouts import install_into
from tests.neuron_envs import HEALTHY_STACKS, NEURON_REPO, stack_wheels
from tests.wheelhouse import VenvFactory, install_image_interpreter, relabel_python, write_pip_conf

STACK = stack_wheels(HEALTHY_STACKS["2.29.1"])
PY = f"{sys.version_info[0]}.{sys.version_info[1]}"


def _ubuntu_python(root: Path, version: str) -> None:
    """The distribution's Python as an Ubuntu release installs it: `/usr/bin/pythonX.Y`, its standard library
    `/usr/lib/pythonX.Y/os.py`, and Debian's `/usr/lib/python3/dist-packages` for the python3-* packages."""
    install_image_interpreter(root, version)
    (root / "usr/lib/python3/dist-packages").mkdir(parents=True, exist_ok=True)
    (root / "usr/lib" / f"python{version}").mkdir(parents=True, exist_ok=True)
    (root / "usr/lib" / f"python{version}" / "os.py").write_text("# the standard library's os module\n")


def _default_python3(root: Path, version: str) -> None:
    """`/usr/bin/python3 -> pythonX.Y`: which Python the release calls python3 (24.04: 3.12)."""
    link = root / "usr/bin/python3"
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(f"python{version}")


def _upgraded_host(tmp_path: Path, keep_old: bool) -> Path:
    """A 2.29.1 host (its release supports Python 3.10-3.12) upgraded from Ubuntu 22.04 (python3 = 3.10) to 24.04
    (python3 = 3.12); with `keep_old`, the old python3.10 stays installed beside it (deadsnakes' package, or a
    release upgrade that did not remove it)."""
    root = build_host(tmp_path / "host", HostSpec(release="2.29.1"))
    _ubuntu_python(root, "3.12")
    _default_python3(root, "3.12")
    if keep_old:
        _ubuntu_python(root, "3.10")
    return root


def _venv_made_with_python3(venvs: VenvFactory, venv: Path) -> Path:
    """A 2.29.1 venv made with `python3 -m venv` on 22.04: pyvenv.cfg 3.10.12, lib/python3.10, and its launchers
    linked to `/usr/bin/python3`, the name it was made with, which now leads to 3.12."""
    built = venvs.create(venv.name, parent=venv.parent)
    venvs.install(built, STACK)
    write_pip_conf(built)
    relabel_python(built, "3.10")
    for name in ("python", "python3"):
        (built / "bin" / name).unlink()
        (built / "bin" / name).symlink_to("/usr/bin/python3")
    return built


def _ids(report: dict[str, object]) -> list[str]:
    return [str(finding["id"]) for finding in report["findings"]]  # type: ignore[index, union-attr]


def test_a_venv_under_opt_after_a_release_upgrade(tmp_path: Path, venvs: VenvFactory) -> None:
    root = _upgraded_host(tmp_path, keep_old=False)
    venv = _venv_made_with_python3(venvs, root / "opt/app/venv")
    _, report, _ = check_json(["--root", str(root), "--venv", str(venv)], env=cli_env({"HOME": str(tmp_path)}))
    assert _ids(report) == ["ND-VENV-005"]
    finding = findings_by_id(report)["ND-VENV-005"][0]
    assert finding["evidence"]["interpreter_version"] == "3.12" and finding["evidence"]["package_versions"] == ["3.10"]
    assert finding["evidence"]["made_with"] == "3.10.12" and finding["evidence"]["target"] == "/usr/bin/python3.12"
    assert finding["fix"][1] == f"/usr/bin/python3.12 -m venv {venv}"


def test_near_miss_the_same_venv_after_a_patch_upgrade(tmp_path: Path, venvs: VenvFactory) -> None:
    """`apt upgrade` took 3.10.12 to 3.10.14 (pyvenv.cfg still says 3.10.12): the same minor version, healthy."""
    root = build_host(tmp_path / "host", HostSpec(release="2.29.1"))
    _ubuntu_python(root, "3.10")
    _default_python3(root, "3.10")
    venv = _venv_made_with_python3(venvs, root / "opt/app/venv")
    _, report, _ = check_json(["--root", str(root), "--venv", str(venv)], env=cli_env({"HOME": str(tmp_path)}))
    assert _ids(report) == []


def test_a_poetry_cache_environment_after_the_python_moved(tmp_path: Path, venvs: VenvFactory) -> None:
    """Found with nothing named, in the Poetry cache; the folder's `-py3.10` and pyvenv.cfg agree on what it was
    made for, and the fix keeps Poetry's own way in words beside the rebuild."""
    root = _upgraded_host(tmp_path, keep_old=False)
    venv = _venv_made_with_python3(venvs, root / "home/ubuntu/.cache/pypoetry/virtualenvs/demo-wxXJaBmj-py3.10")
    _, report, _ = check_json(["--root", str(root)], env=cli_env({"HOME": str(tmp_path)}))
    assert _ids(report) == ["ND-VENV-005"]
    finding = findings_by_id(report)["ND-VENV-005"][0]
    assert finding["evidence"]["venv"] == str(venv) and finding["evidence"]["kind"] == "project"
    assert any(line.startswith("# Poetry names its folder for the Python it finds") for line in finding["fix"])


def test_near_miss_a_poetry_environment_on_a_python_the_upgrade_kept(tmp_path: Path, venvs: VenvFactory) -> None:
    """The same environment, made with `poetry env use python3.10` (links to /usr/bin/python3.10), on a host that
    kept python3.10 beside the new python3: it still runs 3.10 and sees its packages."""
    root = _upgraded_host(tmp_path, keep_old=True)
    venv = _venv_made_with_python3(venvs, root / "home/ubuntu/.cache/pypoetry/virtualenvs/demo-wxXJaBmj-py3.10")
    for name in ("python", "python3"):
        (venv / "bin" / name).unlink()
        (venv / "bin" / name).symlink_to("/usr/bin/python3.10")
    _, report, _ = check_json(["--root", str(root)], env=cli_env({"HOME": str(tmp_path)}))
    assert _ids(report) == [] and report["environments"][0]["path"] == str(venv)


def test_pip_installs_into_usr_local_after_a_release_upgrade(tmp_path: Path, venvs: VenvFactory) -> None:
    """`sudo pip3 install torch-neuronx …` on 22.04 put the stack into /usr/local/lib/python3.10/dist-packages;
    24.04 removed python3.10. The system Python is judged (it holds Neuron packages) and the way out is in words:
    the distribution's pip refuses the install."""
    root = _upgraded_host(tmp_path, keep_old=False)
    install_into(venvs, root / "usr/local/lib/python3.10/dist-packages", STACK)
    (root / "etc/pip.conf").write_text(f"[global]\nextra-index-url = {NEURON_REPO}\n")  # the install page's step
    _, report, _ = check_json(["--root", str(root)], env=cli_env({"HOME": str(tmp_path)}))
    assert _ids(report) == ["ND-VENV-005"]
    finding = findings_by_id(report)["ND-VENV-005"][0]
    assert finding["evidence"]["kind"] == "system" and finding["evidence"]["package_versions"] == ["3.10"]
    assert len(finding["fix"]) == 1 and finding["fix"][0].startswith(
        "# the distribution's Python 3.12 takes no pip installs: make a venv with python3.12 -m venv")
    assert "torch-neuronx==" in finding["fix"][0]


def test_near_miss_usr_local_packages_of_a_python_still_installed(tmp_path: Path, venvs: VenvFactory) -> None:
    """The same folder on a host that kept python3.10: `python3.10` imports them, nothing is out of reach."""
    root = _upgraded_host(tmp_path, keep_old=True)
    install_into(venvs, root / "usr/local/lib/python3.10/dist-packages", STACK)
    _, report, _ = check_json(["--root", str(root)], env=cli_env({"HOME": str(tmp_path)}))
    assert "ND-VENV-005" not in _ids(report)


def test_an_interpreter_whose_name_does_not_say_is_read_from_its_standard_library(tmp_path: Path,
                                                                                   venvs: VenvFactory) -> None:
    """`/usr/bin/python3` a file, not a link to python3.12: the one standard library beside it says 3.12. With two
    there (3.10 and 3.12), which one it is is not known, and nothing is reported on a guess."""
    root = _upgraded_host(tmp_path, keep_old=False)
    python3 = root / "usr/bin/python3"
    python3.unlink()
    python3.write_bytes((root / "usr/bin/python3.12").read_bytes())
    venv = _venv_made_with_python3(venvs, root / "opt/app/venv")
    args = ["--root", str(root), "--venv", str(venv)]
    finding = findings_by_id(check_json(args, env=cli_env({"HOME": str(tmp_path)}))[1])["ND-VENV-005"][0]
    assert finding["evidence"]["interpreter_version"] == "3.12"
    (root / "usr/lib/python3.10").mkdir()
    (root / "usr/lib/python3.10/os.py").write_text("# the standard library's os module\n")
    assert "ND-VENV-005" not in _ids(check_json(args, env=cli_env({"HOME": str(tmp_path)}))[1])


def _live_venv(venvs: VenvFactory, name: str, made_with: str, folder: str) -> Path:
    """A venv made here (it runs: this machine's Python {PY}), its packages in `lib/<folder>` and pyvenv.cfg saying
    `made_with`: what a venv made on the old release looks like once its `python3` runs the new one."""
    venv = venvs.create(name)
    venvs.install(venv, STACK)
    write_pip_conf(venv)
    (venv / "lib" / f"python{PY}").rename(venv / "lib" / folder)
    config = (venv / "pyvenv.cfg").read_text().splitlines()
    (venv / "pyvenv.cfg").write_text("\n".join(f"version = {made_with}" if line.startswith("version") else line
                                               for line in config) + "\n")
    return venv


def test_live_a_venv_whose_python3_moved_on(tmp_path: Path, venvs: VenvFactory) -> None:
    """`--python VENV/bin/python`: the interpreter runs and answers Python {PY}; the packages are in lib/python3.10,
    which its sys.path does not name. The same finding as static mode, from the live facts."""
    venv = _live_venv(venvs, "live-upgraded", "3.10.12", "python3.10")
    _, report, _ = check_json(["--python", str(venv / "bin/python")], env=cli_env({"HOME": str(tmp_path)}))
    assert _ids(report) == ["ND-VENV-005"]
    finding = findings_by_id(report)["ND-VENV-005"][0]
    assert finding["evidence"]["mode"] == "live" and finding["evidence"]["interpreter_version"] == PY
    assert finding["evidence"]["package_versions"] == ["3.10"] and finding["evidence"]["made_with"] == "3.10.12"
    assert finding["evidence"]["target"] == str(Path(sys.executable).resolve())


def test_live_near_miss_a_patch_level_behind(tmp_path: Path, venvs: VenvFactory) -> None:
    """pyvenv.cfg says {PY}.0, the interpreter is a later {PY}.x after `apt upgrade`: healthy."""
    venv = _live_venv(venvs, "live-patch", f"{PY}.0", f"python{PY}")
    _, report, _ = check_json(["--python", str(venv / "bin/python")], env=cli_env({"HOME": str(tmp_path)}))
    assert "ND-VENV-005" not in _ids(report)


def test_live_a_dangling_launcher_stays_one_finding(tmp_path: Path, venvs: VenvFactory) -> None:
    """The old python3.10 removed under a venv linked to it: the launcher leads nowhere, ND-VENV-001 says so, and
    nothing is said twice."""
    venv = _live_venv(venvs, "live-dangling", "3.10.12", "python3.10")
    for name in ("python", "python3", f"python{PY}"):
        (venv / "bin" / name).unlink(missing_ok=True)
        (venv / "bin" / name).symlink_to(tmp_path / "gone/python3.10")
    _, report, _ = check_json(["--python", str(venv / "bin/python")], env=cli_env({"HOME": str(tmp_path)}))
    assert "ND-VENV-005" not in _ids(report) and "ND-VENV-001" in _ids(report)
