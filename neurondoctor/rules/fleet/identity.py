"""Which node a report is, from how it arrived, never from what it says about itself (pure).

A report's `node.hostname` and `generated_at` are the node's own word: a report that names another node would hide
that node's fault or blame a healthy one, and one dated next year would always be "the newest". So a node is what
the transport vouches for: the file a report came in (`fleet summarize`: its path under the directory given, without
`.json`) or the Slurm node srun ran the step on (`fleet check`). Only a JSON line, which arrives with many others in
one file, has no name but its claim. What a report says about itself is then checked against the others, and a
report whose word is not taken is named as such (its node's verdict is then at best unknown), never merged:

- its hostname is another node's name (or one of that node's other names, unless this node shares it: several
  slurmd on one host share its NodeHostName), or the same as another node's report claims (two nodes that call
  themselves the same);
- two JSON lines claim the same node, or a line claims a node a file is: each is judged apart, under its own place;
- its date is in the future (beyond FUTURE_SKEW) or is no time at all.

The same node reported twice by the transport (`day1/trn-3.json` and `day2/trn-3.json`) is one node: its newest
report whose date is believable counts, and the others are named as not counted.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Optional

# A node's clock may run a little ahead of the machine that reads its report; more than this is a date to name.
FUTURE_SKEW = timedelta(minutes=10)
_TIME = re.compile(r"([0-9]{4}-[0-9]{2}-[0-9]{2})[T ]([0-9]{2}:[0-9]{2}:[0-9]{2})(\.[0-9]{1,9})?"
                   r"(Z|[+-][0-9]{2}:[0-9]{2})?")


@dataclass(frozen=True)
class Arrival:
    """One report as it arrived: where from, the name the transport vouches for (None for a JSON line), what the
    report claims, and the other names the transport knows the node by (Slurm's NodeAddr and NodeHostName)."""

    where: str
    vouched: Optional[str]
    claimed: Optional[str]
    generated_at: str
    aliases: tuple[str, ...] = ()


@dataclass
class Identity:
    """The node an arrival is judged as, whether it counts (False: an older report of the same node), and why its
    word about itself is not taken (empty when it is)."""

    name: str
    counted: bool = True
    problems: list[str] = field(default_factory=list)


def report_time(text: str) -> Optional[datetime]:
    """`generated_at` as a time (UTC when no zone is given); None when it is no time."""
    match = _TIME.fullmatch(text.strip())
    if match is None:
        return None
    day, clock, fraction, zone = match.groups()
    zone = "+00:00" if zone in (None, "Z") else zone
    try:
        return datetime.fromisoformat(f"{day}T{clock}{(fraction or '')[:7]}{zone}")
    except ValueError:  # 2026-13-45
        return None


def date_problem(generated_at: str, now: datetime) -> Optional[str]:
    """Why a report's date is not believed, or None."""
    when = report_time(generated_at)
    if when is None:
        return f"its date {generated_at[:40]!r} is not a time"
    if when > now + FUTURE_SKEW:
        return f"its date {generated_at[:40]} is in the future"
    return None


def _newest_first(arrival: Arrival, now: datetime) -> tuple[bool, datetime]:
    """The order in which the reports of one node are taken: a believable date first, then the latest."""
    when = report_time(arrival.generated_at)
    believable = when is not None and when <= now + FUTURE_SKEW
    return believable, when or datetime.min.replace(tzinfo=timezone.utc)


def identities(arrivals: Sequence[Arrival], now: datetime) -> list[Identity]:
    """The identity of each arrival, in order (see the module's docstring)."""
    found = [Identity(arrival.vouched or "") for arrival in arrivals]
    vouched: dict[str, list[int]] = {}
    for index, arrival in enumerate(arrivals):
        if arrival.vouched is not None:
            vouched.setdefault(arrival.vouched, []).append(index)
    counted_at: dict[str, str] = {}  # vouched node -> where its counted report came from
    for name, indexes in vouched.items():  # the same node twice: its newest believable report counts
        newest = max(indexes, key=lambda index: _newest_first(arrivals[index], now))
        counted_at[name] = arrivals[newest].where
        for index in indexes:
            if index != newest:
                found[index].counted = False
                found[index].problems.append(f"an older report of {name} than {arrivals[newest].where}: not counted")
    owner: dict[str, set[str]] = {}  # a name or alias -> the nodes known by it (several slurmd on one host share one)
    for name, indexes in vouched.items():
        for alias in {name, *(alias for index in indexes for alias in arrivals[index].aliases)}:
            owner.setdefault(alias, set()).add(name)
    claimed_by: dict[str, int] = {}
    for index, arrival in enumerate(arrivals):
        identity = found[index]
        if arrival.vouched is None:
            _judge_line(arrival, index, found, owner, counted_at, claimed_by, arrivals)
        elif arrival.claimed and arrival.vouched not in owner.get(arrival.claimed, {arrival.vouched}):
            others = ", ".join(sorted(owner[arrival.claimed]))
            identity.problems.append(f"its report says it is {arrival.claimed!r}, the name of another node "
                                     f"({others}): judged as {arrival.vouched}")
        if identity.counted:
            problem = date_problem(arrival.generated_at, now)
            if problem:
                identity.problems.append(problem)
    _same_claims(arrivals, found, owner)
    return found


def _judge_line(arrival: Arrival, index: int, found: list[Identity], owner: dict[str, set[str]],
                counted_at: dict[str, str], claimed_by: dict[str, int], arrivals: Sequence[Arrival]) -> None:
    """A JSON line: named by its claim, unless a file is that node or another line claims it too; then it is judged
    apart, under its own place, and named (both lines, when two claim one node)."""
    claim = arrival.claimed or arrival.where
    identity = found[index]
    if claim in owner:
        identity.name = arrival.where
        nodes = ", ".join(counted_at[name] for name in sorted(owner[claim]))
        identity.problems.append(f"its report says it is {claim!r}, which {nodes} is: judged apart")
    elif claim in claimed_by:
        identity.name = arrival.where
        first = claimed_by[claim]
        identity.problems.append(f"its report says it is {claim!r}, as {arrivals[first].where}'s does: judged apart")
        found[first].problems.append(f"its report says it is {claim!r}, as {arrival.where}'s does: judged apart")
    else:
        identity.name = claim
        claimed_by[claim] = index


def _same_claims(arrivals: Sequence[Arrival], found: list[Identity], owner: dict[str, set[str]]) -> None:
    """Counted reports of different vouched nodes that claim one hostname no node is named by (a cloned image's
    /etc/hostname, a cached report served to two nodes): each is named."""
    by_claim: dict[str, list[int]] = {}
    for index, arrival in enumerate(arrivals):
        if arrival.vouched is not None and found[index].counted and arrival.claimed and arrival.claimed not in owner:
            by_claim.setdefault(arrival.claimed, []).append(index)
    for claim, indexes in by_claim.items():
        if len({arrivals[index].vouched for index in indexes}) < 2:
            continue
        for index in indexes:
            others = ", ".join(found[other].name for other in indexes if other != index)
            found[index].problems.append(f"its report says it is {claim!r}, as the report of {others} does")
