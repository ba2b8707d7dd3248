"""The locked-memory limit a job gets: on a live host, that of the shell that started the doctor
(`/proc/<ppid>/limits`, else the doctor's own); under another root, what pam_limits would set at login from
`etc/security/limits.conf` and `limits.d/*.conf` (read in that order; a later line for the same domain wins).

EFA registers pinned buffers: with a finite limit libfabric fails with -12 (ENOMEM); the EFA installer writes
`/etc/security/limits.d/01_efa.conf` with `* soft memlock unlimited` and `* hard memlock unlimited` for this reason
(aws-efa-installer; docs/neuron-facts.md §9 EFA).
"""

from __future__ import annotations

import os
import re
from typing import Optional

from neurondoctor.host.rootfs import RootFS
from neurondoctor.strict_numbers import parse_count

UNLIMITED = -1
# The kernel's default RLIMIT_MEMLOCK when nothing raises it (8 MiB since Linux 5.16; 64 KiB before).
KERNEL_DEFAULT = 8 << 20
_LIMITS_LINE = re.compile(r"^\s*(?P<domain>\S+)\s+(?P<type>soft|hard|-)\s+memlock\s+(?P<value>\S+)", re.M)
_PROC_LINE = re.compile(r"^Max locked memory\s+(?P<soft>\S+)\s+(?P<hard>\S+)", re.M)


def _value(text: str, unit_bytes: int) -> Optional[int]:
    if text.lower() in ("unlimited", "infinity", "-1"):
        return UNLIMITED
    value = parse_count(text)
    return value * unit_bytes if value is not None else None


def parse_limits_conf(texts: list[str], user: str = "*") -> Optional[int]:
    """The soft memlock in bytes for `user` (a name, or `*` for anyone) from limits files in read order, or None
    when none sets it. Values are KiB; `-` sets soft and hard; a line for the user outranks `*`."""
    chosen: dict[str, int] = {}
    for text in texts:
        for match in _LIMITS_LINE.finditer(text):
            domain, kind = match.group("domain"), match.group("type")
            if domain not in ("*", user) or kind == "hard":
                continue
            value = _value(match.group("value"), 1024)
            if value is not None:
                chosen[domain] = value
    return chosen.get(user, chosen.get("*"))


def parse_proc_limits(text: str) -> Optional[int]:
    match = _PROC_LINE.search(text)
    return _value(match.group("soft"), 1) if match else None


def read_memlock_limit(fs: RootFS) -> tuple[Optional[int], str]:
    """(soft memlock in bytes, or UNLIMITED, or None when unknown; where it came from)."""
    if fs.is_live:
        shell = fs.try_read_text(f"/proc/{os.getppid()}/limits", limit=16 * 1024)
        parsed = parse_proc_limits(shell) if shell else None
        if parsed is not None:
            return parsed, f"/proc/{os.getppid()}/limits"
        import resource

        soft = resource.getrlimit(resource.RLIMIT_MEMLOCK)[0]
        return (UNLIMITED if soft == resource.RLIM_INFINITY else soft), "getrlimit"
    files = ["/etc/security/limits.conf", *fs.glob("/etc/security/limits.d", "*.conf")]
    texts = [text for text in (fs.try_read_text(path, limit=256 * 1024) for path in files) if text]
    configured = parse_limits_conf(texts)
    if configured is not None:
        return configured, "etc/security/limits.conf, limits.d"
    return KERNEL_DEFAULT, "no memlock line in etc/security/limits.conf or limits.d (the kernel default)"
