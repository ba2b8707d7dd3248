"""The fleet summary (docs/contracts.md §8 ◆ `neurondoctor.fleet/1`), pure: read-back reports in, nodes per
release, version drift per component, failing findings with their nodes, unknown nodes and the reports whose word
about themselves is not taken (`identity`) out, and the text and Markdown tables. Uniform means the same Neuron
component versions on every node; only the nodes that differ from the majority are named, so the summary of 1,000
nodes stays small.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from neurondoctor import exit_codes
from neurondoctor.output_text import markdown_data, neutralize
from neurondoctor.report.health import STATE_UNHEALTHY, STATE_UNKNOWN
from neurondoctor.report.reader import ReportDocument
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING
from neurondoctor.rules.fleet.identity import report_time

SCHEMA = "neurondoctor.fleet/1"
NONE = "none"  # the version of a component a node does not have
IDENTITY_SHOWN = 20  # lines of `identity` in the text and Markdown tables (all of them in --json)
# (component, where it is read, package name): host packages from the OS database, the rest from environments
COMPONENTS = (("driver", "host", "aws-neuronx-dkms"), ("runtime", "host", "aws-neuronx-runtime-lib"),
              ("collectives", "host", "aws-neuronx-collectives"), ("tools", "host", "aws-neuronx-tools"),
              ("compiler", "env", "neuronx-cc"), ("torch-neuronx", "env", "torch-neuronx"), ("torch", "env", "torch"))


@dataclass
class NodeRecord:
    name: str  # the node the transport vouches for (rules/fleet/identity.py), never the report's own claim
    release: Optional[str]
    state: str
    generated_at: str
    versions: dict[str, str]
    failing: list[tuple[str, str]]  # (finding id, severity)
    where: str = ""
    problems: list[str] = field(default_factory=list)  # why its report's word about itself is not taken

    def distrust(self, problems: Sequence[str]) -> None:
        """Its report's word about itself is not taken (`problems`): its verdict is then at best unknown."""
        self.problems += problems
        if self.problems and self.state != STATE_UNHEALTHY:
            self.state = STATE_UNKNOWN


@dataclass
class FleetSummary:
    nodes: list[NodeRecord]
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, or path:line; why)
    identity: list[tuple[str, str, str]] = field(default_factory=list)  # (node, where, why its word is not taken)

    def releases(self) -> dict[str, int]:
        return dict(Counter(node.release or NONE for node in self.nodes).most_common())

    def drift(self) -> list[dict[str, Any]]:
        drifting = []
        for component, _, _ in COMPONENTS:
            counts = Counter(node.versions[component] for node in self.nodes)
            if len(counts) < 2:
                continue
            majority = max(counts, key=lambda version: (counts[version], version != NONE, version))
            others: dict[str, list[str]] = {}
            for node in self.nodes:
                if node.versions[component] != majority:
                    others.setdefault(node.versions[component], []).append(node.name)
            drifting.append({"component": component, "majority": majority,
                             "others": {version: sorted(names) for version, names in sorted(others.items())}})
        return drifting

    def failing(self) -> list[dict[str, Any]]:
        by_id: dict[tuple[str, str], list[str]] = {}
        for node in self.nodes:
            for finding_id, severity in node.failing:
                by_id.setdefault((finding_id, severity), []).append(node.name)
        order = {SEVERITY_ERROR: 0, SEVERITY_WARNING: 1}
        return [{"id": finding_id, "severity": severity, "nodes": sorted(set(names))}
                for (finding_id, severity), names in sorted(by_id.items(), key=lambda item: (
                    order.get(item[0][1], 2), -len(item[1]), item[0][0]))]

    def unknown(self) -> list[str]:
        return sorted(node.name for node in self.nodes if node.state == STATE_UNKNOWN)

    def oldest(self) -> Optional[NodeRecord]:
        """The node whose report is oldest, of those whose date is a time (a node's own word)."""
        dated = [(when, node) for node in self.nodes for when in [report_time(node.generated_at)] if when]
        return min(dated, key=lambda pair: pair[0])[1] if dated else None

    def to_json(self) -> dict[str, Any]:
        return {"schema": SCHEMA, "nodes": len(self.nodes), "releases": self.releases(), "drift": self.drift(),
                "failing": self.failing(), "unknown": self.unknown(),
                "unreadable": [where for where, _ in self.unreadable],
                "unreadable_reasons": {where: why for where, why in self.unreadable},
                "identity": [{"node": node, "where": where, "problem": problem}
                             for node, where, problem in self.identity]}

    def exit_code(self) -> int:
        """1 not uniform or a node unhealthy, else 3 a node unknown or a report unreadable, else 0."""
        if self.drift() or any(node.state == STATE_UNHEALTHY for node in self.nodes):
            return exit_codes.FINDINGS
        if self.unknown() or self.unreadable:
            return exit_codes.UNKNOWN
        return exit_codes.OK


def _env_versions(environments: list[Any], package: str) -> str:
    found = set()
    for env in environments:
        if not isinstance(env, dict):
            continue
        version = env.get("torch") if package == "torch" else (env.get("neuron_packages") or {}).get(package)
        if isinstance(version, str) and version:
            found.add(version)
    return ",".join(sorted(found)) or NONE


def node_record(report: ReportDocument, name: str, where: str = "", problems: Sequence[str] = ()) -> NodeRecord:
    """The node `name` (what the transport vouches for) as its report shows it. A report whose word about itself is
    not taken (`problems`) is at best unknown: its verdict is never taken as healthy."""
    versions = {}
    for component, where, package in COMPONENTS:
        versions[component] = (report.release.host_packages.get(package) or NONE if where == "host"
                               else _env_versions(report.environments, package))
    failing = [(finding.id, finding.severity) for finding in report.findings
               if finding.severity in (SEVERITY_ERROR, SEVERITY_WARNING)]
    record = NodeRecord(name, report.release.host, report.health.state, report.generated_at, versions,
                        sorted(set(failing)), where)
    record.distrust(problems)
    return record




def _table(summary: FleetSummary) -> list[tuple[str, str]]:
    """(label, text) rows shared by the text and Markdown forms."""
    rows = [("nodes", str(len(summary.nodes))),
            ("releases", ", ".join(f"{release} ×{count}" for release, count in summary.releases().items()) or "none")]
    for drift in summary.drift():
        others = "; ".join(f"{version} on {', '.join(names[:5])}" + (f" (+{len(names) - 5})" if len(names) > 5 else "")
                           for version, names in drift["others"].items())
        rows.append((f"drift: {drift['component']}", f"{drift['majority']} on most; {others}"))
    for failing in summary.failing():
        names = failing["nodes"]
        rows.append((f"{failing['severity']}: {failing['id']}", f"{len(names)} node(s): {', '.join(names[:8])}"
                     + (f" (+{len(names) - 8})" if len(names) > 8 else "")))
    if summary.unknown():
        rows.append(("unknown verdict", ", ".join(summary.unknown())))
    for node, where, problem in summary.identity[:IDENTITY_SHOWN]:
        rows.append(("identity", f"{node} ({where}): {problem}" if where != node else f"{node}: {problem}"))
    if len(summary.identity) > IDENTITY_SHOWN:
        rows.append(("identity", f"(+{len(summary.identity) - IDENTITY_SHOWN} more in --json)"))
    for where, why in summary.unreadable:
        rows.append(("unreadable", f"{where}: {why}"))
    oldest = summary.oldest()
    if oldest is not None:
        rows.append(("oldest report", f"{oldest.name} at {oldest.generated_at}"))
    return rows


def verdict_line(summary: FleetSummary) -> str:
    if summary.exit_code() == 1:
        return "Not uniform or unhealthy nodes: see drift and errors above."
    if summary.exit_code() == 3:
        return "Uniform, but some nodes could not be judged: see unknown, identity and unreadable above."
    return f"Uniform: {len(summary.nodes)} node(s) on the same Neuron component versions, none unhealthy."


def render_fleet_text(summary: FleetSummary) -> str:
    rows = _table(summary)
    width = max((len(label) for label, _ in rows), default=0)
    return "\n".join([*(neutralize(f"{label:<{width}}  {text}") for label, text in rows), "",
                      verdict_line(summary)]) + "\n"


def render_fleet_markdown(summary: FleetSummary) -> str:
    lines = ["| | |", "|---|---|", *(f"| {markdown_data(label)} | {markdown_data(text)} |"
                                     for label, text in _table(summary))]  # hostnames and versions are data
    return "\n".join(["## Neuron fleet summary", "", *lines, "", verdict_line(summary)]) + "\n"
