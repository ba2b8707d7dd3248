"""manifests/env-vars.json as data: every entry has its page and a known kind, what it names agrees with
instances.json, and every variable the code reads or writes is in it."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.release_data.schema import ENV_VAR_KINDS, ENV_VAR_OWNERS, NOT_STATED, RETIRED_EFFECTS
from tests.conftest import REPO

DATA = json.loads((REPO / "manifests" / "env-vars.json").read_text())
# The families of names the docs give the Neuron stack's variables; a string literal in the code of this shape is a
# variable the code reads or writes (the doctor's own NEURONDOCTOR_* settings are not of it; a prefix such as
# `NEURON_RT_` ends in `_`).
_VARIABLE = re.compile(r"(NEURON_|NEURONCORE_|XLA_|PJRT_|FI_|CCOM_|TORCH_NEURONX_|PT_XLA_)[A-Z0-9_]*[A-Z0-9]\Z")
# Strings of that shape that are not variables: kernel log markers and neuron-monitor fields.
_NOT_VARIABLES = {"NEURON_HW_ERR"}


def test_every_variable_has_its_page_and_a_known_kind() -> None:
    for name, entry in DATA["variables"].items():
        assert entry["source"].strip() and entry["kind"] in ENV_VAR_KINDS and entry["owner"] in ENV_VAR_OWNERS, name
        if entry["closed"]:  # judged: the page must give the values or the range
            assert entry["values"] != NOT_STATED or "range" in entry, name
        if entry["values"] == NOT_STATED:
            assert not entry["closed"] or entry["kind"] == "integer", name


def test_every_retired_variable_has_its_page_replacement_and_release() -> None:
    for name, entry in DATA["retired"].items():
        assert entry["source"].strip() and entry["replacement"].strip() and entry["effect"] in RETIRED_EFFECTS, name
        assert entry.get("retired_in") or entry.get("deprecated_in"), name
        assert name not in DATA["variables"], name
        for replacement in entry["replaced_by"]:
            assert replacement in DATA["variables"], (name, replacement)


def test_logical_core_families_agree_with_the_instances(catalog: ReleaseCatalog) -> None:
    lnc = DATA["variables"]["NEURON_LOGICAL_NC_CONFIG"]
    with_logical_cores = {props["family"] for props in catalog.instances.values()
                          if len(props["logical_nc_configs"]) > 1}
    assert set(lnc["families"]) == with_logical_cores == {"trn2", "trn3"}
    assert {str(config) for props in catalog.instances.values() for config in props["logical_nc_configs"]} == set(
        lnc["values"])


def _variables_in(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and _VARIABLE.match(node.value)}


def test_every_variable_the_code_names_is_in_the_data() -> None:
    named = set().union(*(_variables_in(path) for path in (REPO / "neurondoctor").rglob("*.py"))) - _NOT_VARIABLES
    assert "NEURON_RT_VISIBLE_CORES" in named and "NEURON_CC_FLAGS" in named  # the scan sees the rules' names
    known = set(DATA["variables"]) | set(DATA["retired"])
    assert sorted(named - known) == []
