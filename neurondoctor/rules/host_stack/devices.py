"""Devices: nodes missing, nodes not accessible, cores held by other processes.

Sources: deploy/troubleshooting.rst (`TDRV:tdrv_get_dev_info No neuron device available`: a container
without `--device=/dev/neuronN`), drv:postinstall (udev `MODE="0666"`), nrt-ts (`NeuronCore(s) not
available`: kill the holder, e.g. a Jupyter kernel).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from neurondoctor.facts.host import CORE_COUNT_COLLECTOR, DeviceNode, HostSnapshot
from neurondoctor.rules.check import Check, FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext, neuron_host
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_INFO, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Fix, Shell, alternative, command, note, pipeline
from neurondoctor.rules.host_stack.hardware import stop_start
from neurondoctor.rules.host_stack.node_ways import (
    drain_first,
    kept_by_the_image,
    or_reboot,
    read_only_node,
    reboot_then_replace,
)
from neurondoctor.rules.host_stack.os_commands import RELOAD_DRIVER

if TYPE_CHECKING:  # made only by the device-holder walk, on a host with device nodes
    from neurondoctor.facts.device_holders import DeviceHolder

NEURON_FAMILIES = ("trn", "inf")


def _neuron_instance(ctx: RuleContext) -> bool:
    family = ctx.facts.host.instance_family or ""
    return family.startswith(NEURON_FAMILIES)


def devices_missing(ctx: RuleContext) -> list[Finding]:
    """ND-DEV-001: hardware (PCI or instance type) without device nodes, or fewer nodes than devices."""
    snapshot = ctx.facts.host.snapshot
    profiled = ctx.instance_profile().get("devices")
    expected = len(snapshot.pci) or (profiled if isinstance(profiled, int) else 0)
    nodes = len(snapshot.device_nodes)
    if expected == 0 or nodes >= expected:
        return []
    if not snapshot.pci and not _neuron_instance(ctx):
        return []
    in_container = snapshot.container or snapshot.kubernetes_pod
    if snapshot.kubernetes_pod:
        # containers/tutorials/k8s-neuron-device-plugin: the plugin registers aws.amazon.com/neuron (devices)
        # and aws.amazon.com/neuroncore; a pod gets devices only by requesting them.
        detail = ("This pod did not get the Neuron devices: request them as a resource (the Neuron device plugin "
                  "must run on the node), or the runtime fails with `TDRV:tdrv_get_dev_info No neuron device "
                  "available`.")
        fix = Fix([note(f"in the pod spec: resources: {{limits: {{aws.amazon.com/neuron: {expected}}}}}"),
                   command("helm", "upgrade", "--install", "neuron-helm-chart",
                           "oci://public.ecr.aws/neuron/neuron-helm-chart", "--set", "npd.enabled=false",
                           note="the device plugin, once per cluster"),
                   command("kubectl", "get", "ds", "neuron-device-plugin", "-n", "kube-system")])
    elif in_container:
        devices = [f"--device=/dev/neuron{index}" for index in range(expected)]
        detail = ("This container was started without the Neuron devices: the runtime fails with "
                  "`TDRV:tdrv_get_dev_info No neuron device available`.")
        fix = Fix([command("docker", "run", *devices, Shell("IMAGE"),
                           note="or AWS_NEURON_VISIBLE_DEVICES=ALL with the Neuron OCI hook")])
    elif "neuron" not in snapshot.modules:
        return []  # the driver findings explain it
    else:
        detail = "The driver is loaded but some device nodes are missing (`Could not open the nd1`)."
        fix = _reload_for_devices(snapshot)
    # A container given some of the devices is a share, not a fault: a pod requests `aws.amazon.com/neuron: 1`, a
    # container runs with `--device=/dev/neuron0` (a public report, tests/recorded/neuron-ls/: one trn2.48xlarge
    # device in a container). Sysfs and PCI still show every device of the instance there.
    shared = in_container and nodes > 0
    if shared:
        detail = ("This container was started with some of the instance's Neuron devices; a job sized for all of "
                  "them fails to allocate its NeuronCores here. If this share is the intended one, nothing is wrong.")
    return [Finding(
        id="ND-DEV-001",
        category="device-missing",
        severity=SEVERITY_INFO if shared else SEVERITY_ERROR,
        title=(f"this {'pod' if snapshot.kubernetes_pod else 'container'} has {nodes} of the {expected} Neuron "
               "devices" if shared else f"{nodes} of {expected} Neuron device nodes present"
               + (" in this pod" if snapshot.kubernetes_pod else " in this container" if in_container else "")),
        detail=detail,
        evidence={"pci": [function.address for function in snapshot.pci],
                  "nodes": [node.path for node in snapshot.device_nodes],
                  "instance_type": ctx.facts.host.instance_type, "container": in_container},
        fix=fix,
    )]


def _reload_for_devices(snapshot: HostSnapshot) -> Fix:
    """Reload the driver and list the nodes; on a container node its containers move away first (or it reboots),
    and on Bottlerocket, where no host command runs, the node reboots."""
    if read_only_node(snapshot):
        return Fix([reboot_then_replace("devices are still missing")])
    reload = [*RELOAD_DRIVER, command("ls", "-l", ("/dev/neuron", Shell("*")))]
    role = snapshot.node_role
    return Fix([*drain_first(role), *reload, or_reboot()] if role is not None else reload)


def _accessible(node: DeviceNode, snapshot: HostSnapshot) -> bool:
    """Read and write for this user (live), or for everyone (an image, judged by the udev default 0666)."""
    if snapshot.uid is None:
        return node.mode & 0o006 == 0o006
    if snapshot.uid == 0:
        return True
    if node.uid == snapshot.uid:
        return node.mode & 0o600 == 0o600
    if node.gid in snapshot.groups:
        return node.mode & 0o060 == 0o060
    return node.mode & 0o006 == 0o006


# drv:postinstall installs `/lib/udev/rules.d/neuron-udev.rules` with `KERNEL=="neuron*", MODE="0666"`
# (docs/neuron-facts.md §4 /dev): every user may open the nodes unless something changed the mode.
UDEV_RULE = '/lib/udev/rules.d/neuron-udev.rules'
UDEV_LINE = 'KERNEL=="neuron*", MODE="0666"'


def _who(ctx: RuleContext) -> str:
    snapshot = ctx.facts.host.snapshot
    if snapshot.uid is None:
        return "users other than root"
    name = snapshot.user_name or f"uid {snapshot.uid}"
    groups = ", ".join(snapshot.group_names) or ", ".join(str(gid) for gid in snapshot.groups)
    return f"{name} (uid {snapshot.uid}; groups {groups or 'none'})"


def device_permission(ctx: RuleContext) -> list[Finding]:
    """ND-DEV-002: character device nodes this user cannot open read-write: the runtime will fail to open them."""
    snapshot = ctx.facts.host.snapshot
    blocked = [node for node in snapshot.device_nodes if node.is_char_device and not _accessible(node, snapshot)]
    if not blocked:
        return []
    shown = ", ".join(f"{node.path} ({node.mode & 0o777:04o} {node.uid}:{node.gid})" for node in blocked[:4])
    return [Finding(
        id="ND-DEV-002",
        category="device-permission",
        severity=SEVERITY_ERROR,
        title=f"{len(blocked)} Neuron device node(s) not usable by {_who(ctx)}: {shown}",
        detail=("The runtime opens every device it uses read-write and fails with `Permission denied` on these. "
                f"The driver's udev rule ({UDEV_RULE}: `{UDEV_LINE}`) makes them 0666; a changed rule, or a "
                "container runtime that copies nodes with tighter modes, leaves them like this."),
        evidence={"nodes": [{"path": node.path, "mode": oct(node.mode), "uid": node.uid, "gid": node.gid}
                            for node in blocked], "uid": snapshot.uid, "groups": snapshot.groups},
        fix=_permission_fix(snapshot, blocked),
    )]


def _permission_fix(snapshot: HostSnapshot, blocked: list[DeviceNode]) -> Fix:
    """chmod now and the udev rule for every boot; Bottlerocket's root is read-only (a reboot makes /dev again),
    and a node launched again from its image keeps the image's rule, not this node's."""
    if read_only_node(snapshot):
        return Fix([reboot_then_replace("the mode stays")])
    lines = [command("sudo", "chmod", "0666", *(node.path for node in blocked), note="now"),
             pipeline(["echo", UDEV_LINE], ["sudo", "tee", UDEV_RULE], note="and at every boot"),
             pipeline(["sudo", "udevadm", "control", "--reload-rules"],
                      ["sudo", "udevadm", "trigger", "--subsystem-match=neuron_device"], operator="&&")]
    return Fix([*lines, kept_by_the_image()] if snapshot.node_role is not None else lines)


def not_character_devices(ctx: RuleContext) -> list[Finding]:
    """ND-DEV-004: something other than a character device stands at /dev/neuronN (a file a script wrote, a
    bind mount of the wrong thing): the runtime cannot use it, whatever its mode."""
    snapshot = ctx.facts.host.snapshot
    wrong = [node for node in snapshot.device_nodes if not node.is_char_device]
    if not wrong:
        return []
    return [Finding(
        id="ND-DEV-004",
        category="device-missing",
        severity=SEVERITY_ERROR,
        title=f"{', '.join(node.path for node in wrong[:4])} "
              + ("is not a character device" if len(wrong) == 1 else "are not character devices"),
        detail=("The driver creates /dev/neuronN as character devices when it loads; a regular file or "
                "directory there (written by a script, or a container volume) hides the device."),
        evidence={"nodes": [node.path for node in wrong]},
        fix=Fix([command("ls", "-l", *(node.path for node in wrong[:4]), note="check what it is before removing it"),
                 command("sudo", "rm", *(node.path for node in wrong)), *RELOAD_DRIVER]),
    )]


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "age unknown"
    if seconds >= 3600:
        return f"{seconds / 3600:.0f} h old"
    return f"{seconds / 60:.0f} min old"


def _unexpected_holders(ctx: RuleContext) -> list[DeviceHolder]:
    """Holders outside a Slurm job: a job running on the node is expected to hold its cores (a healthy node in use
    must never drain); anything else keeps cores from the next job."""
    return [holder for holder in ctx.facts.host.snapshot.holders if not holder.slurm_job]


def cores_busy(ctx: RuleContext) -> list[Finding]:
    """ND-DEV-003: processes holding Neuron devices (their cores are not available to a new job)."""
    snapshot = ctx.facts.host.snapshot
    holders = _unexpected_holders(ctx)
    if not holders:
        return []
    per_device = {device.name: device.core_count for device in snapshot.sysfs_devices}
    held = sorted({device for holder in holders for device in holder.devices})
    held_cores = sum(per_device.get(device.rsplit("/", 1)[-1]) or 0 for device in held)
    total = ctx.total_cores()
    seen = (f"; a new job sees {total - held_cores} of {total} NeuronCores" if total and held_cores else "")
    # A container node runs its workloads in containers: their processes holding the devices is the node in use (as a
    # Slurm job's are), which must never degrade it; the holders are said, for a node that should be idle.
    return [Finding(
        id="ND-DEV-003",
        category="cores-busy",
        severity=SEVERITY_INFO if snapshot.node_role is not None else SEVERITY_WARNING,
        title=f"{len(held)} Neuron device(s) held by "
              + ", ".join(f"PID {holder.pid} ({holder.command}, {_age(holder.age_seconds)})"
                          for holder in holders[:3]) + seen,
        detail=("A process that holds a device keeps its NeuronCores: a new job fails with `NRT:nrt_allocate_neuron_"
                "cores NeuronCore(s) not available` or gets fewer cores. Leftover notebook kernels are the usual "
                "holders."),
        evidence={"holders": [{"pid": h.pid, "command": h.command, "cmdline": h.cmdline, "devices": h.devices,
                               "age_seconds": h.age_seconds} for h in holders]},
        fix=_free_devices(snapshot, holders),

    )]


def _free_devices(snapshot: HostSnapshot, holders: list[DeviceHolder]) -> Fix:
    """`kill PID` for each holder (which program: title and evidence). On a container node the holder runs in one of
    its containers, which its orchestrator would start again: the container is stopped through it; Bottlerocket has
    no shell on the host to run `kill` in."""
    kills = [command("kill", str(holder.pid)) for holder in holders]
    role = snapshot.node_role
    if role is None:
        return Fix(kills)
    stop = note("stop the pod, task or container that runs these processes (a process killed here is started "
                "again by its orchestrator)")
    if read_only_node(snapshot):
        return Fix([stop])
    return Fix([stop, alternative("for a process no orchestrator started (not in a container):"), *kills])


def _expected(profile: dict[str, object], key: str) -> Optional[int]:
    value = profile.get(key)
    return value if isinstance(value, int) and value > 0 else None


def inventory_short(ctx: RuleContext) -> list[Finding]:
    """ND-DEV-005: fewer Neuron devices on PCI, in the driver, or NeuronCores than this instance type has
    (manifests/instances.json). Only a partial count is judged: none at all is another finding's (ND-DRV-001,
    ND-DEV-001) or an image's, with no hardware to count."""
    snapshot = ctx.facts.host.snapshot
    profile = ctx.instance_profile()
    devices = _expected(profile, "devices")
    if devices is None or not snapshot.pci:
        return []
    short = []
    if len(snapshot.pci) < devices:
        short.append(f"{len(snapshot.pci)} of {devices} Neuron devices on PCI")
    if snapshot.sysfs_devices and len(snapshot.sysfs_devices) < min(devices, len(snapshot.pci)):
        short.append(f"{len(snapshot.sysfs_devices)} of {len(snapshot.pci)} PCI devices bound by the driver")
    per_device = _expected(profile, "cores_per_device")
    counted = [device.core_count for device in snapshot.sysfs_devices if device.core_count]
    # Trn2/Trn3 group physical cores into logical ones; what sysfs counts there is not documented: not judged
    if per_device and profile.get("logical_nc_configs", [1]) == [1] and counted and sum(counted) < (
            per_device * len(counted)):
        short.append(f"{sum(counted)} of {per_device * len(counted)} NeuronCores on {len(counted)} devices")
    if not short:
        return []
    return [Finding(
        id="ND-DEV-005",
        category="device-missing",
        severity=SEVERITY_ERROR,
        title=f"this {ctx.facts.host.instance_type} shows " + ", ".join(short),
        detail=("A device that dropped off the bus or was not bound by the driver takes its NeuronCores with it: "
                "jobs sized for the instance fail to allocate cores or collectives hang. Stop and start the instance "
                "to move to other hardware if a reboot does not bring the devices back."),
        evidence={"instance_type": ctx.facts.host.instance_type, "expected_devices": devices,
                  "pci_devices": len(snapshot.pci), "driver_devices": len(snapshot.sysfs_devices),
                  "cores": counted},
        fix=Fix([command("sudo", "reboot", note="then check again; if devices are still missing:"),
                 *stop_start(ctx)]),
    )]


def devices_summary(ctx: RuleContext) -> str:
    jobs = sorted({holder.slurm_job for holder in ctx.facts.host.snapshot.holders if holder.slurm_job})
    held = f"in use by Slurm job {', '.join(jobs)}" if jobs else "no process holds a NeuronCore"
    return f"{len(ctx.facts.host.snapshot.device_nodes)} device node(s) usable, {held}"


RULE_SET = RuleSet(
    rules=(devices_missing, device_permission, not_character_devices, cores_busy, inventory_short),
    findings=(
        FindingSpec("ND-DEV-001", "device-missing", SEVERITY_ERROR,
                    "fewer device nodes than Neuron devices (a container without --device); an info in a container "
                    "given some of them", also=(SEVERITY_INFO,)),
        FindingSpec("ND-DEV-002", "device-permission", SEVERITY_ERROR, "device nodes this user cannot open"),
        FindingSpec("ND-DEV-003", "cores-busy", SEVERITY_WARNING, "processes (PID, command, age) holding devices "
                    "(an info on a container node, whose containers are what holds them in use)",
                    also=(SEVERITY_INFO,)),
        FindingSpec("ND-DEV-005", "device-missing", SEVERITY_ERROR,
                    "fewer devices on PCI, bound by the driver, or NeuronCores than the instance type has"),
        FindingSpec("ND-DEV-004", "device-missing", SEVERITY_ERROR,
                    "something other than a character device at /dev/neuronN"),
    ),
)
CHECK = Check("devices", "Devices & cores", (RULE_SET,), devices_summary, applies=neuron_host,
              needs=("hardware", "processes", "neuron-ls", CORE_COUNT_COLLECTOR))
