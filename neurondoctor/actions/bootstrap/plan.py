"""What `bootstrap` would do to this host for a release (pure: host facts and release data in, steps out).

The steps of the Neuron setup pages (docs/neuron-facts.md §2: setup/pytorch/manual.rst for Ubuntu, the n2-helper
output for AL2023), each with the exact commands for this host and whether it is needed: the Neuron apt/yum
repository and its key; `linux-headers-$(uname -r)` / `kernel-devel`; the release's exact aws-neuronx-dkms,
-runtime-lib, -collectives and -tools, held as DLAMIs hold them; a driver reload when another version is loaded
and no process holds the devices; the guarded venv; then `check`, and `probe canary` where a device exists. A step
whose result is already on the host is not needed, so a second run on a healthy host changes nothing.
`--image` (a Packer build, an instance that may have no Neuron device) leaves out the reload and the canary.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from neurondoctor import exit_codes
from neurondoctor.facts import Facts, HostFacts
from neurondoctor.facts.host import HostSnapshot
from neurondoctor.neuron_version import normalize_neuron_version
from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.fix import Command, command, quote_word
from neurondoctor.rules.host_stack.os_commands import (
    RELOAD_DRIVER,
    headers_command,
    install_command,
    package_manager,
    release_version,
    repository_commands,
)

OS_PACKAGES = ("aws-neuronx-dkms", "aws-neuronx-runtime-lib", "aws-neuronx-collectives", "aws-neuronx-tools")
SUPPORTED_OS = {("ubuntu", "22.04"), ("ubuntu", "24.04"), ("ubuntu", "26.04"), ("amzn", "2023")}
_CODENAME = re.compile(r"^[a-z][a-z0-9-]*$")


@dataclass
class Step:
    name: str
    needed: bool
    why: str
    commands: list[Command] = field(default_factory=list)
    deferred: bool = False  # left to another time or place (a held device, the instance's first boot)


def _version_matches(installed: Optional[str], wanted: str) -> bool:
    return installed is not None and normalize_neuron_version(installed) == normalize_neuron_version(wanted)


def check_supported(snapshot: HostSnapshot) -> None:
    """Raises UserError for an OS the bootstrap has no install steps for, or an os-release it cannot trust."""
    release = (snapshot.os.id or "", snapshot.os.version_id or "")
    if release not in SUPPORTED_OS:
        raise exit_codes.UserError(f"bootstrap knows the install steps of Ubuntu 22.04/24.04/26.04 and Amazon Linux "
                                   f"2023; this is {snapshot.os.pretty_name or ' '.join(release) or 'unknown'}")
    if snapshot.os.package_manager == "apt" and not _CODENAME.match(snapshot.os.codename or ""):
        raise exit_codes.UserError(f"os-release VERSION_CODENAME {snapshot.os.codename!r} is not a codename")


def os_steps(snapshot: HostSnapshot, catalog: ReleaseCatalog, release: str, image: bool) -> list[Step]:
    """Repository, headers, packages, hold and reload."""
    ctx = RuleContext(Facts(host=HostFacts(root="/", snapshot=snapshot)), catalog, target_release=release)
    manager = package_manager(snapshot)
    steps = []
    repository = repository_commands(ctx, snapshot)
    steps.append(Step("repository", bool(repository), "add the Neuron repository and its signing key" if repository
                      else f"configured ({', '.join(snapshot.neuron_repo_files)})", repository))
    headers = not snapshot.dkms.headers_present
    steps.append(Step("headers", headers, f"the DKMS build needs the headers of kernel {snapshot.kernel}" if headers
                      else f"present for kernel {snapshot.kernel}", [headers_command(snapshot)] if headers else []))
    wanted = {name: release_version(ctx, release, name) for name in OS_PACKAGES}
    missing_data = [name for name, version in wanted.items() if version is None]
    if missing_data:
        raise exit_codes.UserError(f"release {release} lists no {', '.join(missing_data)} for this instance")
    install = [(name, str(version)) for name, version in wanted.items()
               if not _version_matches(snapshot.packages[name].version if name in snapshot.packages else None,
                                       str(version))]
    shown = ", ".join(f"{name} {version}" + (f" (installed: {snapshot.packages[name].version})"
                                             if name in snapshot.packages else "") for name, version in install)
    steps.append(Step("packages", bool(install), f"install {shown}" if install else
                      f"the release's versions are installed ({', '.join(f'{n} {v}' for n, v in wanted.items())})",
                      [install_command(snapshot, install)] if install else []))
    unheld = [name for name in OS_PACKAGES if name not in snapshot.packages or not snapshot.packages[name].held
              or any(name == item for item, _ in install)]
    if manager == "apt":
        hold = [command("sudo", "apt-mark", "hold", *unheld)] if unheld else []
    else:
        hold = [command("sudo", "dnf", "install", "-y", "python3-dnf-plugin-versionlock"),
                command("sudo", "dnf", "versionlock", "add", *(f"{name}-{wanted[name]}*" for name in unheld))
                ] if unheld else []
    steps.append(Step("hold", bool(unheld), f"hold {', '.join(unheld)} at the release's versions (as DLAMIs do)"
                      if unheld else "held", hold))
    if not image:
        steps.append(reload_step(snapshot, str(wanted["aws-neuronx-dkms"]), bool(install)))
    return steps


def reload_step(snapshot: HostSnapshot, driver: str, installing: bool) -> Step:
    """Load the driver, or reload it when another version is loaded and nothing holds the devices."""
    loaded = snapshot.loaded_driver_version
    if not snapshot.has_neuron_hardware:
        return Step("driver-reload", False, "no Neuron device on this host (an image build: use --image)")
    if loaded is not None and _version_matches(loaded, driver):
        return Step("driver-reload", False, f"driver {loaded} is loaded")
    if loaded is None and "neuron" not in snapshot.modules:
        return Step("driver-reload", True, "load the driver", [RELOAD_DRIVER[1]])
    if snapshot.holders:
        pids = ", ".join(str(holder.pid) for holder in snapshot.holders)
        return Step("driver-reload", False, f"driver {loaded or 'of another version'} stays loaded until the "
                    f"processes holding the devices ({pids}) stop; then: sudo rmmod neuron && sudo modprobe neuron",
                    deferred=True)
    why = f"driver {loaded} is loaded, the release's is {driver}" + (" (after the install)" if installing else "")
    return Step("driver-reload", True, why, list(RELOAD_DRIVER))


def venv_step(venv: str, guarded_release: Optional[str], exists: bool, release: str, python: str,
              under_root: bool) -> Step:
    if exists and guarded_release == release:
        return Step("venv", False, f"{venv} is a guarded {release} environment")
    if under_root:
        return Step("venv", False, f"{venv} is built on the instance itself (first boot or the Packer build): an "
                    "environment records its interpreter's path, which under --root would be this machine's",
                    deferred=True)
    if exists:
        return Step("venv", False, deferred=True, why=f"{venv} exists and is not a guarded {release} environment"
                    + (f" (it is {guarded_release}'s)" if guarded_release else "")
                    + f"; build another path, or replace it with: neurondoctor venv create {quote_word(venv)} "
                      f"--release {release} --force")
    return Step("venv", True, f"build the guarded {release} environment",
                [command(python, "-m", "neurondoctor", "venv", "create", venv, "--release", release)])
