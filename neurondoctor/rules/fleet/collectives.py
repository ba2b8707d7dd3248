"""Judging nccom-test all-reduce results within each node and between node pairs, pure.

A node's own run (all its NeuronCores) and each pair's run (the two nodes over EFA) give a bus bandwidth at the
largest size, or a failure. AWS publishes no nccom-test floor per instance (the user guide's figures are examples,
"not up-to-date", their instance not stated; docs/neuron-facts.md §9), so a run is slow when it is below
SLOW_FRACTION of the median of the same kind of run on the other nodes or pairs; a floor for an instance type, where
one is given, is a second bar.

The pairs run in a ring (each node with the next, the last with the first), so every node of three or more is in
two pairs, and a node at fault spoils both: `judge_collectives` bisects the runs of bad pairs to the nodes that
explain them. Two nodes make one pair, which cannot tell which one is at fault.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from typing import Optional, TypeVar

from neurondoctor.host.nccom_test import NccomResult
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Fix, command, note
from neurondoctor.rules.fleet.consistency import CrossNodeFinding, node_list

SLOW_FRACTION = 0.7
FAILS_ID, SLOW_ID, LINK_ID = "ND-FLEET-012", "ND-FLEET-013", "ND-FLEET-014"
RULE_SET = RuleSet(rules=(), findings=(
    FindingSpec(FAILS_ID, "hardware-error", SEVERITY_ERROR,
                "nccom-test all-reduce fails on a node, or between it and every node it was paired with"),
    FindingSpec(SLOW_ID, "resource", SEVERITY_WARNING,
                "all-reduce bus bandwidth of a node far below the other nodes' (or below its instance's floor)"),
    FindingSpec(LINK_ID, "resource", SEVERITY_WARNING,
                "all-reduce between two nodes slow or failing while each does well with its other partner"),
))

Pair = tuple[str, str]
Key = TypeVar("Key", str, Pair)


def ring_pairs(nodes: Sequence[str]) -> list[Pair]:
    """Each node with the next, the last with the first (two nodes: one pair; one node: none)."""
    if len(nodes) < 2:
        return []
    if len(nodes) == 2:
        return [(nodes[0], nodes[1])]
    return [(nodes[index], nodes[(index + 1) % len(nodes)]) for index in range(len(nodes))]


def pair_rounds(pairs: Sequence[Pair]) -> list[list[Pair]]:
    """The pairs in rounds where no node is in two pairs at once (a node's EFA is measured alone)."""
    rounds: list[list[Pair]] = []
    for pair in pairs:
        for group in rounds:
            if not any(set(pair) & set(other) for other in group):
                group.append(pair)
                break
        else:
            rounds.append([pair])
    return rounds


def _bad(results: Mapping[Key, NccomResult], floor: Optional[float] = None) -> dict[Key, str]:
    """key → why its run is bad: it failed, or its bandwidth is below SLOW_FRACTION of the others' median (or below
    the floor)."""
    bandwidths = {key: bandwidth for key, result in results.items()
                  for bandwidth in [result.largest_busbw_gbs] if result.ok and bandwidth is not None}
    bad: dict[Key, str] = {key: "fails: " + "; ".join(result.failures)[:200]
                           for key, result in results.items() if not result.ok}
    for key, bandwidth in bandwidths.items():
        others = [value for other, value in bandwidths.items() if other != key]
        median = statistics.median(others) if others else None
        if median and bandwidth < SLOW_FRACTION * median:
            bad[key] = f"slow: {bandwidth:.1f} GB/s, the others' median {median:.1f} GB/s"
        elif floor is not None and bandwidth < floor:
            bad[key] = f"slow: {bandwidth:.1f} GB/s, below the floor of {floor:.1f} GB/s"
    return bad


def _finding(finding_id: str, nodes: Sequence[str], title: str, detail: str) -> CrossNodeFinding:
    """One finding on `nodes`; its fix runs their own check (the device and EFA findings with their fixes)."""
    severity = SEVERITY_ERROR if finding_id == FAILS_ID else SEVERITY_WARNING
    category = "hardware-error" if finding_id == FAILS_ID else "resource"
    fix = Fix([note("See the node's own check and its NEURON_HW_ERR lines; a node that fails again is stopped and "
                    "started (or replaced) by its operator."),
               command("srun", f"--nodelist={','.join(nodes)}", "--ntasks-per-node=1", "neurondoctor", "check")])
    return CrossNodeFinding(Finding(id=finding_id, category=category, severity=severity, title=title,
                                    detail=detail, fix=fix), tuple(nodes), None)


def _runs(ring: Sequence[str], bad: Mapping[Pair, str]) -> list[list[str]]:
    """The maximal runs of consecutive bad pairs round the ring, each as its nodes in order (k pairs, k+1 nodes);
    the whole ring bad is one run that starts and ends at the same node."""
    pairs = ring_pairs(ring)
    flags = [pair in bad for pair in pairs]
    if not any(flags):
        return []
    if all(flags):
        return [[*ring, ring[0]]] if len(pairs) > 1 else [list(pairs[0])]
    start = flags.index(False) + 1  # begin after a good pair, so no run wraps over the start
    runs: list[list[str]] = []
    for offset in range(len(pairs)):
        index = (start + offset) % len(pairs)
        if not flags[index]:
            continue
        first, second = pairs[index]
        if runs and runs[-1][-1] == first and flags[(index - 1) % len(pairs)]:
            runs[-1].append(second)
        else:
            runs.append([first, second])
    return runs


def judge_collectives(within: Mapping[str, NccomResult], pairs: Mapping[Pair, NccomResult], ring: Sequence[str],
                      within_floor: Optional[float] = None) -> list[CrossNodeFinding]:
    """The findings of the runs: each node's own run, then the pairs round the ring, bisected. A run of an even
    number of consecutive bad pairs has one smallest set of nodes that explains it (every second node: a node at
    fault spoils both its pairs); an odd run cannot tell which of its nodes (one bad pair: the link, or either node).
    `within_floor` is a published floor for a node's own run, in GB/s (none is published yet)."""
    found: list[CrossNodeFinding] = []
    for node, why in _bad(within, within_floor).items():
        found.append(_finding(FAILS_ID if why.startswith("fails") else SLOW_ID, [node],
                              f"all-reduce within {node} {why}",
                              "Its own NeuronCores' collectives: the device, its driver or its runtime."))
    bad_pairs = _bad(pairs)
    for run in _runs(ring, bad_pairs):
        steps = list(zip(run, run[1:]))
        whys = {pair: bad_pairs.get(pair) or bad_pairs.get((pair[1], pair[0]), "") for pair in steps}
        if len(steps) == len(ring) and len(ring) > 2:
            found.append(_finding(FAILS_ID, [], f"all-reduce fails or is slow between every pair of nodes "
                                  f"({next(iter(whys.values()))})", "Not one node: the multi-node set-up (EFA, "
                                  "its security group, the root communicator) on every node."))
            continue
        if len(steps) % 2:
            label = "the link between" if len(steps) == 1 else "a run of bad pairs through"
            found.append(_finding(LINK_ID, run, f"all-reduce {label} {node_list(run)}: "
                                  f"{'; '.join(whys.values())}"[:300],
                                  "The pairs cannot tell which of these nodes, or the path between them, is at "
                                  "fault: run the preflight again with other nodes beside them."))
            continue
        for index in range(1, len(run), 2):
            node, its = run[index], [whys[steps[index - 1]], whys[steps[index]]]
            failing = any(text.startswith("fails") for text in its)
            found.append(_finding(FAILS_ID if failing else SLOW_ID, [node], f"all-reduce between {node} and both "
                                  f"its neighbours {'fails' if failing else 'is slow'} ({'; '.join(its)})"[:300],
                                  "Both its pairs are bad while their other nodes do well with theirs: its EFA "
                                  "interfaces, their cabling or its network configuration."))
    return found
