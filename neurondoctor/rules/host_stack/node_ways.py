"""How a fix is made on a container node (Bottlerocket, the EKS and ECS optimized AMIs), where a host's commands do
not exist or do not last.

- Bottlerocket has no package manager and "No shell or interpreters installed" on the host (its control and admin
  containers are the way in), an "Immutable rootfs backed by dm-verity" and a "Stateless tmpfs for /etc"
  (bottlerocket-os/bottlerocket SECURITY_FEATURES.md): a `rmmod`, `chmod` or udev rule cannot be run or kept there. It
  loads the Neuron module at boot for the hardware it finds (load-neuron-latest-modules.service), and /dev is made
  again at every boot, so its way is a reboot, then replacing the node.
- The EKS and ECS optimized AMIs are Amazon Linux nodes: the commands run, but the node's containers hold the
  devices (the module cannot be unloaded under them), and a node launched again from the image gets the image's
  files, not this node's changes. So the containers are moved away first (the node drained), and what must last is
  the image's (its next release), not a file written on one node.
"""

from __future__ import annotations

from neurondoctor.facts.host import HostSnapshot, NodeRole
from neurondoctor.rules.fix import Note, alternative, note

BOTTLEROCKET = "bottlerocket"

# How each kind of node's containers are moved off it before its driver is reloaded.
_DRAIN = {
    "eks": "first move this node's pods away: kubectl drain NODE --ignore-daemonsets (kubectl uncordon NODE after)",
    "ecs": "first set this container instance to DRAINING (aws ecs update-container-instances-state) and wait for "
           "its tasks to stop",
    "oci-hook": "first stop the containers that use the Neuron devices",
}


def read_only_node(snapshot: HostSnapshot) -> bool:
    """A node where no host command of a fix can run or last: Bottlerocket."""
    role = snapshot.node_role
    return role is not None and role.platform == BOTTLEROCKET


def reboot_then_replace(what: str) -> Note:
    """Bottlerocket's way: the boot makes the module and the device nodes again."""
    return note(f"reboot the node (Bottlerocket loads the Neuron driver and makes /dev again at boot); if {what}, "
                "replace the node")


def drain_first(role: NodeRole) -> list[Note]:
    """The note that moves the node's containers away before the driver is reloaded under them."""
    text = _DRAIN.get(role.platform)
    return [note(text)] if text else []


def or_reboot() -> Note:
    return alternative("reboot the node")


def kept_by_the_image() -> Note:
    """What a node launched again from its image keeps is the image's, not this node's change."""
    return note("a node launched again from its image does not keep this change: make it in the image (the node "
                "group's AMI or launch template), or move to the image's next release")


def loaded_at_boot() -> Note:
    """A managed node loads the driver as its image does (the EKS AMI's /etc/eks/neuron-kmod-load.sh): a file written
    on this node to load it is not what a node launched again from the image reads."""
    return note("the node's image loads the driver at boot: if it is not loaded after the next boot, replace the "
                "node or move to the image's next release")
