"""Exact OS-level fix commands for this host: apt or dnf (from os-release), this kernel, pinned versions.

Forms from the Neuron setup docs (neuron-facts.md §2): apt `pkg=VER*`, dnf `pkg-VER*`; headers
`linux-headers-$(uname -r)` / `"kernel-devel-uname-r = $(uname -r)"`, written with this host's kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from neurondoctor.facts.host import HostSnapshot
from neurondoctor.rules.context import RuleContext, quoted

APT_KEYRING = "/etc/apt/keyrings/neuron.gpg"


def package_manager(snapshot: HostSnapshot) -> str:
    if snapshot.package_source == "rpm":
        return "dnf" if snapshot.os.package_manager == "apt" else snapshot.os.package_manager
    return snapshot.os.package_manager


def install_command(snapshot: HostSnapshot, packages: Sequence[tuple[str, Optional[str]]]) -> str:
    manager = package_manager(snapshot)
    if manager == "apt":
        specs = [f"{name}={version}*" if version else name for name, version in packages]
        return "sudo apt-get install -y --allow-change-held-packages " + " ".join(quoted(spec) for spec in specs)
    specs = [f"{name}-{version}*" if version else name for name, version in packages]
    return f"sudo {manager} install -y " + " ".join(quoted(spec) for spec in specs)


def remove_command(snapshot: HostSnapshot, names: list[str]) -> str:
    manager = package_manager(snapshot)
    if manager == "apt":
        return "sudo apt-get remove -y " + " ".join(names)
    return f"sudo {manager} remove -y " + " ".join(names)


def headers_command(snapshot: HostSnapshot) -> str:
    kernel = snapshot.kernel or "$(uname -r)"
    if package_manager(snapshot) == "apt":
        return f"sudo apt-get install -y linux-headers-{kernel}"
    return f"sudo {package_manager(snapshot)} install -y \"kernel-devel-uname-r = {kernel}\""


def repository_commands(ctx: RuleContext, snapshot: HostSnapshot) -> list[str]:
    """Configure the Neuron OS package repository when no apt/yum file names it (setup/pytorch/manual.rst)."""
    if snapshot.neuron_repo_files:
        return []
    repositories = ctx.catalog.sdk.get("repositories", {})
    if package_manager(snapshot) == "apt":
        apt = repositories.get("apt", "https://apt.repos.neuron.amazonaws.com")
        codename = snapshot.os.codename or "$(. /etc/os-release; echo $VERSION_CODENAME)"
        # The key in a keyring the list names (v2.33.0 setup-troubleshooting.rst): apt-key is deprecated and gone
        # from apt 3 (Ubuntu 25.04 and later).
        return ["sudo install -m 0755 -d /etc/apt/keyrings",
                f"wget -qO - {apt}/GPG-PUB-KEY-AMAZON-AWS-NEURON.PUB | sudo gpg --batch --yes --dearmor -o "
                f"{APT_KEYRING}",
                f"echo 'deb [signed-by={APT_KEYRING}] {apt} {codename} main' | sudo tee "
                "/etc/apt/sources.list.d/neuron.list",
                "sudo apt-get update -y"]
    yum = repositories.get("yum", "https://yum.repos.neuron.amazonaws.com")
    return [f"printf '[neuron]\\nname=Neuron YUM Repository\\nbaseurl={yum}\\nenabled=1\\nmetadata_expire=0\\n' "
            "| sudo tee /etc/yum.repos.d/neuron.repo",
            f"sudo rpm --import {yum}/GPG-PUB-KEY-AMAZON-AWS-NEURON.PUB"]


def host_target_release(ctx: RuleContext) -> Optional[str]:
    """The release to install OS packages from: --release, the host's own, the venvs', else the newest."""
    if ctx.target_release:
        return ctx.target_release
    host = ctx.host_release().release
    if host:
        return host
    for env in ctx.facts.environments:
        release = ctx.release_of(env).release
        if release:
            return release
    return ctx.catalog.latest


def release_version(ctx: RuleContext, release: Optional[str], name: str) -> Optional[str]:
    entries = ctx.catalog.entries(release, name) if release else []
    return entries[0].version if entries else None
