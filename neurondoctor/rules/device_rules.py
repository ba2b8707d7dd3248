"""Devices: nodes missing, nodes not accessible, cores held by other processes.

Sources: deploy/troubleshooting.rst (`TDRV:tdrv_get_dev_info No neuron device available`: a container
without `--device=/dev/neuronN`), drv:postinstall (udev `MODE="0666"`), nrt-ts (`NeuronCore(s) not
available`: kill the holder, e.g. a Jupyter kernel).
"""

from __future__ import annotations

from neurondoctor.facts.host import DeviceNode, HostSnapshot
from neurondoctor.rules.check import Check, FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext, neuron_host
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding

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
    in_container = snapshot.container
    if in_container:
        devices = " ".join(f"--device=/dev/neuron{index}" for index in range(expected))
        detail = ("This container was started without the Neuron devices: the runtime fails with "
                  "`TDRV:tdrv_get_dev_info No neuron device available`.")
        fix = [f"docker run {devices} …  # or AWS_NEURON_VISIBLE_DEVICES=ALL with the Neuron OCI hook"]
    elif "neuron" not in snapshot.modules:
        return []  # the driver findings explain it
    else:
        detail = "The driver is loaded but some device nodes are missing (`Could not open the nd1`)."
        fix = ["sudo rmmod neuron", "sudo modprobe neuron", "ls -l /dev/neuron*"]
    return [Finding(
        id="ND-DEV-001",
        category="device-missing",
        severity=SEVERITY_ERROR,
        title=f"{nodes} of {expected} Neuron device nodes present" + (" in this container" if in_container else ""),
        detail=detail,
        evidence={"pci": [function.address for function in snapshot.pci],
                  "nodes": [node.path for node in snapshot.device_nodes],
                  "instance_type": ctx.facts.host.instance_type, "container": in_container},
        fix=fix,
    )]


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


def device_permission(ctx: RuleContext) -> list[Finding]:
    """ND-DEV-002: device nodes this user cannot open read-write (or not character devices at all)."""
    snapshot = ctx.facts.host.snapshot
    blocked = [node for node in snapshot.device_nodes if not node.is_char_device or not _accessible(node, snapshot)]
    if not blocked:
        return []
    not_char = [node.path for node in blocked if not node.is_char_device]
    return [Finding(
        id="ND-DEV-002",
        category="device-permission",
        severity=SEVERITY_ERROR if snapshot.uid is not None or not_char else SEVERITY_WARNING,
        title=f"{len(blocked)} Neuron device node(s) not usable by "
              + ("this user" if snapshot.uid is not None else "all users") + ": "
              + ", ".join(f"{node.path} ({oct(node.mode)})" for node in blocked[:4]),
        detail=("The driver's udev rule makes the nodes `MODE=\"0666\"`; a changed rule or a container runtime "
                "that copies nodes with tighter modes leaves the runtime unable to open them."
                + (f" Not character devices: {', '.join(not_char)}." if not_char else "")),
        evidence={"nodes": [{"path": node.path, "mode": oct(node.mode), "uid": node.uid, "gid": node.gid}
                            for node in blocked], "uid": snapshot.uid},
        fix=[f"sudo chmod 0666 {' '.join(node.path for node in blocked if node.is_char_device)}",
             "sudo udevadm trigger --subsystem-match=neuron_device"] if len(not_char) < len(blocked)
        else ["sudo rmmod neuron", "sudo modprobe neuron"],
    )]


def _age(seconds: float | None) -> str:
    if seconds is None:
        return "age unknown"
    if seconds >= 3600:
        return f"{seconds / 3600:.0f} h old"
    return f"{seconds / 60:.0f} min old"


def cores_busy(ctx: RuleContext) -> list[Finding]:
    """ND-DEV-003: processes holding Neuron devices (their cores are not available to a new job)."""
    snapshot = ctx.facts.host.snapshot
    if not snapshot.holders:
        return []
    per_device = {device.name: device.core_count for device in snapshot.sysfs_devices}
    held = sorted({device for holder in snapshot.holders for device in holder.devices})
    held_cores = sum(per_device.get(device.rsplit("/", 1)[-1]) or 0 for device in held)
    total = ctx.total_cores()
    seen = (f"; a new job sees {total - held_cores} of {total} NeuronCores" if total and held_cores else "")
    return [Finding(
        id="ND-DEV-003",
        category="cores-busy",
        severity=SEVERITY_WARNING,
        title=f"{len(held)} Neuron device(s) held by "
              + ", ".join(f"PID {holder.pid} ({holder.command}, {_age(holder.age_seconds)})"
                          for holder in snapshot.holders[:3]) + seen,
        detail=("A process that holds a device keeps its NeuronCores: a new job fails with `NRT:nrt_allocate_neuron_"
                "cores NeuronCore(s) not available` or gets fewer cores. Leftover notebook kernels are the usual "
                "holders."),
        evidence={"holders": [{"pid": h.pid, "command": h.command, "cmdline": h.cmdline, "devices": h.devices,
                               "age_seconds": h.age_seconds} for h in snapshot.holders]},
        fix=[f"kill {holder.pid}  # {holder.cmdline[:80] or holder.command}" for holder in snapshot.holders],
    )]


def devices_summary(ctx: RuleContext) -> str:
    return f"{len(ctx.facts.host.snapshot.device_nodes)} device node(s) usable, no process holds a NeuronCore"


RULE_SET = RuleSet(
    rules=(devices_missing, device_permission, cores_busy),
    findings=(
        FindingSpec("ND-DEV-001", "device-missing", SEVERITY_ERROR,
                    "fewer device nodes than Neuron devices (a container without --device)"),
        FindingSpec("ND-DEV-002", "device-permission", SEVERITY_ERROR, "device nodes this user cannot open"),
        FindingSpec("ND-DEV-003", "cores-busy", SEVERITY_WARNING, "processes (PID, command, age) holding devices"),
    ),
)
CHECK = Check("devices", "Devices & cores", (RULE_SET,), devices_summary, applies=neuron_host,
              needs=("hardware", "processes", "neuron-ls"))
