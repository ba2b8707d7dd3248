"""What a Slurm health check does with a verdict (pure: the verdict and the node's state in, one scontrol command or
none out), with LBNL NHC's drain semantics (docs/contracts.md §8; docs/health.md):

- unhealthy: drain with `neurondoctor: <worst id> <title> (+N more)`, at most 100 characters; a node already drained
  by us gets the new reason; a node drained or downed by anyone else (an operator, another tool) is left alone;
- ok or degraded: resume only a node whose reason starts `neurondoctor:`; never a node drained for another reason,
  never one pending a reboot or in maintenance (its owner resumes it);
- unknown: nothing changes (a check that could not run must not drain a cluster, nor resume a node it drained).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from neurondoctor.output_text import neutralize
from neurondoctor.report.health import STATE_DEGRADED, STATE_OK, STATE_UNHEALTHY, Health
from neurondoctor.rules.fix import command

REASON_PREFIX = "neurondoctor:"
REASON_LIMIT = 100
# Node state flags whose owner, not a health check, decides when the node comes back (scontrol's names).
_HANDS_OFF = ("REBOOT", "MAINT", "RESERVED", "POWER")
_STATE = re.compile(r"(?:^|\s)State=(\S+)")
_REASON = re.compile(r"^\s*Reason=(.*?)(?:\s+\[[^\]]*@[^\]]*\])?\s*$", re.MULTILINE)


@dataclass(frozen=True)
class SlurmNode:
    """A node as `scontrol show node NAME` shows it: its state flags (`IDLE+DRAIN` → {"IDLE", "DRAIN"}) and the
    reason it was drained or downed for, without the `[user@time]` Slurm appends."""

    name: str
    states: frozenset[str]
    reason: Optional[str]

    @property
    def drained(self) -> bool:
        return bool(self.states & {"DRAIN", "DRAINED", "DRAINING", "DOWN", "FAIL"})

    @property
    def ours(self) -> bool:
        return bool(self.reason) and str(self.reason).startswith(REASON_PREFIX)


def parse_scontrol_node(name: str, text: str) -> Optional[SlurmNode]:
    """The node in `scontrol show node NAME` output; None when the output has no State (not a Slurm node)."""
    state = _STATE.search(text)
    if state is None:
        return None
    reason = _REASON.search(text)
    value = reason.group(1).strip() if reason else ""
    states = frozenset(flag.rstrip("*~#!%$@^-") for flag in re.split(r"[+]", state.group(1).upper()) if flag)
    return SlurmNode(name, states, value if value and value != "(null)" else None)


def node_for_host(oneline_nodes: str, hostname: str) -> Optional[str]:
    """The NodeName whose NodeHostName is `hostname`, in `scontrol -o show node` output (one node per line): a
    Slurm node name need not be the host's name (`NodeName=trn1-a NodeHostname=ip-10-0-3-17`)."""
    for line in oneline_nodes.splitlines():
        fields = dict(token.split("=", 1) for token in line.split() if "=" in token)
        if fields.get("NodeHostName") == hostname and fields.get("NodeName"):
            return fields["NodeName"]
    return None


@dataclass(frozen=True)
class SlurmDecision:
    action: str  # "drain", "resume" or "none"
    why: str
    argv: tuple[str, ...] = ()

    def shown(self) -> str:
        return command(*self.argv).render() if self.argv else ""


def drain_reason(health: Health) -> str:
    """`neurondoctor: ND-DRV-001 title (+2 more)` cut to REASON_LIMIT characters; the verdict's reasons are the
    errors, worst first."""
    errors = [reason for reason in health.reasons if not reason.startswith("could not check:")]
    return capped_reason(REASON_PREFIX, errors)


def capped_reason(prefix: str, reasons: list[str]) -> str:
    """`PREFIX first reason (+N more)` within REASON_LIMIT characters, as one safe scontrol word (the health check's
    drains and the cluster preflight's)."""
    head = neutralize(reasons[0]) if reasons else "unhealthy"
    more = f" (+{len(reasons) - 1} more)" if len(reasons) > 1 else ""
    room = REASON_LIMIT - len(prefix) - 1 - len(more)
    text = head if len(head) <= room else head[: max(0, room - 3)].rstrip() + "..."
    # scontrol takes the reason as one argv word; a control (shown escaped above) or a quote must not reach it
    return f"{prefix} {text}{more}".replace('"', "'")


def decide(health: Health, node: SlurmNode) -> SlurmDecision:
    if health.state == STATE_UNHEALTHY:
        reason = drain_reason(health)
        if node.drained and not node.ours:
            return SlurmDecision("none", f"{node.name} is already drained by someone else "
                                         f"({node.reason or 'no reason'}): left alone")
        if node.drained and node.reason == reason:
            return SlurmDecision("none", f"{node.name} is already drained with this reason")
        return SlurmDecision("drain", f"{node.name} is unhealthy: drained",
                             ("scontrol", "update", f"nodename={node.name}", "state=drain", f"reason={reason}"))
    if health.state in (STATE_OK, STATE_DEGRADED):
        if not node.drained:
            return SlurmDecision("none", f"{node.name} is {health.state} and in service")
        if not node.ours:
            return SlurmDecision("none", f"{node.name} is drained for another reason ({node.reason or 'none given'}):"
                                         " left for its owner")
        flagged = sorted(flag for flag in node.states if flag.startswith(_HANDS_OFF))
        if flagged:
            return SlurmDecision("none", f"{node.name} is {'+'.join(flagged)}: left for its owner")
        return SlurmDecision("resume", f"{node.name} is {health.state} again: resumed",
                             ("scontrol", "update", f"nodename={node.name}", "state=resume"))
    return SlurmDecision("none", f"the verdict is unknown, nothing changed: {'; '.join(health.reasons)[:200]}")
