"""What a host is for: a container node that carries the Neuron driver (and perhaps the OCI hook and the tools)
while the runtime, the compiler and the frameworks come in the containers it runs.

Such a node is judged by that purpose: no runtime library on it is how it is built, not a fault. The evidence:

- Bottlerocket (`ID=bottlerocket` in os-release): an image without a package manager whose aws variants carry the
  Neuron driver in the kernel kit (bottlerocket-kernel-kit `kmod-6.1-neuron.spec`: `Requires: variant-platform(aws)`,
  `Conflicts: variant-flavor(nvidia)`); every workload runs in a container.
- The EKS optimized AMI: `/etc/eks/release` (amazon-eks-ami `templates/al2023/provisioners/install-worker.sh` writes
  it); its Neuron variant installs aws-neuronx-dkms and aws-neuronx-tools only and loads the module with
  `/etc/eks/neuron-kmod-load.sh` (`install-neuron-driver.sh`).
- The ECS optimized AMI: `/etc/ecs/ecs.config` (amazon-ecs-ami `scripts/setup-ecs-config-dir.sh`); its Neuron AMI
  carries aws-neuronx-dkms, aws-neuronx-tools and aws-neuronx-oci-hook (`scripts/al2023/neuron/
  neuron-inf1-downgrade.sh` locks exactly these).
- Any host with aws-neuronx-oci-hook and no runtime (containers/tutorials/tutorial-oci-hook: the hook hands the
  devices to containers that bring their own runtime).

Both managed AMIs put an older driver on Inf1 at boot. The ECS AMI's `neuron-inf1-downgrade.service` runs
`/var/lib/ecs/scripts/neuron-inf1-downgrade.sh`, which installs the `aws-neuronx-dkms-2.21.*` package cached in
`/opt/ecs/neuron/inf1-rpms` and locks aws-neuronx-dkms, -tools and -oci-hook with `dnf versionlock`
(amazon-ecs-ami `scripts/al2023/neuron/`, `scripts/enable-ecs-agent-inferentia-support.sh`, which also deletes the
Neuron yum repository from the image). The EKS AMI's `neuron-package-install.service` runs
`/etc/eks/neuron-package-install.sh`, which installs the `aws-neuronx-dkms-2.21.*` package cached in
`/var/cache/eks/packages` (amazon-eks-ami `templates/al2023/runtime/gpu/`, pull request 2579). Both scripts put a
no-op `update-pciids` first: the package's install script calls it, and it hangs on a node that cannot reach the
PCI id database. The pin is read as evidence: the script, the cached packages' versions.

A host with the runtime library installed runs the stack itself: it has no container-node role, whatever else it
carries. Inside a container the doctor sees the image, not the node: no role either.
"""

from __future__ import annotations

import itertools
import os
import re
from typing import TYPE_CHECKING, Optional

from neurondoctor.facts.host import HostSnapshot, NodeRole
from neurondoctor.host.rootfs import RootFS

if TYPE_CHECKING:
    from neurondoctor.facts.image_pin import ImageInf1Pin

EKS_RELEASE = "/etc/eks/release"
EKS_NEURON_LOADER = "/etc/eks/neuron-kmod-load.sh"
ECS_CONFIGS = ("/etc/ecs/ecs.config", "/var/lib/ecs/ecs.config")
OCI_HOOK = "aws-neuronx-oci-hook"
RUNTIME = "aws-neuronx-runtime-lib"
# (platform, the systemd unit, its script, the folder of packages it installs): the managed images' Inf1 pins
INF1_PINS = (("ecs", "neuron-inf1-downgrade.service", "/var/lib/ecs/scripts/neuron-inf1-downgrade.sh",
              "/opt/ecs/neuron/inf1-rpms"),
             ("eks", "neuron-package-install.service", "/etc/eks/neuron-package-install.sh",
              "/var/cache/eks/packages"))
PINNED_LINE = "2.21"  # both scripts name `aws-neuronx-dkms-2.21.*`
MAX_CACHED_NAMES = 64  # a folder of a few packages: more names than this are not read
_CACHED_DKMS = re.compile(r"aws-neuronx-dkms-(\d+(?:\.\d+){1,3})-.*\.rpm")


def read_node_markers(fs: RootFS) -> list[str]:
    """The files that name an AMI's purpose, as found under the root."""
    return [path for path in (EKS_RELEASE, EKS_NEURON_LOADER, *ECS_CONFIGS) if fs.exists(path)]


def _cached_driver_versions(fs: RootFS, folder: str) -> list[str]:
    """The aws-neuronx-dkms versions of the packages in an image's cache folder, from their file names (a bounded
    number of names; a folder that cannot be read gives none)."""
    path = fs.resolve(folder)
    if path is None:
        return []
    try:
        with os.scandir(path) as entries:
            names = [entry.name for entry in itertools.islice(entries, MAX_CACHED_NAMES)]
    except OSError:
        return []
    return sorted({match.group(1) for name in names if (match := _CACHED_DKMS.fullmatch(name))})


def read_inf1_pin(fs: RootFS, platform: str) -> Optional[ImageInf1Pin]:
    """The managed image's Inf1 driver pin (the module docstring), when its boot script is on this node."""
    from neurondoctor.facts.image_pin import ImageInf1Pin  # on a container node only

    for pin_platform, unit, script, folder in INF1_PINS:
        if pin_platform == platform and fs.exists(script):
            return ImageInf1Pin(unit, script, folder, PINNED_LINE, _cached_driver_versions(fs, folder))
    return None


def node_role(snapshot: HostSnapshot, markers: list[str]) -> Optional[NodeRole]:
    """The container-node role the evidence shows, or None for a host that runs the Neuron stack itself."""
    if snapshot.container or snapshot.runtime_libraries or RUNTIME in snapshot.packages:
        return None
    hook = [f"{OCI_HOOK} {snapshot.packages[OCI_HOOK].version} installed"] if OCI_HOOK in snapshot.packages else []
    if snapshot.os.id == "bottlerocket":
        variant = snapshot.os.variant_id or "variant not known"
        return NodeRole("bottlerocket", f"Bottlerocket node ({variant})",
                        [f"os-release ID=bottlerocket, VARIANT_ID={variant}", *hook])
    if EKS_RELEASE in markers:
        return NodeRole("eks", "EKS node (EKS optimized AMI)", [*(path for path in markers if "/eks/" in path), *hook])
    ecs = [path for path in markers if path in ECS_CONFIGS]
    if ecs:
        return NodeRole("ecs", "ECS node (ECS optimized AMI)", [*ecs, *hook])
    if hook:
        return NodeRole("oci-hook", "container host (Neuron OCI hook, no runtime on the host)", hook)
    return None
