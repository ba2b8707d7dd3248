"""A failed build of the Neuron driver by DKMS, and the dpkg lines around it (dkms's own messages, the kernel's
kbuild output in `/var/lib/dkms/aws-neuronx/VERSION/build/make.log`, dpkg's `--configure` errors):

- `Error! Your kernel headers for kernel K cannot be found.` / `kernel headers for this kernel does not seem to be
  installed`: nothing to build against;
- `Error! Bad return status for module build on kernel: K (x86_64)` and `Consult /var/lib/dkms/aws-neuronx/V/build/
  make.log`: the build failed;
- in make.log: `FILE.c:LINE:COL: error: MESSAGE` (a driver too old for the kernel's API), `fatal error: X.h: No
  such file or directory`;
- `dpkg: error processing package aws-neuronx-dkms (--configure):`.

Facts: the kernel, the driver version, the first compile error.
"""

from __future__ import annotations

import re

from neurondoctor.rules.explain_readers.clue import Clue
from neurondoctor.rules.explain_readers.message import Message

READER = "DKMS"
_HEADERS = re.compile(r"kernel headers for (?:kernel )?([^\s]{1,100}) cannot be found")
_BAD_STATUS = re.compile(r"bad return status for module build on kernel: ([^\s]{1,100})")
_MAKE_LOG = re.compile(r"/var/lib/dkms/(aws-neuronx?)/([0-9][0-9.]{0,30})/")
_COMPILE = re.compile(r"([A-Za-z0-9_./-]{1,300}\.[ch]):[0-9]{1,7}:(?:[0-9]{1,5}:)? (?:fatal )?error: ([^\n]{1,300})")
_DPKG = re.compile(r"error processing package ([a-z0-9.+-]{1,100})")


def read(message: Message) -> list[Clue]:
    clues: list[Clue] = []
    driver = _MAKE_LOG.search(message.folded) if "/var/lib/dkms/" in message.folded else None
    base = {"driver": driver.group(2)} if driver else {}
    for position in message.hits("kernel headers for", 2):
        found = _HEADERS.search(message.folded, position, message.span(position)[1])
        clues.append(Clue("dkms-headers", READER, position, message.line(position),
                          {**base, **({"kernel": found.group(1)} if found else {})}))
    for position in message.hits("bad return status for module build", 2):
        found = _BAD_STATUS.search(message.folded, position, message.span(position)[1])
        clues.append(Clue("dkms-build-failed", READER, position, message.line(position),
                          {**base, **({"kernel": found.group(1)} if found else {})}))
    for position in message.hits("error: ", 16):
        start, end = message.span(position)
        found = _COMPILE.search(message.text, max(start, position - 330), end)
        if found and ("neuron" in found.group(1).lower() or driver):
            clues.append(Clue("dkms-compile-error", READER, position, message.line(position),
                              {**base, "file": found.group(1).rsplit("/", 1)[-1], "error": found.group(2)}))
            break
    for position in message.hits("error processing package ", 4):
        found = _DPKG.search(message.folded, position, message.span(position)[1])
        if found:
            clues.append(Clue("dpkg-failed", "dpkg", position, message.line(position), {"package": found.group(1)}))
    return clues
