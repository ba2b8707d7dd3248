"""Processes holding `/dev/neuron*`: `proc/<pid>/fd/*` links read as link text (never followed), with the
command and its age, so a leftover Jupyter kernel can be named (nrt-ts: `NeuronCore(s) not available`), and the
Slurm job it belongs to when a `slurmstepd` is among its ancestors (a node's own job is expected to hold cores).

`proc` and each `proc/<pid>/fd` are resolved inside the root: a `ROOT/proc` linked to the machine's `/proc`
resolves back into the root (an image shows no processes), never to the processes of the machine running the
doctor. A process with a huge number of descriptors is read up to MAX_FDS_PER_PROCESS of them (devices are
opened early, so the lowest numbers are kept).
"""

from __future__ import annotations

import os
import re
from typing import Optional

from neurondoctor.facts.device_holders import DeviceHolder
from neurondoctor.host.rootfs import RootFS
from neurondoctor.redaction import redact_secrets
from neurondoctor.strict_numbers import finite_float, parse_count

_DEVICE = re.compile(r"^/dev/neuron[0-9]{1,6}$")


def _age_seconds(fs: RootFS, pid: str) -> Optional[float]:
    """Seconds since the process started: `stat` field 22 (clock ticks after boot) against `proc/uptime`."""
    stat_text = fs.try_read_text(f"/proc/{pid}/stat", limit=4096)
    uptime_text = fs.try_read_text("/proc/uptime", limit=128)
    if not stat_text or not uptime_text:
        return None
    fields = stat_text.rsplit(")", 1)[1].split()
    ticks = parse_count(fields[19]) if len(fields) > 19 else None
    uptime = finite_float(uptime_text.split()[0]) if uptime_text.split() else None
    if ticks is None or uptime is None:
        return None
    try:
        return max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (ValueError, OSError):
        return None


MAX_FDS_PER_PROCESS = 65_536
MAX_ANCESTORS = 64
_STEPD_JOB = re.compile(r"^slurmstepd: \[([0-9]{1,18})(?:\.[A-Za-z0-9_]+)?\]")


def _parent(fs: RootFS, pid: str) -> Optional[tuple[str, str]]:
    """(parent pid, this process's comm) from `proc/<pid>/stat` (comm in parentheses may hold spaces)."""
    text = fs.try_read_text(f"/proc/{pid}/stat", limit=4096)
    if not text or ")" not in text:
        return None
    comm = text[text.find("(") + 1:text.rfind(")")]
    fields = text.rsplit(")", 1)[1].split()
    return (fields[1], comm) if len(fields) > 1 and parse_count(fields[1]) is not None else None


def _slurm_job(fs: RootFS, pid: str) -> Optional[str]:
    """The Slurm job a process runs under: the id in the cmdline of its nearest `slurmstepd` ancestor
    (`slurmstepd: [1234.0]`, what slurmd's step daemon calls itself), walking at most MAX_ANCESTORS parents."""
    current = pid
    for _ in range(MAX_ANCESTORS):
        found = _parent(fs, current)
        if found is None:
            return None
        parent, comm = found
        if comm == "slurmstepd" and current != pid:
            cmdline = (fs.try_read_text(f"/proc/{current}/cmdline", limit=4096) or "").replace("\0", " ")
            job = _STEPD_JOB.match(cmdline.strip())
            return job.group(1) if job else None
        if parent in ("0", current):
            return None
        current = parent
    return None


def read_device_holders(fs: RootFS) -> list[DeviceHolder]:
    holders = []
    try:
        pids = [name for name in fs.listdir("/proc") if parse_count(name) is not None]
    except OSError:
        return []
    for pid in sorted(pids, key=int):
        fd_dir = fs.machine_path(f"/proc/{pid}/fd")
        try:
            if fd_dir is None:
                continue
            fds = [name for name in os.listdir(fd_dir) if parse_count(name) is not None]
        except OSError:
            continue
        if len(fds) > MAX_FDS_PER_PROCESS:
            fds = sorted(fds, key=int)[:MAX_FDS_PER_PROCESS]
        devices = set()
        for fd in fds:
            try:
                target = os.readlink(fd_dir / fd)
            except OSError:
                continue
            if _DEVICE.match(target):
                devices.add(target)
        if not devices:
            continue
        command = (fs.try_read_text(f"/proc/{pid}/comm", limit=256) or "?").strip()
        raw_cmdline = fs.try_read_text(f"/proc/{pid}/cmdline", limit=4096) or ""
        cmdline = redact_secrets(raw_cmdline.replace("\0", " ").strip())
        holders.append(DeviceHolder(int(pid), command, cmdline[:300],
                                    sorted(devices, key=lambda d: int(d[len("/dev/neuron"):])),
                                    _age_seconds(fs, pid), _slurm_job(fs, pid)))
    return holders
