"""A hardware error the Neuron driver wrote to the kernel log: the record the kernel-log reader makes
(host/kernel_log.py).

Apart from facts/host.py because only that reader makes one, and it runs only on a host with Neuron hardware: a check
without it never creates this class (each record class costs start-up: docs/measured.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class KernelHardwareError:
    """A `NEURON_HW_ERR=` line of the kernel log (host/kernel_log.py)."""

    kind: str  # SRAM_UNCORRECTABLE_ERROR, NC_UNCORRECTABLE_ERROR, HBM_UNCORRECTABLE_ERROR, DMA_ERROR
    device: Optional[str]  # nd-id
    core: Optional[str]  # nc-id
    action: Optional[str]
    line: str
