"""What the reporters render: the result of one `check` (a `Report`) or of one probe (a `ProbeReport`).

Both carry the health verdict computed once (`report/health.py`); their exit code is read from it. The JSON
documents they become are written and read in `report/document.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from neurondoctor import exit_codes
from neurondoctor.facts import Facts
from neurondoctor.report.health import Health, health_exit_code
from neurondoctor.rules.finding import Finding
from neurondoctor.rules.fix import Fix

STATUS_OK = "ok"
STATUS_WARNING = "warning"
STATUS_ERROR = "error"
STATUS_CRASHED = "crashed"
STATUS_UNKNOWN = "unknown"
STATUS_INFO = "info"
STATUS_SKIPPED = "skipped"
# A check that could not judge: it crashed, or a collector it needs failed. Either makes the verdict unknown.
UNJUDGED_STATUSES = (STATUS_CRASHED, STATUS_UNKNOWN)


@dataclass
class CheckResult:
    """One report area after its rules ran: its status, its findings, and the line shown for it.

    `summary` is the check's own healthy line (or its not-applicable line when skipped); `error` says why a
    crashed or unknown check could not judge.
    """

    id: str
    title: str
    status: str
    duration_ms: float
    findings: list[Finding] = field(default_factory=list)
    error: Optional[str] = None
    summary: str = ""

    @property
    def shown_when_skipped(self) -> bool:
        return self.status == STATUS_SKIPPED and bool(self.summary)


@dataclass
class EnvironmentSummary:
    """One line per environment: where, which Python, which release, which torch."""

    path: str
    mode: str
    kind: Optional[str]  # the layout (pyenv/layouts.py KINDS) of a statically read environment
    holds: str  # its Neuron framework lines and libraries in a few words (rules/python_stack/labels.py)
    python: Optional[str]
    release: Optional[str]
    releases: list[str]
    consistent: bool
    anchor: Optional[str]
    torch: Optional[str]
    torch_flavour: Optional[str]
    neuron_packages: dict[str, str]
    discovered_by: str
    guarded_release: Optional[str] = None
    placeholders: dict[str, str] = field(default_factory=dict)  # PyPI placeholders on the import path
    fix_plan: Fix = field(default_factory=Fix)  # the findings' fixes for it as one ordered plan
    fix_plan_findings: list[str] = field(default_factory=list)  # the ids it combines, in report order


@dataclass
class InputProblem:
    """Bad input the doctor could not use (a corrupt manifest): a one-line error, the report goes on.

    `judged_nothing`: the input holds nothing to judge (a `--root` that is no host tree). The verdict is then
    unknown (exit 3, as `health` reports a node it could not judge), not a usage error."""

    source: str
    message: str
    judged_nothing: bool = False


@dataclass
class NodeIdentity:
    """Which node a report is about, so fleet tools can key hundreds of reports (docs/contracts.md §7)."""

    hostname: Optional[str] = None
    instance_id: Optional[str] = None
    instance_type: Optional[str] = None


@dataclass
class Report:
    """Everything one `check` found, as every output format renders it (docs/contracts.md)."""

    tool_version: str
    generated_at: str
    root: str
    facts: Facts
    environments: list[EnvironmentSummary]
    latest_release: Optional[str]
    checks: list[CheckResult]
    health: Health
    node: NodeIdentity = field(default_factory=NodeIdentity)
    input_problems: list[InputProblem] = field(default_factory=list)
    internal_problems: list[str] = field(default_factory=list)
    collector_timings_ms: dict[str, float] = field(default_factory=dict)
    duration_ms: float = 0.0
    target_release: Optional[str] = None
    host_release: Optional[str] = None
    host_release_versions: dict[str, str] = field(default_factory=dict)
    host_release_consistent: bool = True
    host_agreed_releases: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)  # `Next:` lines for a porting start

    @property
    def host_and_environments_agree(self) -> bool:
        """Every environment's release is one the host's packages also belong to."""
        return all(env.release is None or env.release in self.host_agreed_releases
                   or env.release == self.host_release for env in self.environments)

    @property
    def findings(self) -> list[Finding]:
        return [finding for check in self.checks for finding in check.findings]

    def count(self, severity: str) -> int:
        return sum(1 for finding in self.findings if finding.severity == severity)

    def exit_code(self, strict: bool = False) -> int:
        """Bad input the user named outranks the verdict (exit 2); otherwise the verdict decides."""
        if any(not problem.judged_nothing for problem in self.input_problems):
            return exit_codes.BAD_INPUT
        return health_exit_code(self.health, strict)
