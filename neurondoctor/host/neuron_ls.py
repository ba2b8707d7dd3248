"""`neuron-ls -j` on a live host, parsed by keys (the table layout varies between versions, neuron-facts §4).

The JSON form is a top-level array of devices: `neuron_device`, `nc_count`, `neuroncore_ids`,
`neuron_processes`, `logical_neuroncore_config` (trn2). Anything else is ignored; garbage yields no devices.
"""

from __future__ import annotations

import json
from typing import Any

from neurondoctor.facts.host import NeuronLsDevice

NEURON_LS_TIMEOUT = 10.0
NEURON_LS_PATHS = ("/opt/aws/neuron/bin",)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def parse_neuron_ls_json(text: str) -> list[NeuronLsDevice]:
    try:
        document = json.loads(text)
    except ValueError:
        return []
    if not isinstance(document, list):
        return []
    devices = []
    for entry in document:
        if not isinstance(entry, dict) or _int_or_none(entry.get("neuron_device")) is None:
            continue
        core_ids = entry.get("neuroncore_ids")
        processes = entry.get("neuron_processes")
        devices.append(NeuronLsDevice(
            index=int(entry["neuron_device"]),
            core_count=_int_or_none(entry.get("nc_count")),
            core_ids=[value for value in core_ids if _int_or_none(value) is not None]
            if isinstance(core_ids, list) else [],
            processes=[process for process in processes if isinstance(process, dict)]
            if isinstance(processes, list) else [],
            logical_neuroncore_config=_int_or_none(entry.get("logical_neuroncore_config")),
        ))
    return devices
