"""The checks `check` runs: each an area of the report (one status line) made of rules with stable ids.

Adding a rule is adding a function to a rule module's `RULES`; adding an area is one entry here. Host
areas (hardware, driver, runtime, devices, environment variables) join this list with the host collectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Callable

from neurondoctor.rules import (
    device_rules,
    driver_rules,
    env_var_rules,
    framework_pin_rules,
    instance_rules,
    os_rules,
    pip_index_rules,
    python_support_rules,
    release_rules,
    resource_rules,
    runtime_rules,
    shadowing_rules,
    stock_torch_rules,
    venv_health_rules,
)
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import CATEGORIES, Finding

Rule = Callable[[RuleContext], list[Finding]]


def neuron_host(ctx: RuleContext) -> bool:
    """Host areas apply where there is Neuron hardware, a Neuron OS package, or a Trn/Inf instance type."""
    snapshot = ctx.facts.host.snapshot
    family = ctx.facts.host.instance_family or ""
    return (driver_rules.neuron_hardware(snapshot) or any(name.startswith("aws-neuron") for name in snapshot.packages)
            or "neuron" in snapshot.modules or family.startswith(("trn", "inf")))


def _always(ctx: RuleContext) -> bool:
    return True


@dataclass(frozen=True)
class Check:
    """One report area: its stable id, its title on the status line, its rules and finding-id prefixes, and
    whether it applies to this host (host areas are skipped on a machine without Neuron)."""

    id: str
    title: str
    rules: tuple[Rule, ...]
    finding_prefixes: tuple[str, ...]
    applies: Callable[[RuleContext], bool] = _always


CHECKS: tuple[Check, ...] = (
    Check("hardware", "Neuron hardware", device_rules.HARDWARE_RULES, ("ND-HW-",), neuron_host),
    Check("driver", "Driver", driver_rules.RULES, ("ND-DRV-", "ND-DKMS-"), neuron_host),
    Check("runtime", "Runtime & tools", runtime_rules.RULES, ("ND-RT-",), neuron_host),
    Check("devices", "Devices & cores", device_rules.RULES, ("ND-DEV-",), neuron_host),
    Check("host-env", "Environment", env_var_rules.RULES + resource_rules.RULES + os_rules.RULES,
          ("ND-ENV-", "ND-RES-", "ND-OS-")),
    Check("python-env", "Python environment",
          venv_health_rules.RULES + python_support_rules.RULES + shadowing_rules.RULES,
          ("ND-VENV-", "ND-PY-", "ND-SHADOW-")),
    Check("neuron-release", "Neuron release",
          release_rules.RULES + runtime_rules.RELEASE_RULES + instance_rules.RULES, ("ND-REL-", "ND-INST-")),
    Check("pytorch-stack", "PyTorch stack",
          stock_torch_rules.RULES + framework_pin_rules.RULES, ("ND-TORCH-", "ND-PIN-")),
    Check("pip-index", "Package index", pip_index_rules.RULES, ("ND-PIP-",)),
)


def _matches(check: Check, selector: str) -> bool:
    """A check is named by its id, a finding-id prefix of its rules, or any category (filtered later)."""
    wanted = selector.strip()
    return (wanted.lower() == check.id or wanted.lower() in CATEGORIES
            or any(prefix.startswith(wanted.upper()) or wanted.upper().startswith(prefix)
                   for prefix in check.finding_prefixes))


def select_checks(select: Sequence[str], skip: Sequence[str]) -> list[Check]:
    """Checks named (by check id or finding-id prefix) in `select`, minus those in `skip`."""
    chosen = [check for check in CHECKS if not select or any(_matches(check, item) for item in select)]
    return [check for check in chosen
            if not any(item.lower() == check.id for item in skip)]


def finding_selected(finding: Finding, select: Sequence[str], skip: Sequence[str]) -> bool:
    """Finding-level filter: ids (`ND-TORCH-001`, prefixes `ND-TORCH`) and categories (`shadowing`)."""
    def hit(item: str) -> bool:
        item = item.strip()
        return finding.id.startswith(item.upper()) or finding.category == item.lower()

    check_ids = {check.id for check in CHECKS}
    finding_select = [item for item in select if item.lower() not in check_ids]
    finding_skip = [item for item in skip if item.lower() not in check_ids]
    if finding_select and not any(hit(item) for item in finding_select):
        return False
    return not any(hit(item) for item in finding_skip)


def known_selector(item: str) -> bool:
    """Whether --select/--skip ITEM names a check, a finding-id prefix or a category."""
    return any(_matches(check, item) for check in CHECKS)
