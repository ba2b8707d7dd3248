"""Healthy hosts for every release 2.24.1-2.33.1 (2.33.x with driver 2.31 and its reorganised sysfs
tree): trn1.2xlarge, trn1.32xlarge (16 devices,
8 EFA interfaces) and inf2.xlarge, each with a venv of that release for every Python 3.10-3.13 the release
supports. Variants rotate over the releases: the Neuron index only in the user's `~/.config/pip/pip.conf`, a
container rootfs (a DLC-shaped image on a host whose driver is loaded), and a venv inside the root instead of
outside it. Every one must come out with 0 warnings and 0 errors: a false alarm drains a healthy node; and with no
finding at all, but for the news a release's data carries for it (2.33.0's runtime 2.35.30.0: ND-RT-006, the hang
2.33.1 fixes). 2.33.1 on trn2 (TorchNeuron, Trn2/Trn3 only) is its own test below."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from neurondoctor.neuron_version import release_tuple
from tests.conftest import check_json, cli_env
from tests.host_fixture import HOST_STACKS, HostSpec, build_host
from tests.neuron_envs import (
    HEALTHY_STACKS,
    NATIVE_STACKS,
    NEURON_REPO,
    STACK_PYTHONS,
    native_stack_wheels,
    stack_wheels,
)
from tests.wheelhouse import VenvFactory, install_image_interpreter, relabel_python, write_pip_conf

RELEASES = sorted(HOST_STACKS, key=release_tuple)
INSTANCES = ("trn1.2xlarge", "trn1.32xlarge", "inf2.xlarge")
VARIANTS = ("venv-pip-conf", "user-pip-conf", "container")
# release-notes/2.33.1.rst: runtime-lib 2.35.33.0 fixes a DMA race of 2.35.30.0 (manifests/package-fixes.json)
NEWS = {"2.33.0": [("ND-RT-006", "info")]}


_BUILT: dict[str, Path] = {}


def _venv(venvs: VenvFactory, release: str, python: str, own_pip_conf: bool, parent: Path | None = None) -> Path:
    """A copy of the release's venv (pip runs once per release), relabelled to `python`."""
    if release not in _BUILT:
        built = venvs.create(f"matrix-{release}")
        venvs.install(built, stack_wheels(HEALTHY_STACKS[release]))
        _BUILT[release] = built
    venv = (parent or venvs.base / "matrix-copies") / f"{release}-py{python}-{'own' if own_pip_conf else 'user'}"
    if venv.exists():
        shutil.rmtree(venv)
    shutil.copytree(_BUILT[release], venv, symlinks=True)
    relabel_python(venv, python)
    if own_pip_conf:
        write_pip_conf(venv)
    return venv


def test_the_matrix_covers_every_release_from_2_24_1() -> None:
    assert RELEASES[0] == "2.24.1" and RELEASES[-1] == "2.33.1" and len(RELEASES) == 16
    assert set(RELEASES) == set(HEALTHY_STACKS) == set(STACK_PYTHONS)


@pytest.mark.parametrize("instance_type", INSTANCES)
@pytest.mark.parametrize("release", RELEASES)
def test_a_healthy_host_of_every_release(tmp_path: Path, venvs: VenvFactory, release: str,
                                         instance_type: str) -> None:
    variant = VARIANTS[(RELEASES.index(release) + INSTANCES.index(instance_type)) % len(VARIANTS)]
    root = build_host(tmp_path / "host", HostSpec(instance_type=instance_type, release=release,
                                                  container=variant == "container"))
    env = cli_env({"HOME": str(tmp_path / "support-engineer")})
    if variant == "user-pip-conf":
        conf = root / "home/ubuntu/.config/pip/pip.conf"
        conf.parent.mkdir(parents=True)
        conf.write_text(f"[global]\nextra-index-url = {NEURON_REPO}\n")
    for python in STACK_PYTHONS[release]:
        install_image_interpreter(root, python)  # the host's /usr/bin/pythonX.Y, which every venv names
        inside = variant == "container" or python == STACK_PYTHONS[release][0]
        venv = _venv(venvs, release, python, variant != "user-pip-conf",
                     parent=root / "opt" / f"py{python}" if inside else None)
        code, report, _ = check_json(["--root", str(root), "--venv", str(venv)], env=env)
        found = [(finding["id"], finding["severity"]) for finding in report["findings"]]
        assert found == NEWS.get(release, []), (variant, python, report["findings"])
        assert code == 0 and report["health"]["state"] == "ok"
        assert report["environments"][0]["python"].startswith(python)


def test_near_miss_a_copied_venv_whose_interpreter_is_in_neither_place(tmp_path: Path, venvs: VenvFactory) -> None:
    """The base interpreter is looked up in the root for a venv copied beside it; absent there too, it is gone."""
    root = build_host(tmp_path / "host", HostSpec(release="2.31.1"))
    venv = _venv(venvs, "2.31.1", "3.12", True)
    _, report, _ = check_json(["--root", str(root), "--venv", str(venv)])
    assert [finding["id"] for finding in report["findings"]] == ["ND-VENV-001"]
    install_image_interpreter(root, "3.12")
    assert check_json(["--root", str(root), "--venv", str(venv)])[1]["findings"] == []


LAYOUT_RELEASES = ("2.24.1", "2.28.1", "2.33.1")


@pytest.mark.parametrize("layout", ["conda", "system", "dlami"])
@pytest.mark.parametrize("release", LAYOUT_RELEASES)
def test_a_healthy_host_of_every_layout(tmp_path: Path, venvs: VenvFactory, release: str, layout: str) -> None:
    """Nothing named: the environments are found by discovery. `conda`: a Mambaforge /opt/conda holding the
    release's stack (the DLC Dockerfiles' shape); `system`: Python built into /usr/local with the stack, the
    index in root's pip.conf (the training DLC's); `dlami`: three /opt/aws_neuronx_venv_* side by side."""
    from tests.layouts import conda_install, source_built_python

    python = STACK_PYTHONS[release][-1]
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge", release=release,
                                                  container=layout != "dlami"))
    wheels = stack_wheels(HEALTHY_STACKS[release])
    if layout == "conda":
        conda_install(venvs, root / "opt" / "conda", python, wheels)
        (root / "root/.config/pip").mkdir(parents=True)
        (root / "root/.config/pip/pip.conf").write_text(f"[global]\nextra-index-url = {NEURON_REPO}\n")
    elif layout == "system":
        source_built_python(venvs, root, python, wheels, NEURON_REPO)
    else:
        install_image_interpreter(root, python)
        for name in ("pytorch", "pytorch_nxd_training", "pytorch_nxd_inference"):
            venv = _venv(venvs, release, python, True)
            shutil.copytree(venv, root / "opt" / f"aws_neuronx_venv_{name}", symlinks=True)
    code, report, _ = check_json(["--root", str(root)], env=cli_env({"HOME": str(tmp_path / "support")}))
    assert [(finding["id"], finding["title"]) for finding in report["findings"]] == [], layout
    assert code == 0 and len(report["environments"]) == (3 if layout == "dlami" else 1)
    assert {env["kind"] for env in report["environments"]} == {"venv" if layout == "dlami" else layout}


# Bottlerocket nodes as the kernel kit's pull requests show them (tests/recorded/modinfo/SOURCES.md): the trn2.48xlarge
# on kernel 6.18.20 with the 2.x.8072.0 build (pull request 430, a plain neuron.ko), the inf2.xlarge with 2.26.10.0
# (pull request 389) and the trn1.2xlarge with 2.23.9.0 (pull request 277), both stored as neuron.ko.gz on kernel 6.1
# (kmod-6.1-neuron.spec). No package database, no runtime, no Python environment: the containers bring them.
BOTTLEROCKET_NODES = {
    "trn2.48xlarge": ("6.18.20", "2.x.8072.0", "", "bottlerocket-2.x.8072.0.txt"),
    "inf2.xlarge": ("6.1.161", "2.26.10.0", ".gz", "bottlerocket-inf2-2.26.10.0.txt"),
    "trn1.2xlarge": ("6.1.161", "2.23.9.0", ".gz", "bottlerocket-trn1-2.23.9.0.txt"),
}


@pytest.mark.parametrize("instance_type", sorted(BOTTLEROCKET_NODES))
def test_a_healthy_bottlerocket_node(tmp_path: Path, instance_type: str) -> None:
    """Clean: no warning or error. A driver that names a release older than the newest says which (ND-DRV-005, an
    info); the 2.x build names none and gets nothing."""
    kernel, driver, suffix, recording = BOTTLEROCKET_NODES[instance_type]
    root = build_host(tmp_path / "node", HostSpec(instance_type=instance_type, release=None, kernel=kernel,
                                                  node="bottlerocket", loaded_version=driver, module_suffix=suffix,
                                                  module_recording=recording, sysfs_layout="classic"))
    code, report, _ = check_json(["--root", str(root)], env=cli_env({"HOME": str(tmp_path / "operator")}))
    assert code == 0 and report["health"]["state"] == "ok"
    assert [(finding["id"], finding["severity"]) for finding in report["findings"]] == (
        [] if driver.startswith("2.x.") else [("ND-DRV-005", "info")])
    assert report["facts"]["host"]["snapshot"]["node_role"]["platform"] == "bottlerocket"
    assert report["facts"]["host"]["snapshot"]["driver_module"]["version"] == driver


def _as_virtualenv_writes_it(venv: Path, version: str, micro: int) -> None:
    """pyvenv.cfg as virtualenv (which Poetry creates its environments with) writes it: `implementation`,
    `version_info = X.Y.Z.final.0` and `virtualenv = …` beside `home` (pypa/virtualenv's tracker shows these keys in
    a report from Ubuntu 22.04: "Using venv creator creates broken environment in Ubuntu 22.04")."""
    config = [line for line in (venv / "pyvenv.cfg").read_text().splitlines()
              if not line.startswith(("version", "command", "executable"))]
    config += ["implementation = CPython", f"version_info = {version}.{micro}.final.0", "virtualenv = 20.26.6"]
    (venv / "pyvenv.cfg").write_text("\n".join(config) + "\n")


def _distribution_python(root: Path, version: str, default: bool) -> None:
    """An Ubuntu release's Python: `/usr/bin/pythonX.Y`, its standard library, and `python3` naming it when it is
    the release's default."""
    install_image_interpreter(root, version)
    (root / "usr/lib" / f"python{version}").mkdir(parents=True, exist_ok=True)
    (root / "usr/lib" / f"python{version}/os.py").write_text("# the standard library's os module\n")
    if default:
        (root / "usr/bin/python3").unlink(missing_ok=True)
        (root / "usr/bin/python3").symlink_to(f"python{version}")


# (case, release, the Python of the environment, where it lies in the home or /opt)
UPGRADE_AND_POETRY = (
    ("poetry in-project .venv", "2.31.1", "3.12", "home/ubuntu/demo/.venv"),
    ("poetry cache folder", "2.31.1", "3.12", "home/ubuntu/.cache/pypoetry/virtualenvs/demo-wxXJaBmj-py3.12"),
    ("venv after a patch upgrade", "2.31.1", "3.12", "home/ubuntu/app/venv"),
    ("venv on the python the upgrade kept", "2.29.1", "3.10", "home/ubuntu/app/venv"),
)


@pytest.mark.parametrize(("case", "release", "python", "place"), UPGRADE_AND_POETRY,
                         ids=[case for case, *_ in UPGRADE_AND_POETRY])
def test_a_healthy_host_after_an_os_upgrade_and_with_poetry(tmp_path: Path, venvs: VenvFactory, case: str,
                                                            release: str, python: str, place: str) -> None:
    """Found with nothing named, each must come out clean: a Poetry project environment (`virtualenvs.in-project`
    `.venv` beside pyproject.toml and poetry.lock, or Poetry's cache folder `NAME-HASH-pyX.Y`, its name agreeing
    with the Python it runs); a venv made with 3.12.3 whose interpreter `apt upgrade` took to a later 3.12 (same
    minor version: its packages are where it looks); a venv made with python3.10 on a host upgraded from Ubuntu
    22.04 to 24.04 that kept python3.10 beside the new python3 (3.12)."""
    root = build_host(tmp_path / "host", HostSpec(release=release))
    _distribution_python(root, "3.12", default=True)  # Ubuntu 24.04's python3
    if python != "3.12":
        _distribution_python(root, python, default=False)
    built = _venv(venvs, release, python, True)
    venv = root / place
    venv.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(built, venv, symlinks=True)
    if case.startswith("poetry"):
        _as_virtualenv_writes_it(venv, python, 7)
        project = venv.parent if case.endswith(".venv") else root / "home/ubuntu/demo"
        project.mkdir(parents=True, exist_ok=True)
        (project / "pyproject.toml").write_text('[tool.poetry]\nname = "demo"\nversion = "0.1.0"\n')
        (project / "poetry.lock").write_text("# This file is automatically @generated by Poetry 1.8.3\n")
    elif case == "venv after a patch upgrade":
        relabel_python(venv, python, micro=3)
    code, report, _ = check_json(["--root", str(root)], env=cli_env({"HOME": str(tmp_path / "support")}))
    assert [(finding["id"], finding["title"]) for finding in report["findings"]] == [], case
    assert code == 0 and [env["path"] for env in report["environments"]] == [str(venv)]
    assert report["environments"][0]["kind"] == ("project" if case.startswith("poetry") else "venv")


@pytest.mark.parametrize("instance_type", ["trn2.48xlarge", "trn2.3xlarge"])
@pytest.mark.parametrize("os_name", ["ubuntu24", "ubuntu26"])
def test_a_healthy_trn2_host_of_2_33_1(tmp_path: Path, venvs: VenvFactory, instance_type: str, os_name: str) -> None:
    """2.33.1 on Trn2 as release-notes/2.33.1.rst leaves it: driver 2.31.8.0, runtime 2.35.33.0, collectives
    2.35.49.0, tools 2.33.38.0, and TorchNeuron 2.14.3.0.* (unchanged from 2.33.0) on Python 3.12-3.14 and the Ubuntu
    releases its support matrix names (release-notes/components/torchneuron.rst)."""
    kernel = {"kernel": "7.0.0-1004-aws"} if os_name == "ubuntu26" else {}
    root = build_host(tmp_path / "host", HostSpec(instance_type=instance_type, release="2.33.1", os=os_name, **kernel))
    built = venvs.create("matrix-2.33.1-native")
    venvs.install(built, native_stack_wheels(NATIVE_STACKS["2.33.1"]))
    for python in ("3.12", "3.13", "3.14"):
        install_image_interpreter(root, python)
        venv = root / "opt" / f"native-py{python}"
        shutil.copytree(built, venv, symlinks=True)
        relabel_python(venv, python)
        write_pip_conf(venv)
        code, report, _ = check_json(["--root", str(root), "--venv", str(venv)], env=cli_env())
        assert report["findings"] == [] and code == 0 and report["health"]["state"] == "ok", python
        assert report["release"]["host"] == "2.33.1" and report["release"]["environments"][str(venv)] == "2.33.1"
