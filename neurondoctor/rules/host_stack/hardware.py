"""Hardware: the Neuron devices on the PCI bus and the driver's uncorrectable ECC counters.

Source: nrt-ts (`Uncorrectable memory error is detected`: the hardware is faulty; stop and start the instance to
move to other hardware). The kernel log's `NEURON_HW_ERR=` lines (SRAM/NC/HBM uncorrectable, DMA errors, the four
kinds AWS's Neuron problem detector and the EKS node monitoring agent watch) are judged in a window — this boot by
default — so the finding clears once the instance moved to other hardware.
"""

from __future__ import annotations

from neurondoctor.facts.host import ECC_COLLECTOR
from neurondoctor.facts.names import DEVICE_NAMES
from neurondoctor.rules.check import Check, FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext, neuron_host
from neurondoctor.rules.finding import SEVERITY_ERROR, Finding
from neurondoctor.rules.fix import Fix, Shell, Word, note, pipeline
from neurondoctor.rules.host_stack.node_ways import read_only_node

# On Nitro instances the DMI board asset tag is the instance id, for when the doctor could not read it.
_INSTANCE_ID_ON_HOST = Shell('"$(cat /sys/devices/virtual/dmi/id/board_asset_tag)"')


def stop_start(ctx: RuleContext) -> Fix:
    """Stop and start (not reboot) the instance, so it moves to other hardware. Bottlerocket has no AWS CLI or shell
    on the host: the line runs from another machine, with the instance id the doctor read (without it, the note)."""
    instance: Word = ctx.facts.host.instance_id or _INSTANCE_ID_ON_HOST
    if read_only_node(ctx.facts.host.snapshot):
        if ctx.facts.host.instance_id is None:
            return Fix([note("from a machine with the AWS CLI, stop and start this instance (or replace the node): "
                             "its id is not known here")])
        return Fix([note("from a machine with the AWS CLI (not on this node), or replace the node:"),
                    *_stop_start_line(instance).steps])
    return _stop_start_line(instance)


def _stop_start_line(instance: Word) -> Fix:
    return Fix([pipeline(["aws", "ec2", "stop-instances", "--instance-ids", instance],
                         ["aws", "ec2", "wait", "instance-stopped", "--instance-ids", instance],
                         ["aws", "ec2", "start-instances", "--instance-ids", instance], operator="&&")])


def uncorrectable_ecc(ctx: RuleContext) -> list[Finding]:
    """ND-HW-001: uncorrectable memory/SRAM ECC errors counted by the driver."""
    snapshot = ctx.facts.host.snapshot
    failing = {device.name: {name: count for name, count in device.ecc_uncorrected.items() if count > 0}
               for device in snapshot.sysfs_devices}
    failing = {name: counters for name, counters in failing.items() if counters}
    if not failing:
        return []
    return [Finding(
        id="ND-HW-001",
        category="hardware-error",
        severity=SEVERITY_ERROR,
        title=f"uncorrectable ECC errors on {', '.join(sorted(failing))}",
        detail=("The runtime reports `Uncorrectable memory error is detected` and the kernel log "
                "`NEURON_HW_ERR=…_UNCORRECTABLE_ERROR … action=TERMINATE_INSTANCE`: the hardware is faulty. "
                "Stop and start the instance to move to other hardware (a reboot keeps it)."),
        evidence={"counters": failing},
        fix=stop_start(ctx),
    )]


def kernel_hardware_errors(ctx: RuleContext) -> list[Finding]:
    """ND-HW-002: `NEURON_HW_ERR=` lines in the kernel log's window."""
    snapshot = ctx.facts.host.snapshot
    if not snapshot.kernel_hw_errors:
        return []
    kinds: dict[str, set[str]] = {}
    for error in snapshot.kernel_hw_errors:
        kinds.setdefault(error.kind, set()).add(f"nd{error.device}" if error.device is not None else "a device")
    actions = sorted({error.action for error in snapshot.kernel_hw_errors if error.action})
    shown = "; ".join(f"{kind} on {', '.join(sorted(devices))}" for kind, devices in sorted(kinds.items()))
    return [Finding(
        id="ND-HW-002",
        category="hardware-error",
        severity=SEVERITY_ERROR,
        title=f"NEURON_HW_ERR={shown} in the kernel log ({snapshot.kernel_log_source}"
              + (f"; action={', '.join(actions)})" if actions else ")"),
        detail=("The driver found an uncorrectable hardware error: the device is faulty. Stop and start the instance "
                "to move to other hardware (a reboot keeps it); the finding clears with the next boot's log."),
        evidence={"lines": [error.line for error in snapshot.kernel_hw_errors[:10]],
                  "count": len(snapshot.kernel_hw_errors), "source": snapshot.kernel_log_source},
        fix=stop_start(ctx),
    )]


def hardware_summary(ctx: RuleContext) -> str:
    """`16 × Trainium1 (32 NeuronCores) on PCI, 16 device nodes`, on Trn2/Trn3 the logical cores at the config in
    effect (`64 logical NeuronCores at LNC=2`), or that there is no Neuron hardware."""
    snapshot = ctx.facts.host.snapshot
    if not snapshot.pci and not snapshot.device_nodes:
        return "none found (this is not a Trainium/Inferentia instance)"
    family = snapshot.pci[0].family if snapshot.pci else ""
    lnc = ctx.logical_nc_config()
    cores = ctx.total_cores() if lnc else sum(device.core_count or 0 for device in snapshot.sysfs_devices)
    core_text = (f" ({cores} logical NeuronCores at LNC={lnc})" if lnc else f" ({cores} NeuronCores)") if cores else ""
    layout = f"; sysfs: {snapshot.sysfs_layout} layout" if snapshot.sysfs_devices and snapshot.sysfs_layout else ""
    return (f"{len(snapshot.pci)} × {DEVICE_NAMES.get(family, family or 'Neuron device')}{core_text} on PCI, "
            f"{len(snapshot.device_nodes)} device nodes{layout}")


RULE_SET = RuleSet(
    rules=(uncorrectable_ecc, kernel_hardware_errors),
    findings=(FindingSpec("ND-HW-001", "hardware-error", SEVERITY_ERROR, "uncorrectable ECC counters"),
              FindingSpec("ND-HW-002", "hardware-error", SEVERITY_ERROR,
                          "NEURON_HW_ERR lines in the kernel log of this boot (or since --since)")),
)
CHECK = Check("hardware", "Neuron hardware", (RULE_SET,), hardware_summary, applies=neuron_host,
              needs=("hardware", ECC_COLLECTOR), not_applicable=hardware_summary)
