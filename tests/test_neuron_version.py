"""Version normalisation for Neuron's build suffixes (docs/neuron-facts.md §1.4)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from neurondoctor.neuron_version import (
    framework_prefix,
    major_minor,
    normalize_neuron_version,
    release_tuple,
)
from neurondoctor.python_packaging import canonical_name


@pytest.mark.parametrize(("raw", "expected"), [
    ("2.9.0.2.13.23887+8e870898", "2.9.0.2.13.23887"),
    ("2.21.33363.0+82129205", "2.21.33363.0"),
    ("2.27.34.0-ec8cd5e8b", "2.27.34.0"),
    ("2.19.7.0_530fb3064-1", "2.19.7.0"),
    ("2.15.9.0-dkms", "2.15.9.0"),
    ("2.24.5133.0.dev0", "2.24.5133.0"),
    ("1:2.27.34.0-ec8cd5e8b", "2.27.34.0"),
    ("2.1.1.2.0.1b0", "2.1.1.2.0.1b0"),
    ("  2.26.6360.0 \n", "2.26.6360.0"),
])
def test_normalize_strips_build_suffixes(raw: str, expected: str) -> None:
    assert normalize_neuron_version(raw) == expected


def test_package_names_follow_pep_503() -> None:
    assert canonical_name("neuronx_distributed") == "neuronx-distributed"
    assert canonical_name("Torch_Neuronx") == "torch-neuronx"
    assert canonical_name("libtorch_neuronx_lite") == "libtorch-neuronx-lite"


def test_framework_prefix_reads_the_third_party_version() -> None:
    assert framework_prefix("2.9.0.2.15.32035") == "2.9.0"
    assert framework_prefix("2.11.0.1.0.1284") == "2.11.0"
    assert framework_prefix("1.0") is None  # the PyPI placeholder
    assert major_minor("2.10.0+cu128") == "2.10"
    assert major_minor("garbage") is None


def test_order_by_numeric_components() -> None:
    assert release_tuple("2.10.0") > release_tuple("2.9.9")
    assert release_tuple("14.09.x") == (14, 9)


@given(st.text())
def test_normalisation_never_raises(text: str) -> None:
    normalize_neuron_version(text)
    release_tuple(text)
    framework_prefix(text)
    major_minor(text)
