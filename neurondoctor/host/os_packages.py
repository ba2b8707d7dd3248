"""Installed Neuron OS packages: `var/lib/dpkg/status` parsed directly (no subprocess), or `rpm --root`.

Only `aws-neuron*` packages (and EFA's) are kept: the doctor judges the Neuron stack, and a dpkg status file
on a full host holds thousands of stanzas.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

from neurondoctor.facts.host import OsPackage
from neurondoctor.facts.names import NEURON_OS_PACKAGE_PREFIXES
from neurondoctor.host.rootfs import RootFS

if TYPE_CHECKING:  # the runner is imported only when a command runs (`rpm` on an rpm host)
    from neurondoctor.command_runner import CommandResult

RPM_TIMEOUT = 10.0
_NEURON_NAME = "(?:" + "|".join(NEURON_OS_PACKAGE_PREFIXES) + r")\S*"
_STANZA = re.compile(r"^Package: *(" + _NEURON_NAME + r")[ \t]*\n(.*?)(?=\n\n|\nPackage:|\Z)", re.M | re.S)


# dpkg's package states (dpkg-query(1)) whose files are on disk. `config-files` (removed, configuration kept) and
# `not-installed` are absent; the want flag (`install`, `hold`, `deinstall`) does not change what is on disk.
PRESENT_STATES = frozenset({"installed", "half-configured", "unpacked", "half-installed", "triggers-awaited",
                            "triggers-pending"})


def _neuron_stanzas(text: str) -> list[re.Match[str]]:
    """The stanzas of Neuron packages. The `Package:` lines are found with `str.find` and only a Neuron one is
    matched by `_STANZA` where it starts: scanning a full host's status file (thousands of stanzas) with the
    pattern at every line cost `check` 5 ms a run; the matches are the ones `_STANZA.finditer` gives
    (tests/test_host_parsers.py compares them)."""
    found: list[re.Match[str]] = []
    start: int = 0 if text.startswith("Package:") else text.find("\nPackage:") + 1 or -1
    while start >= 0:
        end = text.find("\n", start)
        inside = bool(found) and start < found[-1].end()  # a line the previous stanza took in, as finditer does
        if not inside and text[start + 8:end if end != -1 else len(text)].lstrip(" ").startswith(
                NEURON_OS_PACKAGE_PREFIXES):
            match = _STANZA.match(text, start)
            if match is not None:
                found.append(match)
        start = text.find("\nPackage:", start) + 1 or -1
    return found


def parse_dpkg_status(text: str) -> dict[str, OsPackage]:
    """Neuron packages whose files are on disk, with their dpkg state; garbage stanzas are skipped."""
    packages: dict[str, OsPackage] = {}
    for match in _neuron_stanzas(text):
        fields: dict[str, str] = {}
        for line in match.group(2).splitlines():
            key, separator, value = line.partition(":")
            if separator and not key.startswith((" ", "\t")):
                fields[key.strip().lower()] = value.strip()
        status = fields.get("status", "").split()
        version = fields.get("version")
        if len(status) == 3 and status[2] in PRESENT_STATES and version:
            packages[match.group(1)] = OsPackage(match.group(1), version, "dpkg", status[2], held=status[0] == "hold")
    return packages


def parse_rpm_query(text: str) -> dict[str, OsPackage]:
    """`NAME<TAB>VERSION-RELEASE` lines from `rpm -qa --qf`."""
    packages: dict[str, OsPackage] = {}
    for line in text.splitlines():
        name, separator, version = line.partition("\t")
        if separator and name.startswith(NEURON_OS_PACKAGE_PREFIXES) and version.strip():
            packages[name.strip()] = OsPackage(name.strip(), version.strip(), "rpm")
    return packages


DNF_VERSIONLOCK = "/etc/dnf/plugins/versionlock.list"  # `dnf versionlock add` (python3-dnf-plugin-versionlock)


def rpm_database_present(fs: RootFS) -> bool:
    return fs.exists("/var/lib/rpm") or fs.exists("/usr/lib/sysimage/rpm")


def rpm_command(fs: RootFS) -> list[str]:
    return ["rpm", "--root", str(fs.root), "-qa", "--qf", "%{NAME}\\t%{VERSION}-%{RELEASE}\\n"]


DPKG_STATUS = "/var/lib/dpkg/status"


class PackageDatabaseUnreadable(OSError):
    """The package database exists but cannot be read: which packages are installed is unknown, not "none"."""


def read_dpkg_status(fs: RootFS) -> Optional[str]:
    """The text of dpkg's status file, or None when the host has no dpkg database; raises
    PackageDatabaseUnreadable when it exists and cannot be read (permissions, a directory in its place), so no
    rule mistakes it for an empty one."""
    if not fs.lexists(DPKG_STATUS):
        return None
    try:
        text = fs.read_text(DPKG_STATUS, limit=64 << 20)
    except OSError as error:
        reason = error.strerror or str(error)
        raise PackageDatabaseUnreadable(f"could not read the package database {DPKG_STATUS}: {reason}") from error
    return text


def packages_from_rpm(result: CommandResult) -> dict[str, OsPackage]:
    return parse_rpm_query(result.stdout) if result.ok else {}
