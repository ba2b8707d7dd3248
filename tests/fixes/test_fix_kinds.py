"""The fix-kind table covers every declared finding id once, and every executed one names a test that exists."""

from __future__ import annotations

import ast

from neurondoctor.rules import registry
from tests.conftest import REPO
from tests.fixes.fix_kinds import ADVICE_ONLY, EXECUTED, HOST_SIMULATED
from tests.fixes.test_host_fixes import CASES


def test_every_finding_id_has_a_fix_kind() -> None:
    declared = {spec.id for _, spec in registry.all_finding_specs()}
    proven = set(EXECUTED) | set(HOST_SIMULATED)
    assert not proven & set(ADVICE_ONLY), "an id with a tested fix is also listed as advice only"
    kinds = proven | set(ADVICE_ONLY)
    assert kinds == declared, {"unclassified": declared - kinds, "unknown": kinds - declared}


def test_every_simulated_fix_names_a_case_of_that_id() -> None:
    for finding_id, case in HOST_SIMULATED.items():
        assert CASES[case].finding == finding_id, (finding_id, case)


def test_every_executed_fix_names_an_existing_test() -> None:
    for finding_id, node in EXECUTED.items():
        path, _, name = node.partition("::")
        tree = ast.parse((REPO / path).read_text())
        names = {item.name for item in ast.walk(tree) if isinstance(item, ast.FunctionDef)}
        assert name in names, f"{finding_id}: {node} does not exist"
