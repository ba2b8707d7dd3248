"""OS and kernel: `etc/os-release` (or `usr/lib/os-release`) and `proc/sys/kernel/osrelease`."""

from __future__ import annotations

from typing import Optional

from neurondoctor.facts.host import OsRelease
from neurondoctor.host.rootfs import RootFS


def _unquote(raw: str) -> str:
    """`"Ubuntu 24.04 LTS"` -> `Ubuntu 24.04 LTS`; backslash escapes inside double quotes are undone."""
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        inner = raw[1:-1]
        return inner.replace('\\"', '"').replace("\\$", "$").replace("\\\\", "\\") if raw[0] == '"' else inner
    return raw


def parse_os_release(text: str) -> OsRelease:
    """`KEY=value` lines with shell quoting (os-release(5)); malformed lines are skipped."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, separator, raw = line.partition("=")
        if not separator or not key.strip().isidentifier():
            continue
        values[key.strip()] = _unquote(raw.strip())
    return OsRelease(id=values.get("ID") or None, version_id=values.get("VERSION_ID") or None,
                     pretty_name=values.get("PRETTY_NAME") or None,
                     codename=values.get("VERSION_CODENAME") or values.get("UBUNTU_CODENAME") or None,
                     id_like=values.get("ID_LIKE", "").split(), variant_id=values.get("VARIANT_ID") or None)


def read_os_release(fs: RootFS) -> OsRelease:
    text = fs.try_read_text("/etc/os-release", limit=64 * 1024) or fs.try_read_text("/usr/lib/os-release",
                                                                                      limit=64 * 1024)
    return parse_os_release(text or "")


def read_kernel_release(fs: RootFS) -> Optional[str]:
    """The running kernel; in an image that is not running, the only kernel under lib/modules."""
    text = fs.try_read_text("/proc/sys/kernel/osrelease", limit=256)
    if text and text.strip():
        return text.strip().splitlines()[0]
    kernels = fs.glob("/lib/modules", "*")
    return kernels[0].rsplit("/", 1)[-1] if len(kernels) == 1 else None


KUBERNETES_SERVICE_ACCOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def is_kubernetes_pod(fs: RootFS, environ: dict[str, str]) -> bool:
    """A Kubernetes pod: the service-account mount every pod gets, or the variables the kubelet sets."""
    return fs.is_dir(KUBERNETES_SERVICE_ACCOUNT) or (fs.is_live and "KUBERNETES_SERVICE_HOST" in environ)


def is_container(fs: RootFS) -> bool:
    """`/.dockerenv`, or a container runtime named in `proc/1/cgroup`."""
    if fs.exists("/.dockerenv") or fs.exists("/run/.containerenv"):
        return True
    cgroup = fs.try_read_text("/proc/1/cgroup", limit=64 * 1024) or ""
    return any(marker in cgroup for marker in ("docker", "kubepods", "containerd", "libpod"))
