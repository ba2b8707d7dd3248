"""Container runtimes and the Kubernetes side of Neuron devices:

- docker/containerd when a `--device` is not on the host: `error gathering device information while adding custom
  device "/dev/neuron0": no such file or directory`;
- the scheduler when no node has the resource the pod asks for: `0/3 nodes are available: 3 Insufficient
  aws.amazon.com/neuron.` (also `neuroncore`, `neurondevice`; and the typo `insufficent` some tools print);
- the scheduler when the pod's placement rules exclude every node, not a resource: `0/4 nodes are available: 4
  node(s) didn't match pod affinity rules`, `didn't match Pod's node affinity/selector`, `had untolerated taint`
  (kube-scheduler's reasons; read only when no `Insufficient` reason is on the line);
- the device plugin's own log (k8s-neuron-device-plugin): `No Neuron devices found` is read by runtime_log.py.

Facts: the device path, the resource, how many nodes.
"""

from __future__ import annotations

import re

from neurondoctor.rules.explain_readers.clue import Clue
from neurondoctor.rules.explain_readers.message import Message

_CUSTOM_DEVICE = re.compile(r"adding custom device \"?(/dev/[a-z0-9_/]{1,100})\"?: ([^\n]{0,100})")
_RESOURCE = re.compile(r"insuff?ic?i?e?n?t (aws\.amazon\.com/neuron[a-z]{0,20})")
_PLACEMENT = ("didn't match pod affinity", "didn't match pod anti-affinity", "didn't match pod's node affinity",
              "didn't match node selector", "had untolerated taint", "had taint")


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
    for position in message.hits("nodes are available", 4):
        line = message.folded[slice(*message.span(position))]
        rule = next((reason for reason in _PLACEMENT if reason in line), None)
        if rule and "insuf" not in line:
            clues.append(Clue("k8s-placement-rules", "Kubernetes scheduler", position, message.line(position),
                              {"reason": rule}))
    return clues
