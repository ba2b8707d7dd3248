"""Installed Neuron OS packages: `var/lib/dpkg/status` parsed directly (no subprocess), or `rpm --root`.

Only `aws-neuron*` packages (and EFA's) are kept: the doctor judges the Neuron stack, and a dpkg status file
on a full host holds thousands of stanzas.
"""

from __future__ import annotations

import re

from neurondoctor.command_runner import CommandResult
from neurondoctor.host.host_facts import OsPackage
from neurondoctor.host.rootfs import RootFS

NEURON_PACKAGE_PREFIXES = ("aws-neuron", "efa")
RPM_TIMEOUT = 10.0
_STANZA = re.compile(r"^Package: *((?:aws-neuron|efa)\S*)[ \t]*\n(.*?)(?=\n\n|\nPackage:|\Z)", re.M | re.S)


def parse_dpkg_status(text: str) -> dict[str, OsPackage]:
    """Installed (`Status: install ok installed`) Neuron packages; garbage stanzas are skipped."""
    packages: dict[str, OsPackage] = {}
    for match in _STANZA.finditer(text):
        fields: dict[str, str] = {}
        for line in match.group(2).splitlines():
            key, separator, value = line.partition(":")
            if separator and not key.startswith((" ", "\t")):
                fields[key.strip().lower()] = value.strip()
        status = fields.get("status", "").split()
        version = fields.get("version")
        if len(status) == 3 and status[2] == "installed" and version:
            packages[match.group(1)] = OsPackage(match.group(1), version, "dpkg")
    return packages


def parse_rpm_query(text: str) -> dict[str, OsPackage]:
    """`NAME<TAB>VERSION-RELEASE` lines from `rpm -qa --qf`."""
    packages: dict[str, OsPackage] = {}
    for line in text.splitlines():
        name, separator, version = line.partition("\t")
        if separator and name.startswith(NEURON_PACKAGE_PREFIXES) and version.strip():
            packages[name.strip()] = OsPackage(name.strip(), version.strip(), "rpm")
    return packages


def rpm_database_present(fs: RootFS) -> bool:
    return fs.exists("/var/lib/rpm") or fs.exists("/usr/lib/sysimage/rpm")


def rpm_command(fs: RootFS) -> list[str]:
    return ["rpm", "--root", str(fs.root), "-qa", "--qf", "%{NAME}\\t%{VERSION}-%{RELEASE}\\n"]


def read_dpkg_packages(fs: RootFS) -> tuple[dict[str, OsPackage], bool]:
    """(packages, whether a dpkg database exists at all)."""
    text = fs.try_read_text("/var/lib/dpkg/status", limit=64 << 20)
    if text is None:
        return {}, False
    return parse_dpkg_status(text), True


def packages_from_rpm(result: CommandResult) -> dict[str, OsPackage]:
    return parse_rpm_query(result.stdout) if result.ok else {}
