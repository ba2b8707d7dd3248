"""The host's GLIBC version: Neuron's tools and runtime are built against a minimum one (os-support.json).

Read, most exact first, from the package database (dpkg's `libc6` stanza; rpm's `glibc`), else from the
C library itself: up to glibc 2.33 `libc.so.6` is a link to `libc-2.31.so`, and every glibc carries the
banner `GNU C Library (…) stable release version 2.35.` in its read-only data.
"""

from __future__ import annotations

import re
from typing import Optional

from neurondoctor.host.rootfs import RootFS

LIBC_PATHS = ("/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6",
              "/lib/aarch64-linux-gnu/libc.so.6", "/usr/lib/aarch64-linux-gnu/libc.so.6",
              "/lib64/libc.so.6", "/usr/lib64/libc.so.6")
LIBC_READ_LIMIT = 8 << 20  # libc.so.6 is about 2 MB; a larger file is not a C library
_DPKG_LIBC = re.compile(r"^Package: *libc6[ \t]*\n(.*?)(?=\n\n|\nPackage:|\Z)", re.M | re.S)
# The fallbacks' patterns (an rpm query, the library's own name and banner) are compiled by `re` when first used.
_RPM_GLIBC = r"(?m)^glibc\t(\d+\.\d+)"
_UPSTREAM = re.compile(r"^(?:\d+:)?(\d+\.\d+)")
_LINK_NAME = r"^libc-(\d+\.\d+)\.so$"
_BANNER = rb"GNU C Library [^\n\x00]{0,120}? version (\d+\.\d+)"


def glibc_from_dpkg_status(text: str) -> Optional[str]:
    """`2.35` from an installed `libc6` stanza (`Version: 2.35-0ubuntu3.8`), else None."""
    for match in _DPKG_LIBC.finditer(text):
        fields = dict(line.partition(":")[::2] for line in match.group(1).splitlines() if ":" in line)
        status = fields.get("Status", "").split()
        version = _UPSTREAM.match(fields.get("Version", "").strip())
        if status[-1:] == ["installed"] and version:
            return version.group(1)
    return None


def glibc_from_rpm_query(text: str) -> Optional[str]:
    """`2.34` from the `glibc<TAB>2.34-196.amzn2023.0.1` line of `rpm -qa --qf '%{NAME}\\t%{VERSION}-…'`."""
    match = re.search(_RPM_GLIBC, text)
    return match.group(1) if match else None


def read_glibc_from_library(fs: RootFS) -> tuple[Optional[str], Optional[str]]:
    """(version, the file it was read from) from the C library's link name or banner; (None, None) if neither."""
    for inner in LIBC_PATHS:
        if not fs.lexists(inner):
            continue
        target = fs.resolve(inner)
        named = re.match(_LINK_NAME, target.name) if target is not None else None
        if named and target is not None and target.is_file():  # a dangling name proves nothing
            return named.group(1), inner
        try:
            data = fs.read_bytes(inner, limit=LIBC_READ_LIMIT)
        except OSError:
            continue
        banner = re.search(_BANNER, data)
        if banner:
            return banner.group(1).decode("ascii"), inner
    return None, None
