"""Reads `neurondoctor.report/1` documents back, tolerantly, for tools that load reports written by other
versions and other nodes (`fleet summarize`, CI gates): unknown fields are ignored (a newer writer may add some),
a missing required field is one clear error, and `facts` stays the raw JSON it was, because reading hundreds of
reports must not build thousands of objects nobody looks at.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Optional, Union

from neurondoctor import json_data
from neurondoctor.regular_files import read_regular_text
from neurondoctor.report.document import SCHEMA
from neurondoctor.report.health import STATES, Health
from neurondoctor.report.model import NodeIdentity
from neurondoctor.strict_numbers import finite_float, json_count

REPORT_LIMIT = 256 << 20


class ReportFormatError(ValueError):
    """A document that is not a readable `neurondoctor.report/1`: the message names what is wrong."""


@dataclass(frozen=True)
class FindingRecord:
    id: str
    category: str
    severity: str
    title: str
    detail: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
    fix: list[str] = field(default_factory=list)
    docs: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class CheckRecord:
    id: str
    title: str
    status: str
    duration_ms: float
    findings: list[str]
    summary: str = ""
    error: Optional[str] = None


@dataclass(frozen=True)
class ReleaseRecord:
    host: Optional[str]
    environments: dict[str, Optional[str]]
    latest_known: Optional[str]
    target: Optional[str]
    host_packages: dict[str, str]


@dataclass(frozen=True)
class ReportDocument:
    """A report as read back: typed where tools look (node, health, release, checks, findings), raw elsewhere."""

    schema: str
    tool_version: str
    generated_at: str
    root: str
    node: NodeIdentity
    health: Health
    release: ReleaseRecord
    checks: list[CheckRecord]
    findings: list[FindingRecord]
    errors: list[dict[str, Any]]
    summary: dict[str, int]
    environments: list[Any]
    facts: Any


def _field(document: dict[str, Any], key: str, kind: type, where: str = "") -> Any:
    if key not in document:
        raise ReportFormatError(f"not a {SCHEMA} document: missing field '{where}{key}'")
    value = document[key]
    if not isinstance(value, kind):
        raise ReportFormatError(f"{SCHEMA}: field '{where}{key}' should be {kind.__name__}, "
                                f"not {type(value).__name__}")
    return value


def _object(document: dict[str, Any], key: str) -> dict[str, Any]:
    """An optional object field; anything else (absent, null, another type) reads as empty."""
    value = document.get(key)
    return value if isinstance(value, dict) else {}


def _list(document: dict[str, Any], key: str) -> list[Any]:
    """An optional list field; anything else (absent, null, a number, an object) reads as empty."""
    value = document.get(key)
    return value if isinstance(value, list) else []


def _optional_str(document: dict[str, Any], key: str) -> Optional[str]:
    value = document.get(key)
    return value if isinstance(value, str) else None


def _finding(entry: Any, index: int) -> FindingRecord:
    where = f"findings[{index}]."
    if not isinstance(entry, dict):
        raise ReportFormatError(f"{SCHEMA}: findings[{index}] should be an object")
    return FindingRecord(id=_field(entry, "id", str, where), category=_field(entry, "category", str, where),
                         severity=_field(entry, "severity", str, where), title=_field(entry, "title", str, where),
                         detail=str(entry.get("detail", "")), evidence=_object(entry, "evidence"),
                         fix=[str(line) for line in _list(entry, "fix")],
                         docs=[str(link) for link in _list(entry, "docs")])


def _check(entry: Any, index: int) -> CheckRecord:
    where = f"checks[{index}]."
    if not isinstance(entry, dict):
        raise ReportFormatError(f"{SCHEMA}: checks[{index}] should be an object")
    return CheckRecord(id=_field(entry, "id", str, where), title=str(entry.get("title", "")),
                       status=_field(entry, "status", str, where),
                       duration_ms=finite_float(entry.get("duration_ms")) or 0.0,  # 10**400 or "2x": none
                       findings=[str(item) for item in _list(entry, "findings")],
                       summary=str(entry.get("summary", "")), error=_optional_str(entry, "error"))


def parse_report(document: Any) -> ReportDocument:
    """A decoded JSON value as a report; raises ReportFormatError naming the first thing that is wrong."""
    if not isinstance(document, dict):
        raise ReportFormatError(f"not a {SCHEMA} document: the top level is not an object")
    schema = _field(document, "schema", str)
    if schema != SCHEMA:
        raise ReportFormatError(f"not a {SCHEMA} document: schema is {schema!r}")
    health = _field(document, "health", dict)
    state = _field(health, "state", str, "health.")
    if state not in STATES:
        raise ReportFormatError(f"{SCHEMA}: health.state {state!r} is not one of {', '.join(STATES)}")
    release, node, tool, summary = (_object(document, key) for key in ("release", "node", "tool", "summary"))
    return ReportDocument(
        schema=schema,
        tool_version=str(tool.get("version", "")),
        generated_at=_field(document, "generated_at", str),
        root=str(document.get("root", "/")),
        node=NodeIdentity(_optional_str(node, "hostname"), _optional_str(node, "instance_id"),
                          _optional_str(node, "instance_type")),
        health=Health(state, [str(reason) for reason in _list(health, "reasons")]),
        release=ReleaseRecord(host=_optional_str(release, "host"),
                              environments={str(path): value if isinstance(value, str) else None
                                            for path, value in _object(release, "environments").items()},
                              latest_known=_optional_str(release, "latest_known"),
                              target=_optional_str(release, "target"),
                              host_packages={str(name): str(version) for name, version in
                                             _object(release, "host_packages").items()}),
        checks=[_check(entry, index) for index, entry in enumerate(_field(document, "checks", list))],
        findings=[_finding(entry, index) for index, entry in enumerate(_field(document, "findings", list))],
        errors=[entry for entry in _list(document, "errors") if isinstance(entry, dict)],
        summary={str(key): value for key, value in summary.items() if json_count(value) is not None},
        environments=_list(document, "environments"),
        facts=document.get("facts"),
    )


def load_report(source: Union[str, bytes, os.PathLike[str]]) -> ReportDocument:
    """A report from a path, or from the JSON text itself (a string that starts with `{`)."""
    if isinstance(source, bytes):
        text = source.decode("utf-8", errors="replace")
    elif isinstance(source, str) and source.lstrip().startswith("{"):
        text = source
    else:
        try:
            text = read_regular_text(source, REPORT_LIMIT)
        except OSError as error:
            raise ReportFormatError(f"{os.fspath(source)}: cannot read it ({error.strerror or error})") from error
    try:
        document = json_data.loads(text)
    except (ValueError, RecursionError) as error:
        raise ReportFormatError(f"not JSON: {error}") from error
    return parse_report(document)
