"""The cluster preflight's verdict and document (docs/fleet.md, `neurondoctor.fleet/1` plus `preflight`), pure.

Each node's state is its own report's verdict, raised by what the preflight found about it: a cross-node error
naming it, or a finding of its own that breaks a job across nodes (rules/fleet/consistency.py MULTI_NODE_FAULTS),
makes it unhealthy; a report whose word about itself is not taken (another node's name, a date in the future:
rules/fleet/identity.py) makes it at best unknown. A node whose doctor gave no report in its deadline is
`unreachable`, never dropped. Exit codes
follow the health verdict: 1 a node at fault (or an error of the whole allocation), else 3 a node unreachable or
unknown, else 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from neurondoctor import exit_codes
from neurondoctor.output_text import neutralize
from neurondoctor.report.fleet import FleetSummary, node_record
from neurondoctor.report.health import STATE_DEGRADED, STATE_OK, STATE_UNHEALTHY, STATE_UNKNOWN
from neurondoctor.report.reader import ReportDocument
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING
from neurondoctor.rules.fleet.consistency import MULTI_NODE_FAULTS, CrossNodeFinding, node_list, node_order

STATE_UNREACHABLE = "unreachable"
_RANK = {STATE_OK: 0, STATE_DEGRADED: 1, STATE_UNKNOWN: 2, STATE_UNREACHABLE: 2, STATE_UNHEALTHY: 3}


@dataclass
class NodeAnswer:
    """What one node's step gave: its report, or why there is none (`unreachable`: no answer in time or the step
    could not start there; `unknown`: it answered with something that is not a report)."""

    name: str
    report: Optional[ReportDocument] = None
    state: str = STATE_UNKNOWN
    reasons: list[str] = field(default_factory=list)
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)  # why its report's word about itself is not taken


@dataclass
class Preflight:
    answers: list[NodeAnswer]
    findings: list[CrossNodeFinding]
    drained: list[str] = field(default_factory=list)  # what --drain did, one line per node
    collectives: Optional[dict[str, Any]] = None

    def node_states(self) -> dict[str, dict[str, Any]]:
        states: dict[str, dict[str, Any]] = {}
        for answer in self.answers:
            state, reasons = answer.state, list(answer.reasons)
            if answer.problems:  # its report's word about itself is not taken: never ok on it
                state = state if _RANK.get(state, 0) >= _RANK[STATE_UNKNOWN] else STATE_UNKNOWN
                reasons = [*answer.problems, *reasons]
            if answer.report is not None:
                own = [f"{finding.id} {finding.title} (a job across nodes needs it)"
                       for finding in answer.report.findings if finding.id in MULTI_NODE_FAULTS]
                if own:
                    state, reasons = STATE_UNHEALTHY, [*own, *reasons]
            for cross in self.findings:
                if answer.name not in cross.nodes:
                    continue
                if cross.finding.severity == SEVERITY_ERROR:
                    state = STATE_UNHEALTHY
                elif cross.finding.severity == SEVERITY_WARNING and state == STATE_OK:
                    state = STATE_DEGRADED
                reasons.insert(0, f"{cross.finding.id} {cross.finding.title}")
            states[answer.name] = {"state": state, "reasons": reasons}
        return states

    def at_fault(self) -> list[str]:
        return sorted((name for name, node in self.node_states().items() if node["state"] == STATE_UNHEALTHY),
                      key=node_order)

    def exit_code(self) -> int:
        states = [node["state"] for node in self.node_states().values()]
        allocation_error = any(cross.finding.severity == SEVERITY_ERROR and not cross.nodes for cross in self.findings)
        if STATE_UNHEALTHY in states or allocation_error:
            return exit_codes.FINDINGS
        if STATE_UNREACHABLE in states or STATE_UNKNOWN in states:
            return exit_codes.UNKNOWN
        return exit_codes.OK

    def summary(self) -> FleetSummary:
        """The fleet summary of the nodes that answered, each under its Slurm NodeName (never its report's claim)."""
        return FleetSummary([node_record(answer.report, answer.name, answer.name, answer.problems)
                             for answer in self.answers if answer.report is not None],
                            identity=[(answer.name, answer.name, problem) for answer in self.answers
                                      for problem in answer.problems])

    def to_json(self) -> dict[str, Any]:
        document = self.summary().to_json()
        document["preflight"] = {
            "nodes": self.node_states(),
            "findings": [finding_json(cross) for cross in self.findings],
            "at_fault": self.at_fault(),
            "drained": list(self.drained),
            "seconds": {answer.name: round(answer.seconds, 2) for answer in self.answers},
        }
        if self.collectives is not None:
            document["preflight"]["collectives"] = self.collectives
        return document


def finding_json(cross: CrossNodeFinding) -> dict[str, Any]:
    finding = cross.finding
    return {"id": finding.id, "category": finding.category, "severity": finding.severity, "title": finding.title,
            "detail": finding.detail, "evidence": finding.evidence, "fix": finding.fix_lines, "docs": finding.docs,
            "nodes": list(cross.nodes), "majority": cross.majority}


def verdict_line(preflight: Preflight) -> str:
    code = preflight.exit_code()
    states = preflight.node_states()
    if code == exit_codes.FINDINGS:
        faulty = preflight.at_fault()
        return (f"Not ready: {len(faulty)} of {len(states)} node(s) at fault ({node_list(faulty)})" if faulty
                else "Not ready: the allocation as a whole is misconfigured (see above); no node is named")
    if code == exit_codes.UNKNOWN:
        unsure = sorted((name for name, node in states.items() if node["state"] in (STATE_UNREACHABLE, STATE_UNKNOWN)),
                        key=node_order)
        return f"Unknown: {node_list(unsure)} could not be judged; the others are consistent"
    return f"Ready: {len(states)} node(s) consistent, none at fault"


def render_preflight_text(preflight: Preflight) -> str:
    """Nodes not ok with their first reason, then each cross-node finding with its nodes and fix, then the verdict.
    Everything from the nodes is data: every line is neutralised."""
    lines = []
    states = preflight.node_states()
    width = max((len(name) for name in states), default=0)
    ok = sum(1 for node in states.values() if node["state"] == STATE_OK)
    lines.append(f"nodes: {len(states)} asked, {ok} ok")
    for name, node in sorted(states.items(), key=lambda item: (-_RANK.get(item[1]["state"], 0), node_order(item[0]))):
        if node["state"] != STATE_OK:
            first = node["reasons"][0] if node["reasons"] else ""
            more = f" (+{len(node['reasons']) - 1})" if len(node["reasons"]) > 1 else ""
            lines.append(f"  {name:<{width}}  {node['state']:<11}  {first[:160]}{more}")
    for cross in preflight.findings:
        finding = cross.finding
        lines += ["", f"{finding.severity.upper()} {finding.id}: {finding.title}"]
        if cross.nodes:
            lines.append(f"  nodes: {node_list(list(cross.nodes))}")
        lines += [f"  {line}" for line in finding.fix_lines]
    for line in preflight.drained:
        lines.append(f"slurm: {line}")
    if preflight.collectives is not None:
        lines.append(f"collectives: {preflight.collectives.get('summary', '')}")
    lines += ["", verdict_line(preflight)]
    return "\n".join(neutralize(line) for line in lines) + "\n"
