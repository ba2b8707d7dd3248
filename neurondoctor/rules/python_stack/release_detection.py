"""Which Neuron release an environment is on: the releases its Neuron packages agree on.

The anchor (torch-neuronx, else the native stack, else neuronx-cc, …: `compat.json` `anchor_order`)
starts the candidate set; each further package narrows it when it shares a release, or is an outlier
when it shares none. A package a release does not list is not a mismatch (2.32.0 ships no
torch-neuronx; the official 2.32 install carries 2.31's over: `compat.json` `carryover`). Nor is a package whose
version a release known in part does not publish (2.34.0's compiler): it neither places the environment in that
release nor takes it out, once a package the release does list has placed it there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from neurondoctor.facts.python_env import Distribution, PythonEnvironment
from neurondoctor.neuron_version import release_tuple
from neurondoctor.release_data.catalog import ReleaseCatalog


@dataclass(frozen=True)
class PackageReleases:
    """An installed Neuron package and the releases that list its exact version."""

    dist: Distribution
    releases: tuple[str, ...]


@dataclass
class EnvironmentRelease:
    """The release verdict for one environment."""

    packages: list[PackageReleases] = field(default_factory=list)
    anchor: Optional[PackageReleases] = None
    agreed: list[str] = field(default_factory=list)
    outliers: list[PackageReleases] = field(default_factory=list)
    unknown: list[PackageReleases] = field(default_factory=list)
    target: Optional[str] = None

    @property
    def release(self) -> Optional[str]:
        """The newest agreed release (or the target), None when the environment has no Neuron packages."""
        if self.target:
            return self.target
        return self.agreed[0] if self.agreed else None

    @property
    def consistent(self) -> bool:
        return not self.outliers

    def describe(self) -> str:
        """`2.31.1`, `2.31.0–2.31.1`, or `none` for a one-line summary."""
        if self.target:
            return self.target
        if not self.agreed:
            return "none"
        if len(self.agreed) == 1:
            return self.agreed[0]
        return f"{self.agreed[-1]}–{self.agreed[0]}"


def neuron_distributions(env: PythonEnvironment, catalog: ReleaseCatalog) -> list[Distribution]:
    """The environment's effective Neuron pip packages; placeholders are judged elsewhere."""
    neuron_names = catalog.neuron_pip_packages()
    return [dist for name, dist in sorted(env.effective_distributions().items())
            if name in neuron_names and not dist.placeholder]


def _anchor_rank(name: str, order: list[str]) -> int:
    return order.index(name) if name in order else len(order)


def detect_release(env: PythonEnvironment, catalog: ReleaseCatalog,
                   target: Optional[str] = None) -> EnvironmentRelease:
    """Pure: the releases the environment's Neuron packages agree on, and the ones that do not."""
    verdict = EnvironmentRelease(target=target)
    for dist in neuron_distributions(env, catalog):
        package = PackageReleases(dist, tuple(catalog.releases_with(dist.name, dist.version)))
        verdict.packages.append(package)
        if not package.releases:
            verdict.unknown.append(package)
    order = [name for name in catalog.compat.get("anchor_order", [])]
    known = sorted((package for package in verdict.packages if package.releases),
                   key=lambda package: (_anchor_rank(package.dist.name, order), package.dist.name))
    if not known and target is None:
        return verdict
    unpublished = [frozenset(release for release in catalog.partial if catalog.not_known_in(release, package.dist.name))
                   for package in known]
    agreed, outlier_indexes = narrow_releases([package.releases for package in known], target, unpublished)
    verdict.anchor = known[0] if target is None else None
    verdict.outliers = [known[index] for index in outlier_indexes]
    verdict.agreed = agreed
    return verdict


def narrow_releases(candidates: list[tuple[str, ...]], target: Optional[str] = None,
                    unpublished: Optional[list[frozenset[str]]] = None) -> tuple[list[str], list[int]]:
    """(agreed releases newest first, indexes of the outliers): the first candidate (or the target) starts
    the set, each later one narrows it when they share a release and is an outlier when they share none.
    `unpublished[i]`: releases known in part that do not say which version of candidate i they ship; one already
    agreed stays agreed beside it (never added by it)."""
    if target is not None:
        agreed = {target}
        start = 0
    elif candidates:
        agreed = set(candidates[0])
        start = 1
    else:
        return [], []
    outliers = []
    for index in range(start, len(candidates)):
        shared = agreed & (set(candidates[index]) | (unpublished[index] if unpublished else frozenset()))
        if shared:
            agreed = shared
        else:
            outliers.append(index)
    return sorted(agreed, key=release_tuple, reverse=True), outliers
