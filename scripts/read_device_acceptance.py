"""Read an archive of `scripts/device-acceptance.sh` and say, for each device format the doctor assumes or rests on
(`neurondoctor manifests status`), whether this device confirms or corrects it, with the evidence: the one step
that turns a run on real hardware into the changes the doctor needs.

Usage: .venv/bin/python scripts/read_device_acceptance.py ARCHIVE [--json]   (the doctor installed, as the README does)

Exit: 0 when nothing is corrected, 1 when something is (the evidence says what to change), 2 when the archive cannot
be read. The archive is read in memory (regular members under `device-acceptance/`, bounded in size, in number and in
path length: one line when an archive exceeds them) and is data, never commands: its sysfs paths are accepted only
under the driver's own trees, copied into a temporary folder the doctor's sysfs reader reads, and that folder is
removed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any, Optional

from neurondoctor.host import neuron_devices
from neurondoctor.host.neuron_ls import parse_neuron_ls_json, parse_neuron_ls_table
from neurondoctor.host.rootfs import RootFS
from neurondoctor.neuron_version import names_a_release, release_tuple
from neurondoctor.release_data.device_formats import ASSUMED, DEVICE_FORMATS
from neurondoctor.rules.probes.perf import logical_cores
from neurondoctor.strict_numbers import parse_count

PREFIX = "device-acceptance/"
MEMBER_LIMIT = 16 << 20
TOTAL_LIMIT = 256 << 20
# The script writes a few dozen members and one attributes.tsv of a few thousand lines, on paths of under 200
# characters: ten thousand of either, or a path of more than 1,024 characters, is no archive of it (and walking a
# million empty members took seconds; a path longer than NAME_MAX or PATH_MAX could not be rebuilt).
MEMBER_COUNT_LIMIT = 10_000
PATH_LIMIT = 1024
NAME_LIMIT = 255  # one path component (NAME_MAX)
CONFIRMED, CORRECTED, NOT_SHOWN, NOT_APPLICABLE = "CONFIRMED", "CORRECTED", "NOT SHOWN", "NOT APPLICABLE"
# Only the driver's own trees are rebuilt, and only with plain path words: an archive is someone else's data.
# (`sys/class/neuron_device` holds only links to the devices, recorded as the error of reading a directory.)
_SYSFS_PATH = re.compile(rf"^/sys/(devices/virtual/neuron_device|module/neuron)"
                         rf"(/[A-Za-z0-9_.:-]{{1,{NAME_LIMIT}}})+$")
_CORE_DIR = re.compile(r"/(neuron\d+)/neuron_core(\d+)/")
_FAMILIES = {"Trainium1": "trn1", "Trainium2": "trn2", "Trainium3": "trn3", "Inferentia2": "inf2",
             "Inferentia": "inf1"}
PHYSICAL_PER_DEVICE = {"trn2": 8, "trn3": 8}  # docs: 8 physical NeuronCores per Trainium2/3 chip


class Unreadable(Exception):
    pass


def read_archive(path: Path) -> dict[str, bytes]:
    """{member name without the `device-acceptance/` prefix: its bytes} for the regular members."""
    members: dict[str, bytes] = {}
    total = 0
    try:
        with tarfile.open(path, "r:*") as archive:
            for count, member in enumerate(archive, start=1):
                if count > MEMBER_COUNT_LIMIT:
                    raise Unreadable(f"{path}: more than {MEMBER_COUNT_LIMIT} members")
                if len(member.name) > PATH_LIMIT or len(member.linkname) > PATH_LIMIT:
                    raise Unreadable(f"{path}: a member's path is longer than {PATH_LIMIT} characters")
                if not member.isfile() or not member.name.startswith(PREFIX) or member.size > MEMBER_LIMIT:
                    continue
                total += member.size
                if total > TOTAL_LIMIT:
                    raise Unreadable(f"{path}: more than {TOTAL_LIMIT >> 20} MiB of members")
                handle = archive.extractfile(member)
                if handle is not None:
                    members[member.name[len(PREFIX):]] = handle.read(MEMBER_LIMIT)
    except (OSError, tarfile.TarError, EOFError) as error:
        first = (str(error).splitlines() or [type(error).__name__])[0]
        raise Unreadable(f"{path}: not a readable device-acceptance archive ({first})") from error
    if "MANIFEST.tsv" not in members:
        raise Unreadable(f"{path}: no {PREFIX}MANIFEST.tsv (not written by scripts/device-acceptance.sh)")
    return members


def _text(members: dict[str, bytes], name: str) -> Optional[str]:
    data = members.get(name)
    return data.decode("utf-8", errors="replace") if data is not None else None


def exit_codes(members: dict[str, bytes]) -> dict[str, int]:
    codes = {}
    for line in (_text(members, "MANIFEST.tsv") or "").splitlines()[1:MEMBER_COUNT_LIMIT + 1]:
        fields = line.split("\t")
        code = parse_count(fields[1], minimum=-255, maximum=255) if len(fields) >= 2 else None
        if code is not None:
            codes[fields[0]] = code
    return codes


def attributes(members: dict[str, bytes]) -> dict[str, str]:
    """sysfs/attributes.tsv: {path: value} (the script turned each value's newlines into spaces). A path longer than
    PATH_LIMIT (or a component longer than NAME_LIMIT) is skipped; more than MEMBER_COUNT_LIMIT lines is one line."""
    values = {}
    lines = (_text(members, "sysfs/attributes.tsv") or "").splitlines()
    if len(lines) > MEMBER_COUNT_LIMIT:
        raise Unreadable(f"sysfs/attributes.tsv: more than {MEMBER_COUNT_LIMIT} attributes")
    for line in lines:
        path, _, value = line.partition("\t")
        unread = value.startswith(("head: ", "timeout: "))  # the script's reader could not read it
        if (len(path) <= PATH_LIMIT and _SYSFS_PATH.match(path) and "/../" not in path + "/"
                and "/./" not in path + "/" and not unread):
            values[path] = value.strip()
    return values


def build_tree(values: dict[str, str], driver: Optional[str], root: Path) -> None:
    """The recorded attributes as files under `root`, the loaded driver's version beside them."""
    for path, value in values.items():
        target = root / path.lstrip("/")
        if target.parent.exists() and not target.parent.is_dir():
            continue  # a value recorded where another one is a directory
        target.parent.mkdir(parents=True, exist_ok=True)
        if not target.is_dir():
            target.write_text(value + "\n")
    if driver:
        version = root / "sys/module/neuron/version"
        version.parent.mkdir(parents=True, exist_ok=True)
        version.write_text(driver + "\n")


def neuron_monitor_hardware(text: Optional[str]) -> Optional[dict[str, Any]]:
    """`neuron_hardware_info` of neuron-monitor's first record (one JSON object per line), or None."""
    for line in (text or "").splitlines():
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        info = record.get("neuron_hardware_info") if isinstance(record, dict) else None
        if isinstance(info, dict):
            return info
        break
    return None


def _verdict(name: str, verdict: str, *evidence: str) -> dict[str, Any]:
    return {"format": name, "verdict": verdict, "evidence": [line for line in evidence if line]}


def sysfs_tree(root: Path, driver: Optional[str]) -> list[dict[str, Any]]:
    """Where each node the doctor reads is on this device, against the tree the driver's version implies."""
    fs = RootFS(str(root))
    layout = neuron_devices.sysfs_layout(driver)
    before = "sysfs tree, drivers before 2.31"
    after = "sysfs tree, driver 2.31 and newer"
    name = before if layout == neuron_devices.LAYOUT_CLASSIC else after
    dirs = neuron_devices.device_dirs(fs)
    if not dirs:
        return [_verdict(name, NOT_SHOWN, "no neuron_device tree in sysfs/attributes.tsv")]
    device = dirs[0]
    named = neuron_devices.files_by_name(fs, device)
    found, moved, missing = [], [], []
    for node, relative in neuron_devices.CLASSIC_PATHS.items():
        if fs.lexists(f"{device}/{relative}"):
            found.append(node)
        elif node in named:
            moved.append(f"{node} -> {named[node][len(device) + 1:]}")
        else:
            missing.append(node)
    where = (f"driver {driver or 'unknown'}; {device}: {len(found)} of {len(neuron_devices.CLASSIC_PATHS)} nodes at "
             "their classic paths")
    if layout == neuron_devices.LAYOUT_CLASSIC:
        if moved or missing:
            return [_verdict(before, CORRECTED, where, "moved: " + ", ".join(moved) if moved else "",
                             "not found: " + ", ".join(missing) if missing else "")]
        return [_verdict(before, CONFIRMED, where), _verdict(after, NOT_APPLICABLE, f"driver {driver} is older")]
    verdict = CORRECTED if missing else CONFIRMED
    return [_verdict(after, verdict, where, "found by name (the real map): " + ", ".join(moved) if moved else "",
                     "found nowhere (the doctor reads them as unknown): " + ", ".join(missing) if missing else "")]


def _listed_devices(members: dict[str, bytes]) -> list[Any]:
    for member in ("formats/neuron-ls-j.json", "formats/neuron-ls-output-format-json.json"):
        devices = parse_neuron_ls_json(_text(members, member) or "")
        if devices:
            return devices
    return parse_neuron_ls_table(_text(members, "formats/neuron-ls.txt") or "").devices


def core_counts(root: Path, driver: Optional[str], members: dict[str, bytes],
                environ: dict[str, str]) -> list[dict[str, Any]]:
    """What sysfs core_count counts here: the doctor's count from it against neuron-ls's and neuron-monitor's."""
    name = "sysfs core_count on Trn2/Trn3"
    devices, _ = neuron_devices.read_sysfs_devices(RootFS(str(root)), driver)
    family = next((_FAMILIES[device.device_name] for device in devices if device.device_name in _FAMILIES), None)
    if family not in PHYSICAL_PER_DEVICE:
        return [_verdict(name, NOT_APPLICABLE, f"this is a {family or 'device of unknown family'}")]
    counts = [device.core_count for device in devices]
    if not counts or None in counts:
        return [_verdict(name, NOT_SHOWN, "core_count was not recorded for every device")]
    hardware = neuron_monitor_hardware(_text(members, "formats/neuron-monitor-first-record.json")) or {}
    listed = _listed_devices(members)
    lnc = hardware.get("logical_neuroncore_config") or next(
        (device.logical_neuroncore_config for device in listed if device.logical_neuroncore_config), None)
    setting = str(lnc) if lnc else environ.get("NEURON_LOGICAL_NC_CONFIG", "")
    doctor = logical_cores([count or 0 for count in counts], family, setting)
    tools = sum(device.core_count or 0 for device in listed) or (
        hardware.get("neuroncore_per_device_count", 0) * len(counts)
        if isinstance(hardware.get("neuroncore_per_device_count"), int) else 0)
    shown = sorted({count or 0 for count in counts})
    evidence = (f"core_count {shown} on {len(counts)} devices at LNC={setting or 'default (2)'}: the doctor counts "
                f"{doctor} NeuronCores; neuron-ls/neuron-monitor count {tools or 'nothing'}")
    if not tools:
        return [_verdict(name, NOT_SHOWN, evidence, "neither neuron-ls nor neuron-monitor gave a core count")]
    if doctor == tools:
        return [_verdict(name, CONFIRMED, evidence,
                         f"core_count is physical ({PHYSICAL_PER_DEVICE[family]} per device)"
                         if set(counts) == {PHYSICAL_PER_DEVICE[family]} else "")]
    return [_verdict(name, CORRECTED, evidence, "what core_count counts is not what the doctor assumes: "
                     "change neurondoctor/rules/probes/perf.py logical_cores and rules/context.py total_cores")]


def output_format_json(members: dict[str, bytes], codes: dict[str, int]) -> list[dict[str, Any]]:
    """neuron-ls --output-format json: does the doctor read this tools version's document?"""
    name = "neuron-ls --output-format json (tools 2.34)"
    member = "formats/neuron-ls-output-format-json.json"
    version_line = (_text(members, "formats/neuron-ls-version.txt") or "").strip().splitlines()
    tools = next((word for line in version_line for word in re.findall(r"\d+\.\d+\.\d+(?:\.\d+)?", line)), None)
    modern = tools is not None and release_tuple(tools)[:2] >= (2, 34)
    said = f"tools {tools}" if tools else "tools version not shown"
    text = _text(members, member)
    if text is None:
        return [_verdict(name, NOT_SHOWN, f"no {member} in the archive")]
    if codes.get(member, 0) != 0:
        why = (_text(members, member + ".stderr") or text).strip().splitlines()[:1]
        return [_verdict(name, CORRECTED if modern else NOT_APPLICABLE,
                         f"{said}: `neuron-ls --output-format json` exited {codes[member]}", *why)]
    try:
        document = json.loads(text)
    except (ValueError, RecursionError):
        return [_verdict(name, CORRECTED if modern else NOT_APPLICABLE, f"{said}: its output is not JSON")]
    devices = parse_neuron_ls_json(text)
    shape = (f"a top-level object with keys {sorted(document)}" if isinstance(document, dict) else
             "a top-level array, as -j's" if isinstance(document, list) else "neither an object nor an array")
    classic = parse_neuron_ls_json(_text(members, "formats/neuron-ls-j.json") or "")
    agree = [(device.index, device.core_count) for device in devices] == [
        (device.index, device.core_count) for device in classic] if classic else None
    evidence = [f"{said}: {shape}; the doctor reads {len(devices)} device(s) from it",
                "the same devices and core counts as -j's" if agree else
                "not the devices -j listed" if agree is False else ""]
    if not devices:
        return [_verdict(name, CORRECTED, *evidence, "the doctor finds no device list in it: read its keys")]
    return [_verdict(name, CONFIRMED if agree is not False else CORRECTED, *evidence)]


def driver_install(members: dict[str, bytes]) -> list[dict[str, Any]]:
    """The driver package's scripts load the module now (`postinstall`: modprobe) and at every boot (modules-load)."""
    name = "driver install: loaded now and at boot"
    loads = [line for line in (_text(members, "formats/modules-load.txt") or "").splitlines()
             if line.rstrip().endswith(":neuron")]
    loaded = any(line.split()[:1] == ["neuron"] for line in (_text(members, "formats/lsmod.txt") or "").splitlines())
    evidence = ("listed to load at boot in " + ", ".join(line.split(":", 1)[0] for line in loads) if loads else
                "not listed in any modules-load.d file", "loaded now (lsmod)" if loaded else "not loaded (lsmod)")
    return [_verdict(name, CONFIRMED if loads and loaded else CORRECTED, *evidence)]


def read(members: dict[str, bytes]) -> dict[str, Any]:
    codes = exit_codes(members)
    driver = (_text(members, "formats/module-version.txt") or "").strip() or None
    environ = dict(line.split("=", 1) for line in (_text(members, "formats/environment.txt") or "").splitlines()
                   if "=" in line)
    with tempfile.TemporaryDirectory(prefix="nd-acceptance-") as scratch:
        root = Path(scratch)
        build_tree(attributes(members), driver, root)
        verdicts = sysfs_tree(root, driver) + core_counts(root, driver, members, environ)
    verdicts += output_format_json(members, codes) + driver_install(members)
    named = {item["format"] for item in verdicts}
    verdicts += [_verdict(item.name, NOT_SHOWN, "nothing in the archive answers it") for item in DEVICE_FORMATS
                 if item.status == ASSUMED and item.name not in named]
    return {"schema": "neurondoctor.device-acceptance-reading/1", "driver": driver,
            "driver_names_a_release": names_a_release(driver) if driver else None, "verdicts": verdicts}


def render(reading: dict[str, Any]) -> str:
    lines = [f"device-acceptance archive: driver {reading['driver'] or 'not recorded'}"]
    for item in reading["verdicts"]:
        lines.append(f"{item['verdict']:<15} {item['format']}")
        lines += [f"    {line}" for line in item["evidence"]]
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("archive", type=Path)
    parser.add_argument("--json", action="store_true", help="one JSON document on standard output")
    options = parser.parse_args(argv)
    try:
        reading = read(read_archive(options.archive))
    except Unreadable as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(json.dumps(reading, indent=2) if options.json else render(reading), end="" if not options.json else "\n")
    return 1 if any(item["verdict"] == CORRECTED for item in reading["verdicts"]) else 0


if __name__ == "__main__":
    sys.exit(main())
