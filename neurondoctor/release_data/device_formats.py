"""The device-side formats the doctor reads, and what each rests on: outputs real hosts or AWS's pages printed
(recorded in the repository's tests/recorded/, every parser tested on every file), or an assumption.

This workplace has no Neuron device. What no public output shows is ASSUMED, said so by `manifests status`, and
never judged alone; `scripts/device-acceptance.sh` on a device records each of them (the member named here), so one
run on real hardware confirms or corrects them.
"""

from __future__ import annotations

from dataclasses import dataclass

RECORDED = "recorded"
ASSUMED = "ASSUMED"


@dataclass(frozen=True)
class DeviceFormat:
    name: str
    status: str  # RECORDED | ASSUMED
    basis: str  # what it rests on
    confirmed_by: str  # the member of a device-acceptance archive that shows the real format


DEVICE_FORMATS = (
    DeviceFormat("neuron-ls -j / --json-output", RECORDED,
                 "a trn1.2xlarge (tools 2.28.23.0), a trn2.48xlarge device at LNC=2 (runtime 2.34.10), AWS's guide",
                 "formats/neuron-ls-j.json"),
    DeviceFormat("neuron-ls table (read when no JSON flag answers)", RECORDED,
                 "four layouts from 2021 to 2026 on inf1, inf2, trn1 and trn2", "formats/neuron-ls.txt"),
    DeviceFormat("neuron-ls --output-format json (tools 2.34)", ASSUMED,
                 "announced with top-level instance and UltraServer fields, no example published: its devices are "
                 "read by the 2.33 keys and no core count is judged from them",
                 "formats/neuron-ls-output-format-json.json"),
    DeviceFormat("neuron-ls core counts at LNC=2 (Trn2/Trn3)", RECORDED,
                 "nc_count and neuroncore_ids are logical: 4 per Trainium2 device, ids 0-63 on a trn2.48xlarge",
                 "formats/neuron-ls-j.json"),
    DeviceFormat("sysfs core_count on Trn2/Trn3", ASSUMED,
                 "counted as physical (8 per device) and halved at LNC=2; the driver's published source zeroes the "
                 "number, so the count the driver writes is not shown anywhere", "sysfs/attributes.tsv"),
    DeviceFormat("sysfs tree, drivers before 2.31", RECORDED,
                 "the driver's source (2.24.7.0) and a trn1.2xlarge's values (driver 2.26.5.0); core_count is "
                 "root's only before driver 2.28, so a user counts the neuron_core<N> directories",
                 "sysfs/attributes.tsv"),
    DeviceFormat("sysfs tree, driver 2.31 and newer", ASSUMED,
                 "the sysfs guide says nodes moved, with no map: each is read at its old path, else by its file "
                 "name under the device; what is found nowhere is unknown, never a device problem",
                 "sysfs/attributes.tsv, sysfs/tree.txt"),
    DeviceFormat("loaded driver version (/sys/module/neuron/version)", RECORDED,
                 "modinfo of release builds and of Bottlerocket's 2.x.<build>.0 builds, which name no release and "
                 "are compared with none", "formats/modinfo-neuron.txt, formats/module-version.txt"),
    DeviceFormat("driver install: loaded now and at boot", RECORDED,
                 "the driver's DKMS scripts (2.24.7.0): preinstall unloads the old module for the running kernel, "
                 "postinstall writes /etc/modules-load.d/neuron.conf and loads the new one; a held device aborts "
                 "the install and the old module keeps running", "formats/modules-load.txt, formats/lsmod.txt"),
    DeviceFormat("kernel log NEURON_HW_ERR lines", RECORDED,
                 "the runtime troubleshooting guide and the EKS node monitoring agent's test lines",
                 "formats/dmesg-neuron.txt"),
    DeviceFormat("nccom-test output", RECORDED, "the NCCOM-TEST guide's examples (tables, JSON report, failures)",
                 "formats/nccom-test-version.txt"),
)


def render_device_formats() -> list[str]:
    """The lines `manifests status` prints: the assumed formats first."""
    ordered = sorted(DEVICE_FORMATS, key=lambda item: item.status != ASSUMED)
    return ["Device formats (scripts/device-acceptance.sh on a device records each; its archive confirms or corrects "
            "them):"] + [f"  {item.status:<8} {item.name}: {item.basis}" for item in ordered]


def device_formats_document() -> list[dict[str, str]]:
    return [{"name": item.name, "status": item.status, "basis": item.basis, "confirmed_by": item.confirmed_by}
            for item in DEVICE_FORMATS]
