"""Neuron 2.34.0, a release the data knows only in part: what AWS has published (torch-neuronx's GitHub release
v2.34.0: the TorchNeuron families 2.13.3.1.* and 2.14.3.1.*; release-notes/2.34.0.rst, no package list), and an
explicit list of what is not known (manifests/hand-kept/2.34.0.json `not_known`).

An environment one of its listed packages places in 2.34.0 is judged as 2.34.0, its other Neuron packages are not
outliers, and one ND-REL-006 line says what was not judged; a host whose packages are newer than every known version
gets that line too, never a bare "newer than the data". Near misses: TorchNeuron 2.14.3.0 (2.33's family) stays
2.33.1 and clean, and the XLA stack of 2.33.1 is never pulled into 2.34.0 by the packages 2.34.0 does not know.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from neurondoctor.release_data.catalog import load_catalog
from neurondoctor.rules.python_stack.release_detection import narrow_releases
from tests.conftest import check_json, cli_env, run_cli
from tests.fixes.local_release_data import NEXT_HOST
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import HEALTHY_STACKS, NATIVE_STACKS, native_stack_wheels, stack_wheels
from tests.wheelhouse import VenvFactory, WheelSpec, install_image_interpreter, relabel_python, write_pip_conf

NATIVE_HOST = {"os": "ubuntu26", "kernel": "7.0.0-1004-aws"}  # TorchNeuron's support matrix (2.33.0)
NOT_JUDGED_FACTS = ("the XLA torch-neuronx (PyTorch/XLA) of 2.34.0, if it ships one; the Python versions of every "
                    "package; the Inf1 packages")


def _venv_in(root: Path, venvs: VenvFactory, name: str, wheels: list[WheelSpec], python: str) -> Path:
    """A venv built here and copied into the host root, relabelled to the root's `python`."""
    built = venvs.create(f"partial-{name}")
    venvs.install(built, wheels)
    install_image_interpreter(root, python)
    venv = root / "opt" / name
    shutil.copytree(built, venv, symlinks=True)
    relabel_python(venv, python)
    write_pip_conf(venv)
    return venv


def test_the_data_knows_2_34_0_in_part() -> None:
    catalog = load_catalog(environ={})
    assert list(catalog.partial) == ["2.34.0"] and catalog.whole_latest == "2.33.1"
    assert sorted(entry.version for entry in catalog.releases["2.34.0"]) == ["2.13.3.1.*", "2.14.3.1.*"]
    assert catalog.releases_with("torch-neuronx", "2.14.3.1.2048") == ["2.34.0"]
    assert catalog.not_known_in("2.34.0", "aws-neuronx-runtime-lib") and catalog.not_known_in("2.34.0", "jax_neuronx")
    assert not catalog.not_known_in("2.34.0", "torch-neuronx") and not catalog.not_known_in("2.33.1", "nki")
    assert catalog.partial_newer_than("aws-neuronx-runtime-lib") == "2.34.0"
    assert catalog.partial_newer_than("torch-neuronx") is None  # 2.34.0 lists it: a version above is no 2.34 one


def test_a_release_known_in_part_never_places_a_package_it_does_not_list() -> None:
    """The compiler of 2.33.x is no evidence of 2.34.0: it keeps an environment 2.34.0 only once a listed package
    placed it there."""
    unpublished = [frozenset(), frozenset({"2.34.0"})]
    assert narrow_releases([("2.34.0",), ("2.33.1", "2.33.0")], unpublished=unpublished) == (["2.34.0"], [])
    assert narrow_releases([("2.33.1", "2.33.0"), ("2.33.1", "2.33.0")],
                           unpublished=[frozenset({"2.34.0"})] * 2) == (["2.33.1", "2.33.0"], [])
    assert narrow_releases([("2.34.0",), ("2.31.1",)], unpublished=[frozenset(), frozenset()]) == (["2.34.0"], [1])


def test_a_torchneuron_2_14_3_1_environment_on_a_trn2_is_2_34_0_with_the_not_known_line(
        tmp_path: Path, venvs: VenvFactory) -> None:
    """The acceptance case: TorchNeuron 2.14.3.1 (torch 2.14.0) beside 2.33's compiler and nki, on a trn2 whose host
    packages are newer than every version the data lists (2.34's, unpublished). One info names what was not judged;
    the environment's torch pairing (2.14 with the 2.14 family) is still judged from the versions themselves."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release=None,
                                                  package_versions=dict(NEXT_HOST), **NATIVE_HOST))
    venv = _venv_in(root, venvs, "native-2.34", native_stack_wheels(NATIVE_STACKS["2.34.0"]), "3.13")
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)], env=cli_env())
    assert [(item["id"], item["severity"]) for item in report["findings"]] == [("ND-REL-006", "info")]
    finding = report["findings"][0]
    assert finding["title"] == (
        f"Neuron 2.34.0 is known only in part; {venv} is judged as 2.34.0 on torch-neuronx 2.14.3.1.2048; not "
        "judged: aws-neuronx-runtime-lib 2.36.12.0 (host), aws-neuronx-dkms 2.32.4.0 (host), aws-neuronx-collectives "
        f"2.36.20.0 (host), aws-neuronx-tools 2.34.5.0 (host), +2 more; {NOT_JUDGED_FACTS}")
    assert sorted(finding["evidence"]["not_judged"])[-2:] == [f"neuronx-cc 2.28.7631.0 ({venv})",
                                                              f"nki 0.7.0 ({venv})"]
    assert finding["evidence"]["complete_source"] == (
        "https://github.com/aws-neuron/aws-neuron-sdk/blob/v2.34.0/src/helperscripts/n2-manifest.json")
    assert finding["fix"] == ["neurondoctor manifests update"]
    assert report["release"]["environments"][str(venv)] == "2.34.0" and report["release"]["host"] is None
    assert code == 0 and report["health"]["state"] == "ok"
    release = next(check for check in report["checks"] if check["id"] == "neuron-release")
    assert "2.34.0 is known only in part (see ND-REL-006; newest known whole: 2.33.1)" in release["summary"]


def test_on_a_2_33_1_host_the_2_34_environment_is_apart_and_its_host_packages_are_fetched_not_guessed(
        tmp_path: Path, venvs: VenvFactory) -> None:
    """The same environment on a 2.33.1 trn2: the host is on an older release (ND-REL-004, a warning), and since
    2.34.0's host versions are not in the data, the way out is the data that has them, never an unpinned install."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release="2.33.1", **NATIVE_HOST))
    venv = _venv_in(root, venvs, "native-2.34", native_stack_wheels(NATIVE_STACKS["2.34.0"]), "3.13")
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)], env=cli_env())
    assert [(item["id"], item["severity"]) for item in report["findings"]] == [("ND-REL-006", "info"),
                                                                               ("ND-REL-004", "warning")]
    apart = report["findings"][1]
    assert apart["fix"] == ["neurondoctor manifests update", "# then `neurondoctor check` names the host packages "
                            "of Neuron 2.34.0 (the data knows that release only in part)"]
    assert report["findings"][0]["evidence"]["not_judged"] == [f"neuronx-cc 2.28.7631.0 ({venv})",
                                                               f"nki 0.7.0 ({venv})"]
    assert code == 0 and report["health"]["state"] == "degraded"


def test_near_miss_torchneuron_2_14_3_0_stays_2_33_1_and_clean(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn2.48xlarge", release="2.33.1", **NATIVE_HOST))
    venv = _venv_in(root, venvs, "native-2.33", native_stack_wheels(NATIVE_STACKS["2.33.1"]), "3.13")
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)], env=cli_env())
    assert report["findings"] == [] and code == 0
    assert report["release"]["environments"][str(venv)] == "2.33.1"


def test_near_miss_the_xla_stack_of_2_33_1_is_never_pulled_into_2_34_0(tmp_path: Path, venvs: VenvFactory) -> None:
    """Every package of this environment but torch-neuronx is one 2.34.0 does not know: still 2.33.1 (2.33.0 too),
    nothing unjudged."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge", release="2.33.1"))
    venv = _venv_in(root, venvs, "xla-2.33", stack_wheels(HEALTHY_STACKS["2.33.1"]), "3.12")
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)], env=cli_env())
    assert report["findings"] == [] and code == 0
    assert report["release"]["details"][str(venv)]["releases"] == ["2.33.1", "2.33.0"]


def test_venv_create_refuses_a_release_known_in_part(tmp_path: Path) -> None:
    result = run_cli(["venv", "create", str(tmp_path / "v"), "--release", "2.34.0", "--framework", "pytorch-native",
                      "--dry-run"])
    assert result.returncode == 2 and not (tmp_path / "v").exists()
    assert result.stderr.strip() == (
        "error: --release 2.34.0: the data knows this release only in part (its compiler and other versions are not "
        "published in it); run `neurondoctor manifests update` for AWS's whole list, or build the newest release "
        "known whole (2.33.1)")
