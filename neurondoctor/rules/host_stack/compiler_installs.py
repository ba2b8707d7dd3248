"""Which neuronx-cc each environment has installed: a compile cache keeps one folder per compiler version, and the
cache rules, the disk-space rule and `cache prune` all judge those folders against the compilers in use here."""

from __future__ import annotations

from collections.abc import Iterable

from neurondoctor.facts.python_env import PythonEnvironment
from neurondoctor.neuron_version import normalize_neuron_version


def compiler_environments(environments: Iterable[PythonEnvironment]) -> list[tuple[PythonEnvironment, str]]:
    """(environment, its neuronx-cc version) for every environment that has one (check's, or `cache prune`'s)."""
    found = []
    for env in environments:
        dist = env.effective_distributions().get("neuronx-cc")
        if dist is not None:
            found.append((env, dist.version))
    return found


def installed_compiler_versions(envs: Iterable[tuple[PythonEnvironment, str]]) -> set[str]:
    """The installed compilers' versions as a cache folder names them (`2.15.141.0`, no build suffix)."""
    return {normalize_neuron_version(version) for _, version in envs}
