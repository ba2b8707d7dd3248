"""Runtime, collectives and tools files under `opt/aws/neuron`, and whether the Neuron package repo is configured."""

from __future__ import annotations

from neurondoctor.host.rootfs import RootFS

NEURON_LIB = "/opt/aws/neuron/lib"
NEURON_BIN = "/opt/aws/neuron/bin"
REPO_MARKER = "repos.neuron.amazonaws.com"


def read_runtime_files(fs: RootFS) -> tuple[list[str], list[str], list[str]]:
    """(libnrt.so*, libnccom.so*, tools in opt/aws/neuron/bin)."""
    return (fs.glob(NEURON_LIB, "libnrt.so*"), fs.glob(NEURON_LIB, "libnccom.so*"),
            [path.rsplit("/", 1)[-1] for path in fs.glob(NEURON_BIN, "*")])


def read_neuron_repo_files(fs: RootFS) -> list[str]:
    """apt/yum repository files that name the Neuron repository."""
    candidates = (fs.glob("/etc/apt/sources.list.d", "*.list") + fs.glob("/etc/apt/sources.list.d", "*.sources")
                  + fs.glob("/etc/yum.repos.d", "*.repo") + ["/etc/apt/sources.list"])
    return [path for path in candidates if REPO_MARKER in (fs.try_read_text(path, limit=256 * 1024) or "")]
