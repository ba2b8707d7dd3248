"""Libraries saying a feature or code path is not for this device (the words of torch, HuggingFace Transformers and
Accelerate, which treat a Neuron device as an XLA device, "TPU" in their messages):

- a GPU-only path taken on a host with no NVIDIA GPU: torch's `No CUDA GPUs are available`, `Torch not compiled with
  CUDA enabled`, `Found no NVIDIA driver on your system` (a script or a library option asks for CUDA);
- a feature the library refuses on XLA devices: `X is not supported on TPU`, `is not supported on XLA`,
  `is not supported for XLA devices` (Accelerate's gradient accumulation plugin, for example).

The compiler's own "not supported" (an operator, a data type) is not read here: its codes and operators are
rules/probes/compiler_codes.py's and error_explanation.py's.

Facts: what is not supported, as the line says it.
"""

from __future__ import annotations

import re

from neurondoctor.rules.explain_readers.clue import Clue
from neurondoctor.rules.explain_readers.message import Message

READER = "framework"
_CUDA = ("no cuda gpus are available", "torch not compiled with cuda enabled", "found no nvidia driver on your system")
_ON_XLA = re.compile(r"([a-z][a-z0-9 _.'`-]{2,80}?) (?:is|are) not supported (?:on|for|with) (?:the )?(?:tpus?|xla)\b")


def read(message: Message) -> list[Clue]:
    clues: list[Clue] = []
    for needle in _CUDA:
        for position in message.hits(needle, 2):
            clues.append(Clue("cuda-path-on-neuron", READER, position, message.line(position), {"message": needle}))
    for needle in ("not supported on tpu", "not supported on xla", "not supported for xla", "not supported on the tpu",
                   "not supported with xla"):
        for position in message.hits(needle, 2):
            start, end = message.span(position)
            found = _ON_XLA.search(message.folded, max(start, position - 90), end)
            if found:
                clues.append(Clue("feature-unsupported-on-xla", READER, position, message.line(position),
                                  {"feature": message.text[found.start(1):found.end(1)].strip(" -\"'")}))
    return clues
