"""Whether a `--root` is a Linux host tree at all: an empty folder, an image directory whose filesystem is not
mounted, or a path with a typo in it holds no host, and nothing judged there may come out healthy.

Every Linux distribution the doctor meets writes os-release(5) (`/etc/os-release`, or `/usr/lib/os-release` it
links to: Ubuntu, Amazon Linux, Rocky, RHEL, Debian, Bottlerocket, container base images) and has a `/usr`. A
tree with neither is reported as not a host, and every area that would have judged it says it could not.
"""

from __future__ import annotations

from neurondoctor.host.rootfs import RootFS

OS_RELEASE_PATHS = ("/etc/os-release", "/usr/lib/os-release")


def missing_host_parts(fs: RootFS) -> list[str]:
    """What a host tree would have and this one lacks ([] for a host, and always for the live system)."""
    if fs.is_live:
        return []
    missing = []
    if not any(fs.exists(path) for path in OS_RELEASE_PATHS):
        missing.append("no " + " or ".join(OS_RELEASE_PATHS))
    if not fs.is_dir("/usr"):
        missing.append("no /usr")
    return missing
