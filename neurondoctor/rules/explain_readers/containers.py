"""Container runtimes and the Kubernetes side of Neuron devices:

- docker/containerd when a `--device` is not on the host: `error gathering device information while adding custom
  device "/dev/neuron0": no such file or directory`;
- the scheduler when no node has the resource the pod asks for: `0/3 nodes are available: 3 Insufficient
  aws.amazon.com/neuron.` (also `neuroncore`, `neurondevice`; and the typo `insufficent` some tools print);
- the device plugin's own log (k8s-neuron-device-plugin): `No Neuron devices found` is read by runtime_log.py.

Facts: the device path, the resource, how many nodes.
"""

from __future__ import annotations

import re

from neurondoctor.rules.explain_readers.clue import Clue
from neurondoctor.rules.explain_readers.message import Message

_CUSTOM_DEVICE = re.compile(r"adding custom device \"?(/dev/[a-z0-9_/]{1,100})\"?: ([^\n]{0,100})")
_RESOURCE = re.compile(r"insuff?ic?i?e?n?t (aws\.amazon\.com/neuron[a-z]{0,20})")


def read(message: Message) -> list[Clue]:
    clues: list[Clue] = []
    for position in message.hits("adding custom device", 4):
        found = _CUSTOM_DEVICE.search(message.folded, position, message.span(position)[1])
        if found:
            clues.append(Clue("container-device-missing", "container runtime", position, message.line(position),
                              {"device": found.group(1), "errno": found.group(2).strip()}))
    for needle in ("insufficient aws.amazon.com/neuron", "insufficent aws.amazon.com/neuron",
                   "insuficient aws.amazon.com/neuron"):
        for position in message.hits(needle, 4):
            found = _RESOURCE.search(message.folded, position, message.span(position)[1])
            if found:
                clues.append(Clue("k8s-insufficient", "Kubernetes scheduler", position, message.line(position),
                                  {"resource": found.group(1)}))
    return clues
