"""Cross-node consistency for one allocation, pure: the nodes' reports in, findings on the odd nodes
out, each naming the majority. A tie names no node (one finding says so, nothing drains). A node that already
reports the same fact about itself (ND-RES-004: fewer EFA interfaces than its instance type has) is not named again.

The root communicator gets two more looks: it must be set on every node and the same (ray #65070: never set), and
its address must be one the other nodes reach — a loopback address only where the whole allocation is one host (a
test cluster), a host name only when it resolves.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Optional

from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_INFO, Finding
from neurondoctor.rules.fix import Fix, command, note
from neurondoctor.rules.fleet import node_values
from neurondoctor.rules.fleet.node_values import ROOT_COMM, UNSET, ReportDocument
from neurondoctor.strict_numbers import MAX_DIGITS

REMOTE_COMMAND = "neurondoctor"
# Findings a node reports about itself that break a multi-node job although a single-node run survives them: the
# preflight treats them as faults (a job across nodes needs every EFA interface).
MULTI_NODE_FAULTS = frozenset({"ND-RES-002", "ND-RES-004"})


@dataclass(frozen=True)
class Aspect:
    """One thing every node must share: how it is read, the finding that names the odd nodes, and the node findings
    that already say the same about a node (it is then not named again)."""

    finding_id: str
    category: str
    label: str
    read: Callable[[ReportDocument], Optional[str]]
    why: str
    covered_by: frozenset[str] = frozenset()
    covered_by_category: Optional[str] = None


ASPECTS = (
    Aspect("ND-FLEET-001", "mixed-sdk-release", "Neuron release and packages", node_values.neuron_packages,
           "ranks on other runtimes, collectives or frameworks fail at the first collective or load other graphs"),
    Aspect("ND-FLEET-002", "mixed-sdk-release", "neuronx-cc", node_values.compiler,
           "ranks compile different graphs (\"mismatching number of cc ops … check if ranks are using the same "
           "neff\")"),
    Aspect("ND-FLEET-003", "env-var-misconfig", "the NEURON_CC_FLAGS the user sets", node_values.compiler_flags,
           "ranks compile different graphs and miss each other's cache entries"),
    Aspect("ND-FLEET-004", "env-var-misconfig", "NEURON_LOGICAL_NC_CONFIG", node_values.logical_nc_config,
           "ranks count their NeuronCores differently and the job's world size does not add up",
           covered_by=frozenset({"ND-ENV-003"})),
    Aspect("ND-FLEET-005", "env-var-misconfig", ROOT_COMM, node_values.root_communicator,
           "every rank must find the same root communicator, or the job hangs at its first collective"),
    Aspect("ND-FLEET-007", "env-var-misconfig", "the runtime and EFA variables", node_values.runtime_variables,
           "ranks set up their runtime and EFA transport differently"),
    Aspect("ND-FLEET-008", "compile-cache", "the compile cache", node_values.compile_cache,
           "the nodes compile into different caches: what one node compiled, the others compile again"),
    Aspect("ND-FLEET-009", "resource", "the instance type", node_values.instance_type,
           "the job's topology, core count and EFA bandwidth differ between ranks"),
    Aspect("ND-FLEET-010", "resource", "the EFA interfaces", node_values.efa_interfaces,
           "a node with fewer EFA interfaces slows or fails the job's collectives (\"likely not enough EFA "
           "devices\")", covered_by=MULTI_NODE_FAULTS),
    Aspect("ND-FLEET-011", "device-missing", "the Neuron devices", node_values.neuron_devices,
           "a node with fewer devices has fewer ranks than the job places on it",
           covered_by_category="device-missing"),
)
ADDRESS_ID = "ND-FLEET-006"

RULE_SET = RuleSet(rules=(), findings=(
    *(FindingSpec(aspect.finding_id, aspect.category, SEVERITY_ERROR,
                  f"{aspect.label} not the same on every node of the allocation") for aspect in ASPECTS),
    FindingSpec(ADDRESS_ID, "env-var-misconfig", SEVERITY_ERROR,
                f"{ROOT_COMM} is an address the other nodes cannot reach (loopback across hosts, a name that does not "
                "resolve), or set on no node", also=(SEVERITY_INFO,)),
))


@dataclass(frozen=True)
class CrossNodeFinding:
    """A finding of the whole allocation: the nodes that differ from the majority (none on a tie or for a value
    wrong everywhere), and the majority's value (None on a tie)."""

    finding: Finding
    nodes: tuple[str, ...]
    majority: Optional[str]


def _covered(aspect: Aspect, report: ReportDocument) -> bool:
    return any(finding.id in aspect.covered_by or finding.category == aspect.covered_by_category
               for finding in report.findings)


def _shown(value: str, limit: int = 120) -> str:
    return value if len(value) <= limit else value[: limit - 1] + "…"


def node_order(name: str) -> tuple[object, ...]:
    """trn-2 before trn-10: runs of ASCII digits in a node name (every odd part of the split) compare as numbers."""
    return tuple(int(part[:MAX_DIGITS]) if index % 2 else part
                 for index, part in enumerate(re.split(r"([0-9]+)", name)))


def node_list(names: Sequence[str], limit: int = 8) -> str:
    return ", ".join(names[:limit]) + (f" (+{len(names) - limit})" if len(names) > limit else "")


def _look_on_nodes(nodes: Sequence[str], remote: str) -> Fix:
    return Fix([command("srun", f"--nodelist={','.join(nodes)}", "--ntasks-per-node=1", remote, "check",
                        note="that node's own check, with the fix lines for it")])


def _compare(aspect: Aspect, reports: Mapping[str, ReportDocument], remote: str) -> Optional[CrossNodeFinding]:
    values = {name: value for name, report in reports.items() for value in [aspect.read(report)] if value is not None}
    counts = Counter(values.values())
    if len(counts) < 2:
        return None
    ranked = counts.most_common()
    split = {value: sorted((name for name, held in values.items() if held == value), key=node_order)
             for value, _ in ranked}
    evidence: dict[str, object] = {"values": split}
    if ranked[0][1] == ranked[1][1]:  # a tie: no majority, no node at fault, nothing drains
        groups = "; ".join(f"{_shown(value, 60)} on {len(names)}" for value, names in split.items())
        return CrossNodeFinding(Finding(
            id=aspect.finding_id, category=aspect.category, severity=SEVERITY_ERROR,
            title=f"{aspect.label} differs between nodes with no majority ({groups})",
            detail=f"{aspect.why}. With no majority the preflight cannot tell which nodes are wrong: none is named "
                   "or drained.", evidence=evidence,
            fix=Fix([note("Make {} the same on every node of the allocation.", aspect.label)])), (), None)
    majority = ranked[0][0]
    odd = sorted((name for name, value in values.items() if value != majority and not _covered(aspect, reports[name])),
                 key=node_order)
    if not odd:
        return None
    others = "; ".join(f"{_shown(value)} on {node_list(names)}" for value, names in split.items() if value != majority)
    return CrossNodeFinding(Finding(
        id=aspect.finding_id, category=aspect.category, severity=SEVERITY_ERROR,
        title=f"{aspect.label}: {others}, while {counts[majority]} node(s) have {_shown(majority)}",
        detail=f"{aspect.why}. Make it {_shown(majority)} on {node_list(odd)} where that node sets it (its "
               "TaskProlog, /etc/profile.d, its installed packages), or leave the node out of the job.",
        evidence={**evidence, "majority": majority}, fix=_look_on_nodes(odd, remote)), tuple(odd), majority)


def _loopback(host: str) -> bool:
    if host.lower() in ("localhost", "localhost.localdomain"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
        return True
    except ValueError:
        return False


def _root_address(values: Mapping[str, str], single_host: bool,
                  resolves: Callable[[str], Optional[bool]]) -> Optional[CrossNodeFinding]:
    """ND-FLEET-006 on the value most nodes share: set on no node (info), loopback across hosts, or a name that does
    not resolve where the preflight runs (errors).  It names no node: the value is the job's, not a node's."""
    counts = Counter(values.values())
    if not counts:
        return None
    value, _ = counts.most_common(1)[0]
    if value == UNSET:
        if len(counts) > 1:
            return None  # set on some nodes only: ND-FLEET-005 names the odd ones
        return CrossNodeFinding(Finding(
            id=ADDRESS_ID, category="env-var-misconfig", severity=SEVERITY_INFO,
            title=f"{ROOT_COMM} is set on no node of the allocation",
            detail="A job across nodes needs it (the host of rank 0 and a free port); set it in the job script "
                   "before the launcher, the same on every node.",
            fix=Fix([note("In the job script: export {}=<first node of the allocation>:<port>", ROOT_COMM)])), (),
            None)
    host = value.rsplit(":", 1)[0] if ":" in value else value
    problem = None
    if _loopback(host) and not single_host:
        problem = f"{value} is a loopback address: each node would look for the root communicator on itself"
    elif host and not _is_address(host) and resolves(host) is False:
        problem = f"{value}: the host name {host!r} does not resolve where the preflight runs"
    if problem is None:
        return None
    return CrossNodeFinding(Finding(
        id=ADDRESS_ID, category="env-var-misconfig", severity=SEVERITY_ERROR, title=f"{ROOT_COMM}={problem}",
        detail="Every rank connects to the root communicator at this address; set it to the address of the node "
               "that runs rank 0, as the other nodes reach it.", evidence={"value": value, "single_host": single_host},
        fix=Fix([note("In the job script: export {}=<first node of the allocation>:<port>", ROOT_COMM)])), (),
        value)


def compare_nodes(reports: Mapping[str, ReportDocument], single_host: bool,
                  resolves: Callable[[str], Optional[bool]], remote: str = REMOTE_COMMAND) -> list[CrossNodeFinding]:
    """Every cross-node finding of the answering nodes' reports (NodeName → report); fewer than two, none."""
    if len(reports) < 2:
        return []
    found = [finding for aspect in ASPECTS for finding in [_compare(aspect, reports, remote)] if finding is not None]
    address = _root_address({name: node_values.root_communicator(report) or UNSET
                             for name, report in reports.items()}, single_host, resolves)
    if address is not None:
        found.append(address)
    return found
