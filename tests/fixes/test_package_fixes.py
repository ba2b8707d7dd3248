"""More user-space fixes run verbatim, each in a 2.31.1 venv on a 2.31.1 host: a known conflict
(JAX beside torch-xla), a web framework's unmet requirement, an add-on from another release, damaged metadata,
two records of one package, and a uv-made venv without pip, whose fixes are `uv pip … --python PATH`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import check_json, findings_by_id
from tests.fixes.conftest import STACK, FixIndexes, broken_venv, fix_setting
from tests.fixes.harness import bad_findings, fix_and_check, run_verbatim
from tests.neuron_envs import cuda_torch_wheels, simple_wheel, stack_wheels
from tests.wheelhouse import VenvFactory, venv_python, write_pip_conf


def site_of(venv: Path) -> Path:
    return next(venv.glob("lib/python*/site-packages"))


def test_jax_beside_torch_xla(tmp_path: Path, venvs: VenvFactory, indexes: FixIndexes) -> None:
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "fix-pin-002", indexes, {"jax": [simple_wheel("jax", "0.4.38")]})
    finding = fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-PIN-002")
    assert finding["fix"] == [f"{venv_python(venv)} -m pip uninstall -y jax"]


def test_an_unmet_requirement_of_a_web_framework(tmp_path: Path, venvs: VenvFactory, indexes: FixIndexes) -> None:
    """fastapi 0.115.0 wants starlette<0.39.0; a later `pip install -U starlette` moved it to 0.40.0."""
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "fix-req-002", indexes, {
        "fastapi": [simple_wheel("fastapi", "0.115.0", ("starlette<0.39.0,>=0.37.2", "typing-extensions>=4.8.0"))],
        "starlette": [simple_wheel("starlette", "0.40.0")],
        "typing-extensions": [simple_wheel("typing-extensions", "4.12.2")]})
    finding = fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-REQ-002")
    assert finding["fix"] == [f"{venv_python(venv)} -m pip install 'starlette<0.39.0,>=0.37.2'"]
    assert "ND-REQ-002" not in findings_by_id(check_json(["--root", str(root), "--venv", str(venv)], env=env)[1])


def test_nki_from_another_release(tmp_path: Path, venvs: VenvFactory, indexes: FixIndexes) -> None:
    """`pip install -U nki` beside a 2.31.1 stack took 2.32.0's nki 0.6.0; 2.31.1 ships 0.5.0."""
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "fix-rel-001", indexes, {"nki": [simple_wheel("nki", "0.6.0")]})
    finding = fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-REL-001")
    assert finding["fix"] == [f"{venv_python(venv)} -m pip install 'nki==0.5.0' --extra-index-url {indexes.neuron}"]
    assert [path.name for path in site_of(venv).glob("nki-*.dist-info")] == ["nki-0.5.0.dist-info"]


def test_damaged_metadata_is_reinstalled(tmp_path: Path, venvs: VenvFactory, indexes: FixIndexes) -> None:
    """A METADATA a full disk cut short (no Name/Version header) is written again by a reinstall."""
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "fix-venv-003", indexes, {})
    metadata = next(site_of(venv).glob("numpy-*.dist-info")) / "METADATA"
    metadata.write_bytes(b"Metadata-Ver")
    fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-VENV-003")
    assert b"Name: numpy" in metadata.read_bytes()


def test_a_record_that_is_not_valid_metadata_is_moved_aside(tmp_path: Path, venvs: VenvFactory,
                                                           indexes: FixIndexes) -> None:
    """A record whose name pip would read as an option and whose version holds a newline is never
    named by a fix; ND-VENV-004 moves it aside, and the check after it is clean."""
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "fix-venv-004", indexes, {})
    record = site_of(venv) / "evil-1.0.dist-info"
    record.mkdir()
    (record / "METADATA").write_text("Metadata-Version: 2.1\nName: --index-url=http://127.0.0.1:9/x\n"
                                     "Version: 1.0; touch /tmp/pwned\n")
    finding = fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-VENV-004")
    assert all("--index-url=http" not in line for line in finding["fix"])  # the name is never a word of a command
    assert not record.exists() and (site_of(venv) / "evil-1.0.dist-info.neurondoctor-invalid/METADATA").exists()


def test_two_records_of_one_package(tmp_path: Path, venvs: VenvFactory, indexes: FixIndexes) -> None:
    """An interrupted upgrade left protobuf 3.20.2's dist-info beside 3.20.3's."""
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "fix-shadow-002", indexes, {})
    site = site_of(venv)
    shutil.copytree(site / "protobuf-3.20.3.dist-info", site / "protobuf-3.20.2.dist-info")
    (site / "protobuf-3.20.2.dist-info/METADATA").write_text(
        (site / "protobuf-3.20.2.dist-info/METADATA").read_text().replace("Version: 3.20.3", "Version: 3.20.2"))
    fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-SHADOW-002")
    assert [path.name for path in site.glob("protobuf-*.dist-info")] == ["protobuf-3.20.3.dist-info"]


def test_a_uv_venv_without_pip_gets_uv_pip_lines(tmp_path: Path, venvs: VenvFactory, indexes: FixIndexes) -> None:
    """`uv venv` + `uv pip install torch-neuronx … torch` from PyPI: no pip inside, so `python -m pip` would fail
    with `No module named pip`; the fix lines are uv's, and they work."""
    root, env = fix_setting(tmp_path, indexes)
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    venv = tmp_path / "uv-venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True, capture_output=True,
                   timeout=120)
    wheels = [spec for spec in stack_wheels(STACK) if spec.name != "torch"] + cuda_torch_wheels("2.10.0")
    venvs.install(venv, wheels)
    env = {**env, "PATH": f"{Path(uv).parent}:{env['PATH']}", "UV_DEFAULT_INDEX": indexes.pypi,
           "UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_NO_CONFIG": "1"}
    args = ["--root", str(root), "--venv", str(venv)]
    unconfigured = findings_by_id(check_json(args, env=env)[1])["ND-PIP-002"][0]
    assert unconfigured["fix"] == [f"# uv reads no pip configuration: give `uv pip install` --extra-index-url "
                                   f"{indexes.neuron}, or set UV_INDEX={indexes.neuron} where this environment is used"]
    write_pip_conf(venv, extra_index=indexes.neuron)  # the pip-side check is then content
    finding = findings_by_id(check_json(args, env=env)[1])["ND-TORCH-001"][0]
    python = venv_python(venv)
    assert finding["fix"][0] == (f"uv pip install --python {python} --force-reinstall --no-deps 'torch==2.9.0+cpu' "
                                 f"--default-index {indexes.cpu}")
    assert finding["fix"][-1].startswith(f"uv pip uninstall --python {python} nvidia-")
    for line in finding["fix"]:
        run_verbatim(str(line), env)
    after = check_json(args, env=env)[1]
    assert bad_findings(after) == set(), bad_findings(after)
    assert not (site_of(venv) / "pip").exists()


def _as_if_made_with(venv: Path, old: str) -> None:
    """The venv as an OS upgrade leaves it: made with Python `old` (pyvenv.cfg, lib/python<old>), while the
    `python3` its launcher leads to is now this machine's newer one (`/usr/bin/python3 -> python3.11`)."""
    current = f"{sys.version_info[0]}.{sys.version_info[1]}"
    (venv / "lib" / f"python{current}").rename(venv / "lib" / f"python{old}")
    config = (venv / "pyvenv.cfg").read_text()
    (venv / "pyvenv.cfg").write_text("\n".join(f"version = {old}.12" if line.startswith("version") else line
                                               for line in config.splitlines()) + "\n")


def test_a_venv_an_os_upgrade_left_on_another_python(tmp_path: Path, venvs: VenvFactory, indexes: FixIndexes) -> None:
    """Ubuntu 22.04 → 24.04 moves python3 from 3.10 to 3.12 under a venv made with it: every record is still in
    lib/python3.10, and Python 3.12 sees none of them. The venv is made again on the Python it runs, from its own
    package list, its pip.conf along; the old folder is kept."""
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "fix-venv-005", indexes, {})
    _as_if_made_with(venv, "3.10")
    finding = fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-VENV-005")
    assert finding["evidence"]["package_versions"] == ["3.10"]  # type: ignore[index]
    kept = [path for path in venv.parent.iterdir() if path.name.startswith(f"{venv.name}.neurondoctor-")]
    assert len(kept) == 1 and (kept[0] / "lib/python3.10/site-packages").is_dir()  # moved aside, never deleted
    current = f"{sys.version_info[0]}.{sys.version_info[1]}"
    names = {path.name.split("-")[0] for path in (venv / "lib" / f"python{current}/site-packages").glob("*.dist-info")}
    assert {"torch_neuronx", "neuronx_cc", "libneuronxla"} <= names
    assert (venv / "pip.conf").read_text() == (kept[0] / "pip.conf").read_text()


def test_near_miss_a_venv_on_the_python_it_was_made_with(tmp_path: Path, venvs: VenvFactory,
                                                         indexes: FixIndexes) -> None:
    """The same venv untouched, and one whose lib holds an empty folder of another version beside its own."""
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "fix-venv-005-near", indexes, {})
    (venv / "lib/python3.9/site-packages").mkdir(parents=True)
    found = check_json(["--root", str(root), "--venv", str(venv)], env=env)[1]["findings"]
    assert [item for item in found if item["id"] == "ND-VENV-005"] == []


def test_a_live_venv_an_os_upgrade_left_on_another_python(tmp_path: Path, venvs: VenvFactory,
                                                         indexes: FixIndexes) -> None:
    """The same venv judged live (`--python VENV/bin/python`): its interpreter runs and answers its own version,
    the packages sit in a lib/python3.10 its sys.path does not name. The rebuild names the interpreter the launcher
    ends at (the venv's own bin/python is moved aside with it), and the check after it, live again, is clean."""
    root, env = fix_setting(tmp_path, indexes)
    venv = broken_venv(venvs, "fix-venv-005-live", indexes, {})
    _as_if_made_with(venv, "3.10")
    finding = fix_and_check(["--root", str(root), "--python", str(venv / "bin/python")], env, "ND-VENV-005")
    assert finding["fix"][1] == f"{Path(sys.executable).resolve()} -m venv {venv}"  # type: ignore[index]
    current = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert list((venv / "lib" / f"python{current}/site-packages").glob("torch_neuronx-*.dist-info"))


def test_a_uv_venv_an_os_upgrade_left_on_another_python(tmp_path: Path, venvs: VenvFactory,
                                                        indexes: FixIndexes) -> None:
    """A `uv venv` (pyvenv.cfg `uv = …`, `version_info`, no pip) made on the old Python: made again the way its owner
    made it, `uv venv` then `uv pip install` of its own package list, the old folder kept."""
    root, env = fix_setting(tmp_path, indexes)
    uv = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    venv = tmp_path / "uv-venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True, capture_output=True,
                   timeout=120)
    venvs.install(venv, stack_wheels(STACK))
    write_pip_conf(venv, extra_index=indexes.neuron)
    assert "uv = " in (venv / "pyvenv.cfg").read_text() and "version_info = " in (venv / "pyvenv.cfg").read_text()
    _as_if_made_with(venv, "3.10")
    env = {**env, "PATH": f"{Path(uv).parent}:{env['PATH']}", "UV_DEFAULT_INDEX": indexes.pypi,
           "UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_NO_CONFIG": "1"}
    finding = fix_and_check(["--root", str(root), "--venv", str(venv)], env, "ND-VENV-005")
    lines = [str(line) for line in finding["fix"]]  # type: ignore[attr-defined]
    assert lines[1].startswith("uv venv --python ") and lines[3].startswith(
        f"uv pip install --python {venv}/bin/python --index-strategy unsafe-best-match ")
    assert not (site_of(venv) / "pip").exists() and list(site_of(venv).glob("torch_neuronx-*.dist-info"))
