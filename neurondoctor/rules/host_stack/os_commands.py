"""Exact OS-level fix commands for this host: apt or dnf (from os-release), this kernel, pinned versions.

Forms from the Neuron setup docs (docs/neuron-facts.md §2): apt `pkg=VER*`, dnf `pkg-VER*`; headers
`linux-headers-$(uname -r)` / `"kernel-devel-uname-r = $(uname -r)"`, written with this host's kernel.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

from neurondoctor.facts.host import HostSnapshot
from neurondoctor.neuron_version import release_tuple
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.fix import Command, Part, Shell, Word, command, pipeline

APT_KEYRING = "/etc/apt/keyrings/neuron.gpg"
UNAME_R = Shell("$(uname -r)")
# Unload the old module and load the one just installed (nrt-ts: rmmod/modprobe after the holders stop).
RELOAD_DRIVER = (command("sudo", "rmmod", "neuron"), command("sudo", "modprobe", "neuron"))


def package_manager(snapshot: HostSnapshot) -> str:
    if snapshot.package_source == "rpm":
        return "dnf" if snapshot.os.package_manager == "apt" else snapshot.os.package_manager
    return snapshot.os.package_manager


def is_downgrade(snapshot: HostSnapshot, name: str, version: Optional[str]) -> bool:
    """Whether installing `name` at `version` (a full version or a `2.24.` prefix) moves an installed one down."""
    package = snapshot.packages.get(name)
    wanted = release_tuple(version.rstrip(".")) if version else ()
    return package is not None and bool(wanted) and release_tuple(package.version)[:len(wanted)] > wanted


def install_command(snapshot: HostSnapshot, packages: Sequence[tuple[str, Optional[str]]]) -> Command:
    """apt refuses to move a package down under `-y` unless told (`E: Packages were downgraded and -y was used
    without --allow-downgrades.`); dnf installs the version named, up or down."""
    manager = package_manager(snapshot)
    if manager == "apt":
        specs = [f"{name}={version}*" if version else name for name, version in packages]
        down = ["--allow-downgrades"] if any(is_downgrade(snapshot, *package) for package in packages) else []
        return command("sudo", "apt-get", "install", "-y", "--allow-change-held-packages", *down, *specs)
    specs = [f"{name}-{version}*" if version else name for name, version in packages]
    return command("sudo", manager, "install", "-y", *specs)


def reinstall_command(snapshot: HostSnapshot, packages: Sequence[tuple[str, Optional[str]]]) -> Command:
    """Write an installed package's files again: a plain install of the version already there does nothing
    (apt: "is already the newest version"; dnf: "already installed")."""
    manager = package_manager(snapshot)
    if manager == "apt":
        specs = [f"{name}={version}*" if version else name for name, version in packages]
        return command("sudo", "apt-get", "install", "-y", "--reinstall", "--allow-change-held-packages", *specs)
    return command("sudo", manager, "reinstall", "-y", *[name for name, _ in packages])


def remove_command(snapshot: HostSnapshot, names: Sequence[str], note: str = "") -> Command:
    manager = package_manager(snapshot)
    if manager == "apt":
        return command("sudo", "apt-get", "remove", "-y", *names, note=note)
    return command("sudo", manager, "remove", "-y", *names, note=note)


def headers_command(snapshot: HostSnapshot, kernels: Sequence[str] = ()) -> Command:
    """The headers of the running kernel, or of each of `kernels` (DKMS builds the driver for every installed
    kernel whose headers are there)."""
    manager = package_manager(snapshot)
    if manager == "apt":
        words: list[Word] = [f"linux-headers-{kernel}" for kernel in kernels] or [
            f"linux-headers-{snapshot.kernel}" if snapshot.kernel else ("linux-headers-", UNAME_R)]
        return command("sudo", "apt-get", "install", "-y", *words)
    running: Word = f"kernel-devel-uname-r = {snapshot.kernel}" if snapshot.kernel else Shell(
        '"kernel-devel-uname-r = $(uname -r)"')
    specs: list[Word] = [f"kernel-devel-uname-r = {kernel}" for kernel in kernels] or [running]
    return command("sudo", manager, "install", "-y", *specs)


def repository_commands(ctx: RuleContext, snapshot: HostSnapshot) -> list[Command]:
    """Configure the Neuron OS package repository when no apt/yum file names it (setup/pytorch/manual.rst)."""
    if snapshot.neuron_repo_files:
        return []
    repositories = ctx.catalog.sdk.get("repositories", {})
    if package_manager(snapshot) == "apt":
        apt = repositories.get("apt", "https://apt.repos.neuron.amazonaws.com")
        codename: Part = snapshot.os.codename or Shell('"$(. /etc/os-release; echo $VERSION_CODENAME)"')
        # The key in a keyring the list names (v2.33.0 setup-troubleshooting.rst): apt-key is deprecated and gone
        # from apt 3 (Ubuntu 25.04 and later).
        return [command("sudo", "install", "-m", "0755", "-d", "/etc/apt/keyrings"),
                pipeline(["wget", "-qO", "-", f"{apt}/GPG-PUB-KEY-AMAZON-AWS-NEURON.PUB"],
                         ["sudo", "gpg", "--batch", "--yes", "--dearmor", "-o", APT_KEYRING]),
                pipeline(["echo", (f"deb [signed-by={APT_KEYRING}] {apt} ", codename, " main")],
                         ["sudo", "tee", "/etc/apt/sources.list.d/neuron.list"]),
                command("sudo", "apt-get", "update", "-y")]
    yum = repositories.get("yum", "https://yum.repos.neuron.amazonaws.com")
    return [pipeline(["printf", f"[neuron]\\nname=Neuron YUM Repository\\nbaseurl={yum}\\nenabled=1\\n"
                      "metadata_expire=0\\n"], ["sudo", "tee", "/etc/yum.repos.d/neuron.repo"]),
            command("sudo", "rpm", "--import", f"{yum}/GPG-PUB-KEY-AMAZON-AWS-NEURON.PUB")]


def host_target_release(ctx: RuleContext) -> Optional[str]:
    """The release to install OS packages from: --release, the host's own, the venvs', else the newest."""
    if ctx.target_release:
        return ctx.target_release
    host = ctx.host_release().release
    if host:
        return host
    for env in ctx.facts.environments:
        release = ctx.release_of(env).release
        if release and release not in ctx.catalog.partial:  # a release known in part has no host versions to pin
            return release
    return ctx.catalog.whole_latest


def release_version(ctx: RuleContext, release: Optional[str], name: str) -> Optional[str]:
    entries = ctx.catalog.entries(release, name) if release else []
    return entries[0].version if entries else None
