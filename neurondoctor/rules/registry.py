"""The checks `check` runs, in report order, and the finding ids the probes emit: collected, never defined, here.

Each check declares itself in the rule module that leads its area (`rules/check.py`); `--select`/`--skip` and
`check --list` read those declarations, so an id that no rule declares cannot be selected.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from neurondoctor.rules.check import Check, FindingSpec
from neurondoctor.rules.finding import CATEGORIES, Finding
from neurondoctor.rules.host_stack import devices, driver, env_vars, hardware, runtime
from neurondoctor.rules.python_stack import package_index, release, stock_torch, venv_health

CHECKS: tuple[Check, ...] = (
    hardware.CHECK,
    driver.CHECK,
    runtime.CHECK,
    devices.CHECK,
    env_vars.CHECK,
    venv_health.CHECK,
    release.CHECK,
    stock_torch.CHECK,
    package_index.CHECK,
)


def probe_checks() -> tuple[Check, ...]:
    """The probes' areas: their findings are listed and explained like the others, but `check` does not run them,
    so `check` does not import them."""
    from neurondoctor.rules.probes import canary, ops, perf, shapes

    return (ops.CHECK, canary.CHECK, perf.CHECK, shapes.CHECK)


def fleet_checks() -> tuple[Check, ...]:
    """The cluster preflight's area (`fleet check --slurm`): listed and explained like the others, never run by
    `check`, so `check` does not import it."""
    from neurondoctor.rules.fleet import area

    return (area.CHECK,)
CHECK_IDS = frozenset(check.id for check in CHECKS)


def all_finding_specs() -> Iterator[tuple[Check, FindingSpec]]:
    for check in (*CHECKS, *probe_checks(), *fleet_checks()):
        for spec in check.findings:
            yield check, spec


def _names_findings(check: Check, selector: str) -> bool:
    """A finding id (`ND-PIN-001`) or id prefix (`ND-PIN`) that names at least one of this check's findings."""
    wanted = selector.strip().upper()
    return bool(wanted) and any(finding_id.startswith(wanted) for finding_id in check.finding_ids)


def _matches(check: Check, selector: str) -> bool:
    """A check is named by its id, a finding id or prefix of its findings, or any category (filtered later)."""
    wanted = selector.strip().lower()
    return wanted == check.id or wanted in CATEGORIES or _names_findings(check, selector)


def select_checks(select: Sequence[str], skip: Sequence[str]) -> list[Check]:
    """Checks named in `select` (all when empty), minus those whose id is in `skip`."""
    chosen = [check for check in CHECKS if not select or any(_matches(check, item) for item in select)]
    return [check for check in chosen if not any(item.strip().lower() == check.id for item in skip)]


def finding_selected(finding: Finding, select: Sequence[str], skip: Sequence[str]) -> bool:
    """Finding-level filter: ids (`ND-TORCH-001`, prefixes `ND-TORCH`) and categories (`shadowing`)."""
    def hit(item: str) -> bool:
        item = item.strip()
        return finding.id.startswith(item.upper()) or finding.category == item.lower()

    finding_select = [item for item in select if item.strip().lower() not in CHECK_IDS]
    finding_skip = [item for item in skip if item.strip().lower() not in CHECK_IDS]
    if finding_select and not any(hit(item) for item in finding_select):
        return False
    return not any(hit(item) for item in finding_skip)


def known_selector(item: str) -> bool:
    """Whether --select/--skip ITEM names a check, a declared finding id (or prefix of one) or a category."""
    return any(_matches(check, item) for check in CHECKS)
