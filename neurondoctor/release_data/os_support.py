"""Which OS releases each Neuron release was tested on, from `manifests/os-support.json`.

AWS publishes one table for the runtime and one for the driver with each release from 2.28.0
(release-notes/components/runtime.rst); a table holds until the next one. This module only answers
questions about those tables; the rules decide what an answer means for a host.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Optional

from neurondoctor.neuron_version import release_tuple

INSTANCE_FAMILIES = ("inf2", "trn1", "trn2")
OS_NAMES = {"ubuntu": "Ubuntu", "amzn": "Amazon Linux", "rocky": "Rocky Linux", "rhel": "RHEL",
            "debian": "Debian"}


@dataclass(frozen=True)
class TestedOs:
    """One row of a release's tested-OS table (runtime or driver): the OS, its kernel and GLIBC, the instances."""

    os: str
    version: str
    kernel: str
    glibc: str
    instances: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{OS_NAMES.get(self.os, self.os)} {self.version}"


@dataclass(frozen=True)
class OsEnd:
    """A documented end of support: the last release line (`2.19`) that supports this OS for `part`."""

    os: str
    version: str
    last_line: str
    severity: str
    part: str
    replacement: str
    source: str


@dataclass(frozen=True)
class GlibcNeed:
    """A package whose binaries need a newer GLIBC from a version on, and the last version (and release) without."""

    package: str
    from_version: str
    glibc: str
    last_version_without: str
    release_without: str
    binaries: str
    source: str


def os_matches(os_id: str, version_id: str, os: str, version: str) -> bool:
    """`rocky 9.4` is Rocky Linux 9; `amzn 2023` is not Amazon Linux 2; `ubuntu 22.04` exactly."""
    return os_id == os and (version_id == version or version_id.startswith(version + "."))


def os_key(os_id: str, version_id: str) -> str:
    """The `os_glibc` key for this OS release: `ubuntu 22.04`, `rocky 9` for 9.4."""
    major = version_id.split(".")[0] if os_id in ("rocky", "rhel", "debian") else version_id
    return f"{os_id} {major}"


@dataclass(frozen=True)
class FrameworkOs:
    """A framework's own support matrix (TorchNeuron's in 2.33): the OS releases it supports, those whose support
    ended, and the machine architectures it publishes wheels for."""

    package: str
    stack: str
    from_release: str
    arch: tuple[str, ...]
    supported: tuple[tuple[str, str], ...]
    ended: tuple[tuple[str, str], ...]
    source: str

    def verdict(self, os_id: str, version_id: str) -> Optional[str]:
        """`ended`, `untested` or None (supported) for this OS release."""
        if any(os_matches(os_id, version_id, os, version) for os, version in self.ended):
            return "ended"
        if any(os_matches(os_id, version_id, os, version) for os, version in self.supported):
            return None
        return "untested"


class OsSupport:
    """Pure lookups over the os-support document (an empty document answers "no data" everywhere)."""

    def __init__(self, document: dict[str, Any]) -> None:
        self._tables = sorted(document.get("tables", []), key=lambda table: release_tuple(table["from_release"]))
        self.ends = [OsEnd(**{key: end[key] for key in (item.name for item in fields(OsEnd))}) for end in
                     document.get("os_ends", [])]
        self.glibc_needs = [GlibcNeed(**{key: need.get(key, "") for key in (item.name for item in fields(GlibcNeed))})
                            for need in document.get("glibc_requirements", [])]
        self._os_glibc = {key: value for key, value in document.get("os_glibc", {}).items() if key != "about"}
        self.framework_os = [FrameworkOs(
            str(row["package"]), str(row["stack"]), str(row["from_release"]), tuple(row.get("arch", [])),
            tuple((str(item["os"]), str(item["version"])) for item in row.get("supported", [])),
            tuple((str(item["os"]), str(item["version"])) for item in row.get("ended", [])), str(row["source"]))
            for row in document.get("framework_os", [])]

    def framework_matrix(self, package: str, stack: str, release: str) -> Optional[FrameworkOs]:
        """The newest matrix of this framework stack published at or before `release`."""
        found = None
        for row in self.framework_os:
            if row.package == package and row.stack == stack and \
                    release_tuple(row.from_release) <= release_tuple(release):
                found = row
        return found

    def table_for(self, release: str) -> Optional[dict[str, Any]]:
        """The newest table published at or before `release`; None before the first (2.28.0)."""
        found = None
        for table in self._tables:
            if release_tuple(table["from_release"]) <= release_tuple(release):
                found = table
        return found

    def tested(self, release: str, part: str, family: Optional[str]) -> list[TestedOs]:
        """Rows of `part` (runtime or driver) for `release`, for this instance family (all rows if unknown)."""
        table = self.table_for(release)
        if table is None:
            return []
        rows = [TestedOs(row["os"], row["version"], row["kernel"], row["glibc"], tuple(row["instances"]))
                for row in table[part]]
        return [row for row in rows if family not in INSTANCE_FAMILIES or family in row.instances]

    def releases_testing(self, os_id: str, version_id: str, part: str, family: Optional[str]) -> list[str]:
        """`from_release` of every table whose `part` lists this OS (oldest first)."""
        found = []
        for table in self._tables:
            if any(os_matches(os_id, version_id, row.os, row.version)
                   for row in self.tested(table["from_release"], part, family)):
                found.append(str(table["from_release"]))
        return found

    def end_for(self, os_id: str, version_id: str, release: str) -> Optional[OsEnd]:
        """The documented end this release lies past, if any."""
        for end in self.ends:
            if os_matches(os_id, version_id, end.os, end.version) and (
                    release_tuple(release)[:2] > release_tuple(end.last_line)[:2]):
                return end
        return None

    def shipped_glibc(self, os_id: str, version_id: str) -> Optional[str]:
        """The GLIBC this OS release ships (for a host whose C library could not be read)."""
        return self._os_glibc.get(os_key(os_id, version_id))
