"""How a check declares itself: its id and title, the rules it runs, every finding id they can emit, the
collectors it needs, and the line it shows when healthy (flutter doctor's statusInfo).

A rule module exports a `RuleSet` (its rules and the findings they can emit); the module that leads a report
area exports that area's `Check`, made of its own rule set and those of the concerns it groups. The registry
only collects the checks, so adding a finding is one line beside the rule that emits it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Callable, Optional

from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import CATEGORIES, SEVERITIES, Finding

Rule = Callable[[RuleContext], list[Finding]]
NO_ENVIRONMENT = "no Python environment found (name one with --venv DIR or --python EXE)"


@dataclass(frozen=True)
class FindingSpec:
    """A finding id a rule can emit: its category, its usual severity and the others its rule may give it where the
    facts say so (`also`), and one line on what it means, for `check --list` and `explain`."""

    id: str
    category: str
    severity: str
    title: str
    docs: tuple[str, ...] = ()
    also: tuple[str, ...] = ()  # the other severities its rule gives it where the facts say so

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"{self.id}: unknown category {self.category!r}")
        for severity in (self.severity, *self.also):
            if severity not in SEVERITIES:
                raise ValueError(f"{self.id}: unknown severity {severity!r}")

    @property
    def severities(self) -> tuple[str, ...]:
        """Every severity the id can be printed at, its usual one first (`check --list`)."""
        return (self.severity, *self.also)


@dataclass(frozen=True)
class RuleSet:
    """The rules of one concern module and every finding they can emit."""

    rules: tuple[Rule, ...]
    findings: tuple[FindingSpec, ...]


def always(ctx: RuleContext) -> bool:
    return True


def has_environments(ctx: RuleContext) -> bool:
    """An area that judges Python environments judges nothing without one: it is skipped (`[–]`), never `[✓]`."""
    return bool(ctx.facts.environments)


def no_environment(ctx: RuleContext) -> str:
    """Why an area that judges Python environments judged none: on a container node they are in the images."""
    role = ctx.facts.host.snapshot.node_role
    if role is not None and not ctx.facts.environments:
        return f"not on this node: Python environments run in its containers ({role.name})"
    return NO_ENVIRONMENT


@dataclass(frozen=True)
class Check:
    """One report area (one status line).

    `needs` names the host collectors (and `environments`) whose failure leaves this check unable to judge: it
    is then reported as unknown instead of running its rules on missing data. `applies` skips host areas on a
    machine without Neuron; `not_applicable` is the line a skipped check still shows (hardware: "none found"),
    None to hide it.
    """

    id: str
    title: str
    rule_sets: tuple[RuleSet, ...]
    summary: Callable[[RuleContext], str]
    applies: Callable[[RuleContext], bool] = always
    needs: tuple[str, ...] = ()
    not_applicable: Optional[Callable[[RuleContext], str]] = None

    @property
    def rules(self) -> Iterator[Rule]:
        for rule_set in self.rule_sets:
            yield from rule_set.rules

    @property
    def findings(self) -> tuple[FindingSpec, ...]:
        return tuple(spec for rule_set in self.rule_sets for spec in rule_set.findings)

    @property
    def finding_ids(self) -> frozenset[str]:
        return frozenset(spec.id for spec in self.findings)

    def undeclared(self, findings: list[Finding]) -> list[str]:
        """Findings this check does not declare, as `check --list` and `explain` would miss them: an id none of
        its rule sets names, or a severity its spec does not list. `--list --json` is then the one source of every
        id and severity a report can print."""
        severities = {spec.id: spec.severities for spec in self.findings}
        return sorted({finding.id if finding.id not in severities else f"{finding.id} as {finding.severity}"
                       for finding in findings if finding.severity not in severities.get(finding.id, ())})


def environment_check(check_id: str, title: str, rule_sets: tuple[RuleSet, ...],
                      summary: Callable[[RuleContext], str]) -> Check:
    """An area that judges Python environments: it needs them collected, and is skipped (`[–]`, never `[✓]`)
    when there is none."""
    return Check(check_id, title, rule_sets, summary, needs=("environments",), applies=has_environments,
                 not_applicable=no_environment)
