"""The EC2 instance type, read from DMI without any network call.

`/sys/devices/virtual/dmi/id/product_name` holds the instance type (`trn1.32xlarge`) when `sys_vendor` is
`Amazon EC2` (docs/neuron-facts.md §4 "Instance identity": read by Neuron-SDK-Detector; not in the Neuron docs,
so a value that does not look like an instance type is ignored rather than trusted).
"""

from __future__ import annotations

import os
import re
from typing import Optional

from neurondoctor.host.rootfs import RootFS

DMI_DIR = "/sys/devices/virtual/dmi/id"
_INSTANCE_TYPE = re.compile(r"^[a-z][a-z0-9-]*\.[a-z0-9-]+$")


def parse_instance_type(vendor: Optional[str], product: Optional[str]) -> Optional[str]:
    """The instance type when the DMI strings say EC2 and name one, else None."""
    if vendor is None or product is None or "amazon" not in vendor.lower():
        return None
    candidate = product.strip().lower()
    return candidate if _INSTANCE_TYPE.match(candidate) else None


def read_instance_type(fs: RootFS) -> tuple[Optional[str], Optional[str]]:
    """(instance type, the file it came from)."""
    vendor = fs.try_read_text(f"{DMI_DIR}/sys_vendor", limit=256)
    product = fs.try_read_text(f"{DMI_DIR}/product_name", limit=256)
    instance_type = parse_instance_type(vendor, product)
    return instance_type, (f"{DMI_DIR}/product_name" if instance_type else None)


_INSTANCE_ID = re.compile(r"^i-[0-9a-f]{8,17}$")
_HOSTNAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.-]{0,252}$")


def read_instance_id(fs: RootFS) -> Optional[str]:
    """The EC2 instance id: DMI's `board_asset_tag` on Nitro instances, else cloud-init's cached copy; only a
    value shaped like `i-0123456789abcdef0` is trusted."""
    for path in (f"{DMI_DIR}/board_asset_tag", "/var/lib/cloud/data/instance-id"):
        candidate = (fs.try_read_text(path, limit=256) or "").strip()
        if _INSTANCE_ID.match(candidate):
            return candidate
    return None


def read_hostname(fs: RootFS) -> Optional[str]:
    """This machine's hostname on a live host; the tree's `/etc/hostname` under another root (an image)."""
    if fs.is_live:
        return os.uname().nodename or None  # what gethostname(2) returns on Linux, without importing socket
    candidate = (fs.try_read_text("/etc/hostname", limit=256) or "").strip()
    return candidate if _HOSTNAME.match(candidate) else None
