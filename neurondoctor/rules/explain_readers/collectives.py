"""Collectives, EFA and torch.distributed's rendezvous (torch/distributed's c10d store and elastic rendezvous
messages; libfabric's and the Neuron OFI plugin's; the collectives section of the runtime troubleshooting guide):

- the rendezvous: `torch.distributed.DistNetworkError: … The client socket has timed out`, `Connection refused`,
  `RendezvousTimeoutError`, `RendezvousConnectionError`, `Timed out initializing process group in store based
  barrier`, `Address already in use` (a port an earlier run still holds);
- EFA: `No EFA devices found`, `EFA device not found`;
- a peer that went away: the collectives' `RX, connection closed by remote peer`, gRPC's `Socket closed` with `Error
  received from peer`, `Connection reset by peer`: this rank lost its peer, which failed or exited first;
- a peer not there yet: the collectives' bootstrap retrying, `Timeout waiting for RX (waited 120 sec) - retrying`,
  `Connect to HOST:PORT failed - retrying` (the runtime troubleshooting guide: a rank still compiling is late, the
  wait is not fatal);
- the bootstrap finding no network interface to reach its peer: `No interface found in the same subnet as remote
  address fe80::…`, `No usable listening interface found` (the guide: a link-local IPv6 address it should not use);
- the EFA driver's `Failed to process command DEREG_MR` beside the Neuron driver's `npid_detach` (the guide: a race
  of both deregistering a process's buffers as it exits, harmless).

Facts: the address, what failed.
"""

from __future__ import annotations

import re

from neurondoctor.rules.explain_readers.clue import Clue
from neurondoctor.rules.explain_readers.message import Message

READER = "torch.distributed"
_ADDRESS = re.compile(r"(?:\(|\bat |to |\[)([a-z0-9.-]{1,253}[:\]][0-9]{1,5})")
_RENDEZVOUS = (("client socket has timed out", "timeout"), ("rendezvoustimeouterror", "timeout"),
               ("rendezvousconnectionerror", "connection"), ("store based barrier", "timeout"),
               ("distnetworkerror", "network"), ("connection refused", "connection refused"),
               ("address already in use", "address in use"))
# Only the phrases that say no EFA device is there: libfabric's `fi_getinfo` and provider lines are also printed as
# warnings beside the real failure (the runtime troubleshooting guide's collectives section).
_EFA = ("no efa devices", "efa device not found", "unable to find efa")
_REMOTE = re.compile(r"remote address ([0-9a-f:.]{2,64})")
_PEER_GONE = ("closed by remote peer", "connection reset by peer", "error received from peer")
_RETRYING = re.compile(r"(?:timeout waiting for|timed out waiting for|connect to|connection to) [^\n]{0,200}"
                       r"(?:failed|sec\)|timed out)[^\n]{0,40}- ?retrying")


def read(message: Message) -> list[Clue]:
    clues: list[Clue] = []
    distributed = any(word in message.folded for word in ("torch.distributed", "rendezvous", "c10d", "torchrun",
                                                          "master_addr", "process group"))
    read_lines: set[int] = set()  # a line read once, by its most specific phrase (the first in _RENDEZVOUS)
    for needle, what in _RENDEZVOUS:
        if needle in ("connection refused", "address already in use") and not distributed:
            continue
        for position in message.hits(needle, 2):
            start, end = message.span(position)
            if start in read_lines:
                continue
            read_lines.add(start)
            facts = {"failure": what}
            address = _ADDRESS.search(message.folded, start, min(end, start + 2000))
            if address:
                facts["address"] = address.group(1)
            clues.append(Clue("rendezvous-failed", READER, position, message.line(position), facts))
    for needle in _EFA:
        for position in message.hits(needle, 2):
            clues.append(Clue("efa-missing", "EFA", position, message.line(position), {}))
    for needle in _PEER_GONE:
        for position in message.hits(needle, 2):
            if needle == "error received from peer" and "socket closed" not in message.line(position).lower():
                continue  # gRPC names its peer on every error; only a closed socket says the peer went away
            address = _ADDRESS.search(message.folded, *message.span(position))
            clues.append(Clue("peer-gone", READER, position, message.line(position),
                              {"address": address.group(1)} if address else {}))
    for position in message.hits("retrying", 4):
        start, end = message.span(position)
        if _RETRYING.search(message.folded, start, end):
            address = _ADDRESS.search(message.folded, start, end)
            clues.append(Clue("peer-not-ready", READER, position, message.line(position),
                              {"address": address.group(1)} if address else {}))
    for needle in ("no interface found in the same subnet", "no usable listening interface"):
        for position in message.hits(needle, 2):
            remote = _REMOTE.search(message.folded, *message.span(position))
            clues.append(Clue("bootstrap-no-interface", READER, position, message.line(position),
                              {"remote": remote.group(1)} if remote else {}))
    if "npid_detach" in message.folded:
        for position in message.hits("failed to process command dereg_mr", 2):
            clues.append(Clue("efa-deregistration-at-exit", "EFA", position, message.line(position), {}))
    return clues
