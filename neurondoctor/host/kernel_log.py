"""`NEURON_HW_ERR=` lines of the kernel log, the driver's hardware error reports, in a window: this boot, or since
a given time, so a condition clears once the node was rebooted or replaced (eks-node-monitoring-agent#266).

The driver logs `NEURON_HW_ERR=SRAM_UNCORRECTABLE_ERROR instance-id=i-… hostname=… nd-id=0 nc-id=0 serial-num=…
action=TERMINATE_INSTANCE` (neuron-runtime troubleshooting); AWS's Neuron problem detector and the EKS node
monitoring agent watch the same four kinds: SRAM, NC and HBM uncorrectable errors and DMA errors.
Live host: `journalctl -k -b` (with `--since`), else `dmesg` (this boot's ring buffer). Under a root:
`var/log/kern.log`, the lines after its last `Linux version` line (the current boot), or after `--since`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional

from neurondoctor.command_runner import run_command
from neurondoctor.facts.kernel_errors import KernelHardwareError
from neurondoctor.host.rootfs import RootFS
from neurondoctor.log_text import bounded_lines

if TYPE_CHECKING:
    from datetime import datetime

KINDS = ("SRAM_UNCORRECTABLE_ERROR", "NC_UNCORRECTABLE_ERROR", "HBM_UNCORRECTABLE_ERROR", "DMA_ERROR")
KERN_LOG = "/var/log/kern.log"
KERN_LOG_LIMIT = 16 << 20  # the end of the file: the current boot
_HW_ERROR = re.compile(r"NEURON_HW_ERR=([A-Z_]+)((?:\s+[\w-]+=\S+)*)")
_FIELD = re.compile(r"([\w-]+)=(\S+)")
_BOOT = re.compile(r"\bkernel: Linux version \d")
_ISO_STAMP = re.compile(r"^([0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9]{2}:[0-9]{2}:[0-9]{2})")
_SYSLOG_STAMP = re.compile(r"^([A-Z][a-z]{2} +[0-9]{1,2} [0-9]{2}:[0-9]{2}:[0-9]{2}) ")


@dataclass
class KernelLog:
    """The hardware errors of one kernel log read, where it was read from, and why it could not be when not."""

    source: Optional[str]  # where the lines came from; None when no kernel log could be read
    errors: list[KernelHardwareError] = field(default_factory=list)
    problem: Optional[str] = None


def parse_since(text: str) -> datetime:
    """`--since` for a log under a root: `YYYY-MM-DD[ HH:MM[:SS]]` (UTC); raises ValueError otherwise."""
    from datetime import datetime, timezone  # only with --since: a check without it does not import datetime

    for pattern in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d"):
        try:
            return datetime.strptime(text.strip(), pattern).replace(tzinfo=timezone.utc)
        except ValueError:
            continue
    raise ValueError(f"--since {text!r}: give YYYY-MM-DD[ HH:MM[:SS]] for a log under --root")


def _stamp(line: str, year: int) -> Optional[datetime]:
    """The time a log line starts with; None for none, or for one that is no time (`2026-13-45`, `Feb 30`)."""
    from datetime import datetime, timezone

    iso = _ISO_STAMP.match(line)
    syslog = None if iso else _SYSLOG_STAMP.match(line)
    try:
        if iso:
            return datetime.strptime(iso.group(1).replace("T", " "), "%Y-%m-%d %H:%M:%S").replace(tzinfo=timezone.utc)
        if syslog:  # the traditional format has no year: this year's
            return datetime.strptime(f"{year} {' '.join(syslog.group(1).split())}", "%Y %b %d %H:%M:%S").replace(
                tzinfo=timezone.utc)
    except ValueError:
        return None
    return None


def hardware_errors(lines: list[str]) -> list[KernelHardwareError]:
    found = []
    for line in lines:
        match = _HW_ERROR.search(line)
        if not match or match.group(1) not in KINDS:
            continue
        fields = dict(_FIELD.findall(match.group(2)))
        found.append(KernelHardwareError(match.group(1), fields.get("nd-id"), fields.get("nc-id"), fields.get("action"),
                                       line.strip()[:300]))
    return found


def window(lines: list[str], since: Optional[datetime], year: int) -> list[str]:
    """The lines of the current boot (after the last `Linux version` line), or those stamped at or after `since`."""
    if since is not None:
        kept, keep = [], False
        for line in lines:
            stamp = _stamp(line, year)
            if stamp is not None:
                keep = stamp >= since
            if keep:
                kept.append(line)
        return kept
    boots = [index for index, line in enumerate(lines) if _BOOT.search(line)]
    return lines[boots[-1]:] if boots else lines


def read_kernel_log(fs: RootFS, environ: Mapping[str, str], since: Optional[str]) -> KernelLog:
    if not fs.is_live:
        try:
            text = fs.read_bytes(KERN_LOG, KERN_LOG_LIMIT, tail=True).decode("utf-8", errors="replace")
        except FileNotFoundError:
            return KernelLog(None, problem=f"no {KERN_LOG} under the root")
        except OSError as error:
            return KernelLog(None, problem=f"{KERN_LOG}: {error.strerror or error}")
        start = parse_since(since) if since else None
        lines = window(bounded_lines(text), start, time.gmtime().tm_year)
        return KernelLog(KERN_LOG + (f" since {since}" if since else " (this boot)"), hardware_errors(lines))
    env = dict(environ)
    journal = run_command(["journalctl", "-k", "-b", "--no-pager", "-q", "-o", "short-iso",
                           *(["--since", since] if since else [])], timeout=10, env=env)
    if journal.ok:
        return KernelLog("journalctl -k -b" + (f" --since {since!r}" if since else ""),
                         hardware_errors(bounded_lines(journal.stdout)))
    dmesg = run_command(["dmesg"], timeout=10, env=env)
    if dmesg.ok and not since:
        return KernelLog("dmesg", hardware_errors(bounded_lines(dmesg.stdout)))
    return KernelLog(None, problem=journal.describe_failure() + ("; " + dmesg.describe_failure()
                                                                  if not dmesg.ok else ""))
