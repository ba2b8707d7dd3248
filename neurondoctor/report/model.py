"""The report every reporter renders, its JSON document (`neurondoctor.report/1`) and its exit code.

Exit codes (ARCHITECTURE.md §7): 0 no errors (warnings allowed), 1 errors (with --strict: warnings too),
2 bad usage or bad input, 3 the doctor itself could not run.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

from neurondoctor.facts import Facts
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_INFO, SEVERITY_WARNING, Finding

SCHEMA = "neurondoctor.report/1"

STATUS_OK = "ok"
STATUS_WARNING = "warning"
STATUS_ERROR = "error"
STATUS_CRASHED = "crashed"
STATUS_INFO = "info"
STATUS_SKIPPED = "skipped"

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3


@dataclass
class CheckResult:
    """One report area after its rules ran."""

    id: str
    title: str
    status: str
    duration_ms: float
    findings: list[Finding] = field(default_factory=list)
    error: Optional[str] = None

    def to_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"id": self.id, "title": self.title, "status": self.status,
                                    "duration_ms": round(self.duration_ms, 2),
                                    "findings": [finding.id for finding in self.findings]}
        if self.error:
            document["error"] = self.error
        return document


@dataclass
class EnvironmentSummary:
    """One line per environment: where, which Python, which release, which torch."""

    path: str
    mode: str
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


@dataclass
class InputProblem:
    """Bad input the doctor could not use (a corrupt manifest): a one-line error, the report goes on."""

    source: str
    message: str


@dataclass
class Report:
    tool_version: str
    generated_at: str
    root: str
    facts: Facts
    environments: list[EnvironmentSummary]
    latest_release: Optional[str]
    checks: list[CheckResult]
    input_problems: list[InputProblem] = field(default_factory=list)
    internal_problems: list[str] = field(default_factory=list)
    collector_timings_ms: dict[str, float] = field(default_factory=dict)
    duration_ms: float = 0.0
    target_release: Optional[str] = None
    host_release: Optional[str] = None
    host_release_versions: dict[str, str] = field(default_factory=dict)
    host_release_consistent: bool = True
    host_agreed_releases: list[str] = field(default_factory=list)
    probe: Optional[dict[str, Any]] = None

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
        """Input the doctor could not trust outranks findings: a verdict on half the data is not one."""
        if self.internal_problems:
            return EXIT_INTERNAL
        if self.input_problems:
            return EXIT_BAD_INPUT
        if self.count(SEVERITY_ERROR) or (strict and self.count(SEVERITY_WARNING)):
            return EXIT_FINDINGS
        return EXIT_OK

    def to_json(self) -> dict[str, Any]:
        """The document with dataclass objects left in place; `render_json` serialises it without copying."""
        return {
            "schema": SCHEMA,
            "tool": {"name": "neurondoctor", "version": self.tool_version},
            "generated_at": self.generated_at,
            "root": self.root,
            "release": {
                "host": self.host_release,
                "environments": {env.path: env.release for env in self.environments},
                "latest_known": self.latest_release,
                "target": self.target_release,
                "details": {env.path: {"releases": env.releases, "consistent": env.consistent,
                                       "anchor": env.anchor} for env in self.environments},
                "host_packages": self.host_release_versions,
                "host_consistent": self.host_release_consistent,
                "host_and_environments_agree": self.host_and_environments_agree if self.host_release else None,
            },
            "environments": self.environments,
            "checks": [check.to_json() for check in self.checks],
            "findings": self.findings,
            "errors": [asdict(problem) for problem in self.input_problems]
            + [{"source": "neurondoctor", "message": message} for message in self.internal_problems],
            "facts": self.facts,
            "timings_ms": {"total": round(self.duration_ms, 2),
                           **{key: round(value, 2) for key, value in self.collector_timings_ms.items()}},
            "summary": {"errors": self.count(SEVERITY_ERROR), "warnings": self.count(SEVERITY_WARNING),
                        "info": self.count(SEVERITY_INFO)},
            **({"probe": self.probe} if self.probe is not None else {}),
        }


def _encode(value: object) -> Any:
    """Dataclass facts and findings serialise as their fields (no deep copy, unlike `dataclasses.asdict`)."""
    if hasattr(value, "__dataclass_fields__"):
        return vars(value)
    return str(value)


def render_json(report: Report) -> str:
    """The `--json` document: one line, exactly one JSON value."""
    return json.dumps(report.to_json(), default=_encode)
