"""`neuron-ls` on a live host: its JSON, parsed by keys, and its table, for tools that answer neither JSON flag.

The JSON form is a top-level array of devices: `neuron_device`, `nc_count`, `neuroncore_ids`,
`neuron_processes`, `logical_neuroncore_config` (trn2). Anything else is ignored; garbage yields no devices.
The table's columns changed between tools versions (tests/recorded/neuron-ls/: four layouts from 2021 to 2026), so
it is read by its header words, never by position. Both forms were checked against the outputs recorded there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from neurondoctor import json_data
from neurondoctor.facts.host import NeuronLsDevice
from neurondoctor.neuron_version import release_tuple
from neurondoctor.strict_numbers import json_count, parse_count

NEURON_LS_TIMEOUT = 10.0
NEURON_LS_PATHS = ("/opt/aws/neuron/bin",)
_MAX_INDEX = 999_999_999  # a device index, core id or count past this is not one neuron-ls prints


def _int_or_none(value: Any) -> int | None:
    """A count or an index neuron-ls printed: a non-negative integer, bounded (json_count)."""
    return json_count(value, maximum=_MAX_INDEX)


def _device(entry: Any, assumed: bool) -> NeuronLsDevice | None:
    if not isinstance(entry, dict) or _int_or_none(entry.get("neuron_device")) is None:
        return None
    core_ids = entry.get("neuroncore_ids")
    processes = entry.get("neuron_processes")
    return NeuronLsDevice(
        index=json_count(entry["neuron_device"], maximum=_MAX_INDEX) or 0,
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
        document = json_data.loads(text)
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


# The table (tests/recorded/neuron-ls/SOURCES.md). The early Trn2 table counted physical cores under NEURON CORES
# and logical ones under LOGICAL NC; later tables print the logical count under NEURON CORES, as `nc_count` does.
DEVICE, CORES, LOGICAL_CORES, CORE_IDS = "NEURON DEVICE", "NEURON CORES", "LOGICAL NC", "NEURON CORE IDS"
PID, COMMAND, RUNTIME_VERSION = "PID", "COMMAND", "RUNTIME VERSION"
# Compiled by `re` when a table is first read (tools that answer no JSON flag).
_HEADER_LINE = r"^(instance-type|instance-id|logical-neuroncore-config):[ \t]*(\S*)[ \t]*$"
_TABLE_ROWS = 4096


@dataclass
class NeuronLsTable:
    """`neuron-ls`'s plain table (tools that answer no JSON flag): the lines above it, its columns, its devices."""

    header: dict[str, str] = field(default_factory=dict)  # the lines above the table: instance-type, …
    columns: list[str] = field(default_factory=list)
    devices: list[NeuronLsDevice] = field(default_factory=list)


def _cells(line: str, border: str) -> Optional[list[str]]:
    """A row's cells, cut where the border has its `+` (a command may hold a `|`); by `|` when the row is not as
    wide as the border. None when the row does not have the border's columns."""
    stops = [index for index, char in enumerate(border) if char == "+"]
    if len(line) == len(border) and all(line[index] == "|" for index in stops):
        return [line[start + 1:end].strip() for start, end in zip(stops, stops[1:])]
    parts = line.strip("|").split("|")
    return [part.strip() for part in parts] if len(parts) == len(stops) - 1 else None


_MAX_CORE_IDS = 1024  # a device has 8 NeuronCores; a cell naming more is not a core list (and is not expanded)


def _core_ids(text: str) -> list[int]:
    """`0-3`, `60-63`, `0, 1`, `0-1,4-5`: the ids listed; nothing for a value that is not a list of ids."""
    ids: list[int] = []
    for part in filter(None, (piece.strip() for piece in text.split(","))):
        bounds = part.split("-")
        if not all(_int(bound) is not None for bound in bounds) or len(bounds) > 2:
            return []
        low, high = _int(bounds[0]) or 0, _int(bounds[-1]) or 0
        if high < low or len(ids) + high - low + 1 > _MAX_CORE_IDS:
            return []
        ids.extend(range(low, high + 1))
    return ids


def _int(text: str) -> Optional[int]:
    """A count or an id in a table cell (strict_numbers: ASCII digits only, and not a huge number)."""
    return parse_count(text, maximum=_MAX_INDEX)


def parse_neuron_ls_table(text: str) -> NeuronLsTable:
    """The devices of a `neuron-ls` table (any of its layouts), with the processes of continuation rows and the
    header lines above it. Text that holds no table yields no devices."""
    table = NeuronLsTable()
    lines = [line.strip() for line in text.splitlines()]
    borders = [index for index, line in enumerate(lines) if line.startswith("+-") and line.endswith("+")]
    if len(borders) < 2:
        return table
    for line in lines[:borders[0]]:
        match = re.match(_HEADER_LINE, line)
        if match:
            table.header[match.group(1)] = match.group(2)
    border = lines[borders[0]]
    titles: list[list[str]] = []
    for line in lines[borders[0] + 1:borders[1]]:
        cells = _cells(line, border)
        if cells is None:
            return table
        titles.append(cells)
    table.columns = [" ".join(" ".join(parts).split()) for parts in zip(*titles)]
    if DEVICE not in table.columns:
        return table
    lnc = _int(table.header.get("logical-neuroncore-config", ""))
    current: Optional[NeuronLsDevice] = None
    for line in lines[borders[1] + 1:borders[1] + 1 + _TABLE_ROWS]:
        if line.startswith("+"):
            continue
        if not line.startswith("|"):
            break
        cells = _cells(line, border)
        if cells is None or len(cells) != len(table.columns):
            continue
        row = dict(zip(table.columns, cells))
        index = _int(row[DEVICE])
        if index is not None:
            cores = _int(row.get(LOGICAL_CORES, "")) if LOGICAL_CORES in row else _int(row.get(CORES, ""))
            current = NeuronLsDevice(index=index, core_count=cores, core_ids=_core_ids(row.get(CORE_IDS, "")),
                                     logical_neuroncore_config=lnc)
            table.devices.append(current)
        pid = _int(row.get(PID, ""))
        if current is not None and pid is not None:
            current.processes.append({"pid": pid, "command": row.get(COMMAND, ""),
                                      "neuron_runtime_version": row.get(RUNTIME_VERSION, "")})
    return table
