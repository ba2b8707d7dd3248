"""The report document `neurondoctor.report/1` (docs/contracts.md §7 ◆) and the probes' document, as written.

`report.schema.json` beside this module describes the report for other languages; `report/reader.py` reads it
back. The writer serialises the report's dataclasses in place (no deep copy), because `check --json` is the hot
path.
"""

from __future__ import annotations

from dataclasses import is_dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from neurondoctor import json_data
from neurondoctor.report.model import CheckResult, Report
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_INFO, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Fix

if TYPE_CHECKING:  # only the probe commands make one (report/probe_report.py)
    from neurondoctor.report.probe_report import ProbeReport

SCHEMA = "neurondoctor.report/1"
PROBE_SCHEMA = "neurondoctor.probe-report/1"
SCHEMA_FILE = Path(__file__).with_name("report.schema.json")


def _summary(findings: list[Finding]) -> dict[str, int]:
    return {"errors": sum(1 for finding in findings if finding.severity == SEVERITY_ERROR),
            "warnings": sum(1 for finding in findings if finding.severity == SEVERITY_WARNING),
            "info": sum(1 for finding in findings if finding.severity == SEVERITY_INFO)}


def _header(schema: str, version: str, generated_at: str) -> dict[str, Any]:
    return {"schema": schema, "tool": {"name": "neurondoctor", "version": version}, "generated_at": generated_at}


def _check_entry(check: CheckResult) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": check.id, "title": check.title, "status": check.status,
                             "duration_ms": round(check.duration_ms, 2), "summary": check.summary,
                             "findings": [finding.id for finding in check.findings]}
    if check.error:
        entry["error"] = check.error
    return entry


def report_document(report: Report) -> dict[str, Any]:
    """The document with dataclass objects left in place; `render_json` serialises it without copying them."""
    findings = report.findings
    return {
        **_header(SCHEMA, report.tool_version, report.generated_at),
        "root": report.root,
        "node": report.node,
        "health": report.health.to_json(),
        "release": {
            "host": report.host_release,
            "environments": {env.path: env.release for env in report.environments},
            "latest_known": report.latest_release,
            "target": report.target_release,
            "details": {env.path: {"releases": env.releases, "consistent": env.consistent,
                                   "anchor": env.anchor} for env in report.environments},
            "host_packages": report.host_release_versions,
            "host_consistent": report.host_release_consistent,
            "host_and_environments_agree": report.host_and_environments_agree if report.host_release else None,
        },
        "environments": report.environments,
        "checks": [_check_entry(check) for check in report.checks],
        "findings": findings,
        "errors": [{"source": problem.source, "message": problem.message} for problem in report.input_problems]
        + [{"source": "neurondoctor", "message": message} for message in report.internal_problems],
        "facts": report.facts,
        "timings_ms": {"total": round(report.duration_ms, 2),
                       **{key: round(value, 2) for key, value in report.collector_timings_ms.items()}},
        "summary": _summary(findings),
        "next_steps": report.next_steps,
    }


def probe_document(report: ProbeReport) -> dict[str, Any]:
    return {
        **_header(PROBE_SCHEMA, report.tool_version, report.generated_at),
        "kind": report.kind,
        "python": report.python,
        "health": report.health.to_json(),
        "findings": report.findings,
        "summary": _summary(report.findings),
        "duration_ms": round(report.duration_ms, 2),
        "probe": report.details,
    }


def _encode(value: object) -> Any:
    """Dataclass facts and findings serialise as their fields (no deep copy, unlike `dataclasses.asdict`)."""
    if isinstance(value, Fix):
        return value.lines()
    if is_dataclass(value):
        fields = vars(value)
        if any(key.startswith("_") for key in fields):  # a computed cache, not a fact
            return {key: item for key, item in fields.items() if not key.startswith("_")}
        return fields
    return str(value)


def render_json(report: Union[Report, ProbeReport]) -> str:
    """The `--json` document: one line, exactly one JSON value."""
    document = report_document(report) if isinstance(report, Report) else probe_document(report)
    return json_data.dumps(document, default=_encode)
