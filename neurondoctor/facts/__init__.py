"""Facts: plain typed data the collectors produce, the rules judge and the actions read (docs/contracts.md §2).

This package is the lowest layer: it imports nothing of the doctor's. Everything here serialises to JSON as its
fields; rules are tested by building these in memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from neurondoctor.facts.host import HostSnapshot
from neurondoctor.facts.python_env import PythonEnvironment


@dataclass(frozen=True)
class CollectorFailure:
    """A collector that could not collect what it is for (it raised, or could not read a file it needs).

    `collector` is the name checks declare in `Check.needs`; a check whose needs failed cannot judge and is
    reported as unknown instead of judging half the data (no driver package read is not no driver installed).
    """

    collector: str
    reason: str


@dataclass
class HostFacts:
    """What the doctor knows about the host: its identity and the §3 snapshot below Python."""

    root: str
    instance_type: Optional[str] = None
    instance_type_source: Optional[str] = None
    hostname: Optional[str] = None
    instance_id: Optional[str] = None
    snapshot: HostSnapshot = field(default_factory=HostSnapshot)
    collector_failures: list[CollectorFailure] = field(default_factory=list)

    @property
    def instance_family(self) -> Optional[str]:
        """`trn1` for `trn1.32xlarge`; trn1n instances run trn1 packages, trn2u ones trn2 packages."""
        if not self.instance_type or "." not in self.instance_type:
            return None
        family = self.instance_type.split(".", 1)[0].lower()
        return {"trn1n": "trn1", "trn2u": "trn2"}.get(family, family)


@dataclass(frozen=True)
class ListedEnvironment:
    """An environment discovery found that holds neither torch nor a Neuron package: listed, not judged."""

    path: str
    kind: str
    discovered_by: str


@dataclass
class Facts:
    """Everything collected for one `check` run."""

    host: HostFacts
    environments: list[PythonEnvironment] = field(default_factory=list)
    environ: dict[str, str] = field(default_factory=dict)
    listed_environments: list[ListedEnvironment] = field(default_factory=list)
    environments_cut_at: Optional[int] = None  # discovery stopped at its bound after this many environments

    def failed(self, collectors: tuple[str, ...]) -> list[CollectorFailure]:
        """The failures among these collectors, in the order they were recorded."""
        return [failure for failure in self.host.collector_failures if failure.collector in collectors]
