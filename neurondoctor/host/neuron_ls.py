"""`neuron-ls -j` on a live host, parsed by keys (the table layout varies between versions, docs/neuron-facts.md §4).

The JSON form is a top-level array of devices: `neuron_device`, `nc_count`, `neuroncore_ids`,
`neuron_processes`, `logical_neuroncore_config` (trn2). Anything else is ignored; garbage yields no devices.
"""

from __future__ import annotations

import json
from typing import Any

from neurondoctor.facts.host import NeuronLsDevice
from neurondoctor.neuron_version import release_tuple

NEURON_LS_TIMEOUT = 10.0
NEURON_LS_PATHS = ("/opt/aws/neuron/bin",)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _device(entry: Any, assumed: bool) -> NeuronLsDevice | None:
    if not isinstance(entry, dict) or _int_or_none(entry.get("neuron_device")) is None:
        return None
    core_ids = entry.get("neuroncore_ids")
    processes = entry.get("neuron_processes")
    return NeuronLsDevice(
        index=int(entry["neuron_device"]),
        core_count=_int_or_none(entry.get("nc_count")),
        core_ids=[value for value in core_ids if _int_or_none(value) is not None]
        if isinstance(core_ids, list) else [],
        processes=[process for process in processes if isinstance(process, dict)]
        if isinstance(processes, list) else [],
        logical_neuroncore_config=_int_or_none(entry.get("logical_neuroncore_config")),
        assumed=assumed,
    )


def parse_neuron_ls_json(text: str) -> list[NeuronLsDevice]:
    """Both documents: `-j` (to 2.33) is a top-level array of devices; `--output-format json` (from 2.34,
    announce-intent-eos-neuron-ls-json.rst) is an object with top-level instance and UltraServer fields. The 2.34
    document is announced, not documented: its devices are taken from any top-level list of objects that carry the
    2.33 device keys, and marked `assumed` so that nothing is judged from them alone."""
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return []
    if isinstance(document, list):
        entries, assumed = document, False
    elif isinstance(document, dict):
        lists = [value for value in document.values() if isinstance(value, list)]
        entries, assumed = next((items for items in lists if any(_device(item, True) for item in items)), []), True
    else:
        return []
    return [device for device in (_device(entry, assumed) for entry in entries) if device is not None]


def json_flags(tools_version: str | None) -> tuple[list[str], list[str]]:
    """(the flags to try first, the fallback): `--output-format json` from aws-neuronx-tools 2.34 (Neuron 2.34 drops
    `-j/--json-output`), `-j` before; the other one when the first fails (a tools version not read)."""
    modern, classic = ["--output-format", "json"], ["-j"]
    return (modern, classic) if release_tuple(tools_version or "")[:2] >= (2, 34) else (classic, modern)
