"""`venv create` without `--release` builds the newest release the data knows whole for this host's instance family
and the interpreter's Python, and its plan says so; a release known in part, or one without a build for that Python
or family, is passed over (release data: manifests/, each release from AWS's manifest or its release notes)."""

from __future__ import annotations

import re

import pytest

from neurondoctor.actions.venv.plan import PlanError, newest_release_plan, plan_venv
from neurondoctor.release_data.catalog import ReleaseCatalog
from tests.conftest import run_cli


def _builds(catalog: ReleaseCatalog, release: str, python: str, framework: str) -> bool:
    try:
        plan_venv(catalog, release, python, framework=framework)
    except PlanError:
        return False
    return True


@pytest.mark.parametrize("python", ["3.10", "3.11", "3.12", "3.13"])
def test_the_newest_whole_release_with_a_build_for_this_python(catalog: ReleaseCatalog, python: str) -> None:
    plan = newest_release_plan(catalog, python, "pytorch", family="trn1")
    expected = next(release for release in catalog.release_names
                    if release not in catalog.partial and _builds(catalog, release, python, "pytorch"))
    assert plan.release == expected and plan.python == python
    assert plan.release not in catalog.partial  # 2.34.0 is known only in part: its pins are never guessed
    assert plan.chosen_because == ("--release not given: the newest release the data knows whole with a pytorch "
                                   f"build for Python {python} on trn1")


def test_the_instance_family_counts(catalog: ReleaseCatalog) -> None:
    """TorchNeuron (the native torch-neuronx) is published for Trn2 and Trn3 only (compat.json): a trn1 gets no
    release, a trn2 the newest that has one."""
    with pytest.raises(PlanError, match=re.escape("no release the data knows whole has a pytorch-native build for "
                                                  "Python 3.12 on trn1")):
        newest_release_plan(catalog, "3.12", "pytorch-native", family="trn1")
    plan = newest_release_plan(catalog, "3.12", "pytorch-native", family="trn2")
    assert plan.framework == "pytorch-native" and plan.release not in catalog.partial
    assert plan.chosen_because is not None and plan.chosen_because.endswith("on trn2")


def test_an_unknown_family_is_said(catalog: ReleaseCatalog) -> None:
    plan = newest_release_plan(catalog, "3.11", "pytorch", family=None)
    assert plan.chosen_because is not None and plan.chosen_because.endswith("(this host's instance family is not "
                                                                            "known)")


def test_the_dry_run_plan_says_which_release_and_why(tmp_path: object) -> None:
    done = run_cli(["venv", "create", f"{tmp_path}/venv", "--dry-run"])
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()[:2]
    release = first.split("Neuron ")[1].split(",")[0]
    assert second.startswith(f"release: {release} (--release not given: the newest release the data knows whole")
    named = run_cli(["venv", "create", f"{tmp_path}/venv", "--dry-run", "--release", "2.31.1"])
    assert named.returncode == 0 and "--release not given" not in named.stdout  # the near miss: a release named
