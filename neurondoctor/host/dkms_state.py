"""DKMS state of the Neuron driver for one kernel (docs/neuron-facts.md §4 DKMS; drv:dkms.conf).

DKMS name `aws-neuronx` (the deprecated package registered `aws-neuron`, gh#661); built modules land in
`var/lib/dkms/aws-neuronx/<ver>/<kernel>/<arch>/module/neuron.ko*` and are installed to
`lib/modules/<kernel>/updates/dkms/neuron.ko*`; headers are `lib/modules/<kernel>/build`; the build log is
`var/lib/dkms/aws-neuronx/<ver>/build/make.log` (gh#843).
"""

from __future__ import annotations

import re
from typing import Optional

from neurondoctor.facts.host import DkmsState
from neurondoctor.host.rootfs import RootFS
from neurondoctor.log_text import bounded_lines

DKMS_DIR = "/var/lib/dkms/aws-neuronx"
LEGACY_DKMS_DIR = "/var/lib/dkms/aws-neuron"
MAKE_LOG_TAIL = 15


# The patterns are sources, compiled by `re` (and kept in its cache) when a build log is first read: most hosts have
# none, and `check` must not pay for them at start-up.
_COMPILER_ERROR = r": (?:fatal )?error: "
# make's `make[1]: *** [Makefile:12: all] Error 2` or `*** No rule to make target 'modules'.  Stop.`: the `*** ` is
# found with `str.find`, then the end after it (`\*\*\* .*(?:Error|Stop)` rescans the line from every `*** `).
_MAKE_ERROR_START = "*** "
_MAKE_ERROR_END = r"Error \d|Stop\."
# A build tool the kernel's Makefile runs and the host lacks: `/bin/sh: 1: gcc-14: not found` (dash), `make[2]:
# gcc-12: No such file or directory` (make), `gcc: command not found` (bash). A kernel is built with one gcc
# version, and its modules must be built with the same (the kernel's `CC`), which a newer (HWE or mainline)
# kernel can name while the host has only its default gcc.
_MISSING_TOOL = (r"(?:^|[\s:])((?:x86_64-linux-gnu-|aarch64-linux-gnu-)?(?:gcc|cc|clang|ld)(?:-\d{1,2})?"
                 r"|make): (?:not found|No such file or directory|command not found)\b")


def missing_build_tool(log: str) -> Optional[str]:
    """The compiler (or make) the build ran and did not find, by the name the kernel asked for (`gcc-14`)."""
    for line in bounded_lines(log):
        found = re.search(_MISSING_TOOL, line)
        if found:
            return found.group(1)
    return None


def _make_error(line: str) -> bool:
    start = line.find(_MAKE_ERROR_START)
    return start >= 0 and re.compile(_MAKE_ERROR_END).search(line, start + len(_MAKE_ERROR_START)) is not None


def first_error(log: str) -> Optional[str]:
    """The line that says why the build failed: a build tool that is not there, else the first compiler `error:`,
    else the first make `*** … Error N` or `Stop.` (a missing headers tree), else DKMS's own `Error!` line (gh#647,
    gh#843 make.logs). Lines are cut at log_text.MAX_LINE first: a make.log may be one line of 30 MiB."""
    lines = bounded_lines(log)
    for matches in (re.compile(_MISSING_TOOL).search, re.compile(_COMPILER_ERROR).search, _make_error):
        found = next((line.strip() for line in lines if matches(line)), None)
        if found:
            return found[:300]
    return next((line.strip()[:300] for line in lines if line.lstrip().startswith("Error!")), None)


def read_dkms_state(fs: RootFS, kernel: Optional[str]) -> DkmsState:
    state = DkmsState()
    versions = [path.rsplit("/", 1)[-1] for path in fs.glob(DKMS_DIR, "*") if path.rsplit("/", 1)[-1][:1].isdigit()]
    state.registered_versions = sorted(versions)
    state.legacy_registered = bool(fs.glob(LEGACY_DKMS_DIR, "*"))
    if kernel:
        for version in state.registered_versions:
            if any(fs.glob(f"{DKMS_DIR}/{version}/{kernel}/{arch}/module", "neuron.ko*")
                   for arch in ("x86_64", "aarch64")):
                state.built_for_kernel.append(version)
        installed = fs.glob(f"/lib/modules/{kernel}/updates/dkms", "neuron.ko*") or fs.glob(
            f"/lib/modules/{kernel}/extra", "neuron.ko*")
        state.installed_module = installed[0] if installed else None
        state.headers_present = fs.exists(f"/lib/modules/{kernel}/build")
    for version in reversed(state.registered_versions):
        log = f"{DKMS_DIR}/{version}/build/make.log"
        text = fs.try_read_text(log, limit=1 << 20)
        if text is not None:
            state.make_log = log
            state.make_log_tail = bounded_lines(text)[-MAKE_LOG_TAIL:]
            state.make_log_error = first_error(text)
            state.missing_build_tool = missing_build_tool(text)
            break
    return state
