"""The fix-kind table covers every declared finding id once, and every executed one names a test that exists."""

from __future__ import annotations

import ast

from neurondoctor.rules import registry
from tests.conftest import REPO
from tests.fixes.fix_kinds import ADVICE_ONLY, EXECUTED, HOST_LEVEL


def test_every_finding_id_has_a_fix_kind() -> None:
    declared = {spec.id for _, spec in registry.all_finding_specs()}
    kinds = [*EXECUTED, *HOST_LEVEL, *ADVICE_ONLY]
    assert len(kinds) == len(set(kinds)), "an id is listed under two kinds"
    assert set(kinds) == declared, {"unclassified": declared - set(kinds), "unknown": set(kinds) - declared}


def test_every_executed_fix_names_an_existing_test() -> None:
    for finding_id, node in EXECUTED.items():
        path, _, name = node.partition("::")
        tree = ast.parse((REPO / path).read_text())
        names = {item.name for item in ast.walk(tree) if isinstance(item, ast.FunctionDef)}
        assert name in names, f"{finding_id}: {node} does not exist"
