"""A process that has a Neuron device open: the record the device-holder walk makes (host/device_holders.py).

Apart from facts/host.py because only that walk makes one, and it runs only on a host with device nodes: a check
without them never creates this class (each record class costs start-up: docs/measured.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional


@dataclass
class DeviceHolder:
    """A process that has a Neuron device open (host/device_holders.py), named so a busy device can be traced."""

    pid: int
    command: str
    cmdline: str
    devices: list[str] = field(default_factory=list)
    age_seconds: Optional[float] = None
    slurm_job: Optional[str] = None  # the Slurm job it runs under (a slurmstepd ancestor): expected, not busy
