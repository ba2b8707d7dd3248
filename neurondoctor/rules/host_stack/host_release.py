"""Which Neuron release the host's OS packages are from: driver, runtime, collectives and tools.

The runtime library anchors the verdict (it is what every process loads); the others narrow it or stand
out (docs/neuron-facts.md §3.1 doctor rule: all four must be one manifest release).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from neurondoctor.facts.host import HostSnapshot
from neurondoctor.neuron_version import normalize_neuron_version
from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.rules.python_stack.release_detection import narrow_releases

HOST_STACK = ("aws-neuronx-runtime-lib", "aws-neuronx-dkms", "aws-neuronx-collectives", "aws-neuronx-tools")


@dataclass
class HostRelease:
    """The Neuron release the host's own packages place it in: the releases they agree on, and those that do not."""

    versions: dict[str, str] = field(default_factory=dict)
    releases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    agreed: list[str] = field(default_factory=list)
    outliers: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)

    @property
    def release(self) -> Optional[str]:
        return self.agreed[0] if self.agreed else None


def detect_host_release(snapshot: HostSnapshot, catalog: ReleaseCatalog) -> HostRelease:
    verdict = HostRelease()
    for name in HOST_STACK:
        package = snapshot.packages.get(name)
        if package is None:
            continue
        version = normalize_neuron_version(package.version)
        verdict.versions[name] = version
        verdict.releases[name] = tuple(catalog.releases_with(name, version))
        if not verdict.releases[name]:
            verdict.unknown.append(name)
    known = [name for name in HOST_STACK if verdict.releases.get(name)]
    unpublished = [frozenset(release for release in catalog.partial if catalog.not_known_in(release, name))
                   for name in known]
    agreed, outliers = narrow_releases([verdict.releases[name] for name in known], unpublished=unpublished)
    verdict.agreed = agreed
    verdict.outliers = [known[index] for index in outliers]
    return verdict
