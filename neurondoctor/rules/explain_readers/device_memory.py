"""Out of memory, on the device or the host, in the words of the layers that report it:

- the device: the compiler's estimate `Estimated peak HBM usage (22.8) exceeds 16GB` (a graph that will not
  load), the runtime's `Failed to allocate … on ND 0:NC 4` (read in numbers by rules/probes/runtime_log.py),
  XLA's `RESOURCE_EXHAUSTED: … Out of memory`, `out of device memory`, `HBM` with `out of memory`;
- the runtime reserving device memory pages: `Number of … pages requested exceeded the max number of pages allowed
  (requested: 28, max allowed: 16)`;
- the host: Python's `MemoryError`, `Cannot allocate memory` (ENOMEM), `std::bad_alloc`.

Facts: device or host, the device and core numbers when the line names them.
"""

from __future__ import annotations

import re

from neurondoctor.rules.explain_readers.clue import Clue
from neurondoctor.rules.explain_readers.message import Message

READER = "memory"
_PEAK_HBM = re.compile(r"peak hbm usage (?:of )?\(?([0-9]{1,6}(?:\.[0-9]{1,9})? ?(?:gb|gib)?)\)?[^\n]{0,80}? exceeds "
                       r"(?:hbm limit of |the )?([0-9]{1,6}(?:\.[0-9]{1,9})? ?(?:gb|gib))")
_PAGES = re.compile(r"pages requested exceeded the max(?:imum)? number of pages allowed ?\(requested: ?([0-9]{1,9}),"
                    r" ?max allowed: ?([0-9]{1,9})\)")
_CORE = re.compile(r"\bnd ?([0-9]{1,4}):? ?nc ?([0-9]{1,4})")


def read(message: Message) -> list[Clue]:
    clues: list[Clue] = []
    for needle in ("resource_exhausted", "out of device memory", "device out of memory", "hbm out of memory",
                   "out of hbm"):
        for position in message.hits(needle, 2):
            start, end = message.span(position)
            facts = {"where": "device"}
            core = _CORE.search(message.folded, start, min(end, start + 2000))
            if core:
                facts["device"], facts["core"] = core.group(1), core.group(2)
            clues.append(Clue("memory-exhausted", READER, position, message.line(position), facts))
    for position in message.hits("peak hbm usage", 2):
        start, end = message.span(position)
        found = _PEAK_HBM.search(message.folded, position, min(end, position + 300))
        if found:
            needs = found.group(1) if found.group(1)[-1] == "b" else found.group(1) + " GB (estimated)"
            clues.append(Clue("memory-exhausted", READER, position, message.line(position),
                              {"where": "device", "needs": needs, "limit": found.group(2)}))
    for position in message.hits("pages requested exceeded", 2):
        found = _PAGES.search(message.folded, position, message.span(position)[1])
        if found:
            clues.append(Clue("memory-exhausted", READER, position, message.line(position),
                              {"where": "device", "needs": f"{found.group(1)} pages",
                               "limit": f"{found.group(2)} pages"}))
    for needle in ("memoryerror", "cannot allocate memory", "std::bad_alloc"):
        for position in message.hits(needle, 2):
            if "static tls block" in message.folded[position:message.span(position)[1]]:
                continue  # the loader's TLS message: dynamic_loader.py
            clues.append(Clue("memory-exhausted", READER, position, message.line(position), {"where": "host"}))
    return clues
