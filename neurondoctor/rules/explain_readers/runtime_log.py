"""The Neuron runtime's log lines and the messages its callers wrap them in (the runtime troubleshooting guide,
neuron-runtime/nrt-troubleshoot.rst; the format `2024-Jan-19 05:03:34.3439 PID:TID LEVEL MODULE:function message`,
whose stamp the normaliser has removed):

- a core request it could not meet: `NeuronCore(s) not available - Requested:1 Available:0`, also written
  `Logical Neuron Core(s) not available`, `Neuron Core(s)`, `nc(s)`;
- the Inf1-era runtime daemon's `NRTD response code 'NERR_RESOURCE_NC' (9) There were insufficent NCs for the
  requested operation` (its own spelling);
- a device it could not open: `Failed to open /dev/neuron0`, `Could not open the nd3`, the Neuron 1.x
  runtime's `Could not open the device index:0`, with `Permission denied`
  or `No such file or directory` when the caller kept errno;
- cores or devices handed to it that are not one contiguous range: `Neuron cores are not contiguous`
  (nrt_allocate_neuron_cores; a container given scattered devices);
- the Inf1-era runtime daemon (neuron-rtd) not answering its gRPC clients: `Failed to create NeuronCore Group with
  GRPC Error. Status Error: 14, Error message: "Connect Failed"` (nothing listens where the daemon should);
- no device at all: `No neuron device found`, `No Neuron devices found`, `Found 0 Neuron devices`,
  `neuron device not found`;
- an execution that touched memory outside its tensors: the runtime's notification `failed to run scatter/gather
  (indirect memory copy), due to out-of-bound access`, `Out of bounds access on model M`, the status
  `NRT_EXEC_OOB` (1006): the guide's "incorrect inputs have been provided to the model";
- inputs that are not what the model was compiled for: `Unexpected input size, for data00, expected: 2097152,
  received: 33554432` (the Inf1 runtime), `NRT_EXEC_BAD_INPUT` / `NERR_INFER_BAD_INPUT` (1002: "invalid input has
  been submitted to infer, e.g. missing some of the input tensors, incorrect input tensor sizes");
- an execution that produced NaN or infinity: `INFER_ERROR_SUBTYPE_NUMERICAL`, `status=1003 message=Numerical Error`,
  `NRT_EXEC_NUMERICAL_ERR` (nrt_status.h: 1003, "numerical errors");
- devices an earlier run left running, which only a driver reload stops: `One or more engines are running. Please
  restart device by reloading driver`, `Timestamp program stop timeout` with `Failed to stop neuron core`.

Facts: the runtime function (`nrt_allocate_neuron_cores`), the device and core numbers, the cores asked for and
available, why the open failed.
"""

from __future__ import annotations

import re

from neurondoctor.rules.explain_readers.clue import Clue
from neurondoctor.rules.explain_readers.message import Message

READER = "Neuron runtime"
_FUNCTION = re.compile(r"\b(?:nrt|tdrv|nmgr|neff|kmgr|ndl|tpb|nec|enc):([a-z_][a-z0-9_]{0,80})")
_CORES = re.compile(r"(?:neuron ?cores?|nc)\(s\) (?:are )?not available(?: ?[-:,]? ?requested: ?([0-9]{1,6})"
                    r"[ ,]{0,3}available: ?([0-9]{1,6}))?")
_DEVICE = re.compile(r"(?:failed to open|could not open|cannot open|unable to open) (?:the )?"
                     r"(?:(?:/dev/neuron|nd|device index: ?)([0-9]{1,5})|/dev/neuron)")
_INSUFFICIENT_CORES = re.compile(r"insuff?ic?i?e?n?t (?:ncs|neuron ?cores|nc)\b|nerr_resource_nc")
_CONTIGUOUS = re.compile(r"(?:neuron ?cores?|ncs?|neuron ?devices?|devices?|device ids?) (?:are |is )?not contiguous")
_NO_DEVICE = re.compile(r"no (?:neuron|inferentia|trainium) devices? (?:were |was )?(?:found|available|detected)"
                        r"|(?:neuron|inferentia|trainium) devices? (?:were |was |is )?not (?:found|detected)"
                        r"|found 0 (?:neuron|inferentia|trainium) devices?")


# The status names and codes of nrt_status.h the runtime prints for these (`status=1006`, `err: 1006`).
_OUT_OF_BOUNDS = ("out-of-bound access", "out of bound access", "out-of-bounds access", "out of bounds access",
                  "nrt_exec_oob")
_NUMERICAL = ("infer_error_subtype_numerical", "message=numerical error", "nrt_exec_numerical_err",
              "numerical error notification")
_BAD_INPUT = ("unexpected input size", "nrt_exec_bad_input", "nerr_infer_bad_input")
_INPUT_SIZE = re.compile(r"expected: ?([0-9]{1,15}), received: ?([0-9]{1,15})")
_RESET = ("restart device by reloading driver", "failed to stop neuron core", "engines are running")
_CORE = re.compile(r"\bnd ?([0-9]{1,3})[: ]{1,2}nc ?([0-9]{1,3})\b|\[nd ([0-9]{1,3})\]\[nc ([0-9]{1,3})\]")


def _core(message: Message, position: int) -> dict[str, str]:
    """`nd0:nc1`, `nd0 nc1` or `[ND 0][NC 1]` on the line: the device and core."""
    start, end = message.span(position)
    found = _CORE.search(message.folded, start, end)
    if not found:
        return {}
    device, core = (found.group(1), found.group(2)) if found.group(1) is not None else (found.group(3), found.group(4))
    return {"device": device, "core": core}


def _function(message: Message, position: int) -> dict[str, str]:
    start, end = message.span(position)
    found = _FUNCTION.search(message.folded, start, min(end, start + 200))
    return {"function": found.group(1)} if found else {}


def read(message: Message) -> list[Clue]:
    clues: list[Clue] = []
    for position in message.hits("(s) not available", 4):
        start, end = message.span(position)
        found = _CORES.search(message.folded, max(start, position - 20), end)
        if found:
            facts = {**_function(message, position)}
            if found.group(1) is not None:
                facts["requested"], facts["available"] = found.group(1), found.group(2)
            clues.append(Clue("cores-unavailable", READER, position, message.line(position), facts))
    for needle in ("insufficent", "insufficient", "insuficient", "nerr_resource_nc"):
        for position in message.hits(needle, 2):
            start, end = message.span(position)
            if _INSUFFICIENT_CORES.search(message.folded, max(start, position - 20), min(end, position + 40)):
                clues.append(Clue("cores-unavailable", READER, position, message.line(position),
                                  _function(message, position)))
    for needle in ("open /dev/neuron", "open the nd", "open nd", "open the device index"):
        for position in message.hits(needle, 4):
            start, end = message.span(position)
            found = _DEVICE.search(message.folded, max(start, position - 20), end)
            if not found:
                continue
            line = message.folded[start:end] + " " + message.next_line(position).lower()
            facts = {**_function(message, position), "device": found.group(1) or ""}
            if "permission denied" in line or "eacces" in line or "operation not permitted" in line:
                facts["errno"] = "permission denied"
            elif "no such file" in line or "enoent" in line or "no such device" in line:
                facts["errno"] = "no such file"
            clues.append(Clue("device-open-failed", READER, position, message.line(position), facts))
    for position in message.hits("not contiguous", 2):
        start, end = message.span(position)
        if _CONTIGUOUS.search(message.folded, max(start, position - 60), end):
            clues.append(Clue("cores-not-contiguous", READER, position, message.line(position),
                              _function(message, position)))
    for position in message.hits("neuroncore group", 2):
        start, end = message.span(position)
        line = message.folded[start:end]
        # "Connect Failed": nothing listens. A connection that broke ("Socket closed", also status 14) is a daemon
        # that was there and went away: another cause, left to the rest of the text.
        if "grpc" in line and "connect failed" in line:
            clues.append(Clue("runtime-daemon-unreachable", READER, position, message.line(position),
                              _function(message, position)))
    for needle in ("device found", "devices found", "device available", "devices available", "device not found",
                   "devices not found", "device detected", "devices detected", "device was not found",
                   "devices were not found", "device is not found", "device not detected"):
        for position in message.hits(needle, 2):
            start, end = message.span(position)
            found = _NO_DEVICE.search(message.folded, max(start, position - 60), end)
            if found:
                clues.append(Clue("no-device", READER, position, message.line(position),
                                  _function(message, position)))
    for needle in _BAD_INPUT:
        for position in message.hits(needle, 2):
            sizes = _INPUT_SIZE.search(message.folded, *message.span(position))
            clues.append(Clue("execution-bad-input", READER, position, message.line(position),
                              {**_function(message, position),
                               **({"expected": sizes.group(1), "received": sizes.group(2)} if sizes else {})}))
    for kind, needles in (("execution-out-of-bounds", _OUT_OF_BOUNDS), ("execution-numerical-error", _NUMERICAL),
                          ("devices-left-running", _RESET)):
        for needle in needles:
            for position in message.hits(needle, 2):
                clues.append(Clue(kind, READER, position, message.line(position),
                                  {**_function(message, position), **_core(message, position)}))
    return clues
