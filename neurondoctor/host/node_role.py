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

A host with the runtime library installed runs the stack itself: it has no container-node role, whatever else it
carries. Inside a container the doctor sees the image, not the node: no role either.
"""

from __future__ import annotations

from typing import Optional

from neurondoctor.facts.host import HostSnapshot, NodeRole
from neurondoctor.host.rootfs import RootFS

EKS_RELEASE = "/etc/eks/release"
EKS_NEURON_LOADER = "/etc/eks/neuron-kmod-load.sh"
ECS_CONFIGS = ("/etc/ecs/ecs.config", "/var/lib/ecs/ecs.config")
OCI_HOOK = "aws-neuronx-oci-hook"
RUNTIME = "aws-neuronx-runtime-lib"


def read_node_markers(fs: RootFS) -> list[str]:
    """The files that name an AMI's purpose, as found under the root."""
    return [path for path in (EKS_RELEASE, EKS_NEURON_LOADER, *ECS_CONFIGS) if fs.exists(path)]


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
