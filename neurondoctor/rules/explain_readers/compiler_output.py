"""How the compilers end (neuronx-cc for Trn/Inf2, the older neuron-cc for Inf1) and how their callers report it:

- killed: `neuronx-cc failed with -9`, `returned with exitcode=-9`, `exit status 137` (128 + SIGKILL),
  `<Signals.SIGKILL: 9>`, `[F137]`, neuron_parallel_compile's `Received error code: -9`, or a line `Killed` in a
  compile's output: the kernel's out-of-memory killer;
- failed: `neuronx-cc failed with N`, `neuron-cc failed with N`, `Compile command returned: N`,
  `compilation failed` with a status, `subprocess.CalledProcessError: Command '[…neuronx-cc…]' returned non-zero
  exit status N`;
- its own error log: `ERROR PID [neuronx-cc]: …` lines and the footer `Artifacts stored in: DIR` that it prints
  when a compile stops (no status to read: a failure with its cause in the lines above);
- torch-neuronx's graph partitioner: `The partitioner has found 3 subgraphs which exceeds the specified max
  subgraph count of 2` (operators it placed on the CPU cut the graph into more pieces than allowed);
- a graph too large for one compilation: `Too many instructions after unroll for function sg0000`, `The number of
  instructions generated exceeds the limit`, `Number of instructions (8658944) is over the threshold (5000000)`
  (the compiler error-code table's NCC_EBVF030, NCC_EVRF007, NCC_EXTP004, XTP002);
- a serialised graph the framework cannot read back: protobuf's `DecodeError: Error parsing message with type
  'tensorflow.GraphDef'` (a graph above protobuf's 2 GB limit);
- the compiler's codes (`NCC_EOOM001`) are read by rules/probes/compiler_codes.py.

Facts: which compiler, the status or signal.
"""

from __future__ import annotations

import re

from neurondoctor.rules.explain_readers.clue import Clue
from neurondoctor.rules.explain_readers.message import Message

READER = "compiler"
_STATUS = re.compile(r"(neuronx-cc|neuron-cc|neuronxcc|neuroncc|compile command)[^\n]{0,300}?(?:failed with "
                     r"|returned(?: with)? ?(?:exitcode=|non-zero exit status |: )|exit(?:ed with)? (?:code|status) ?"
                     r"|received error code:? ?)"
                     r"(-?[0-9]{1,4})")
_SUBGRAPHS = re.compile(r"found ([0-9]{1,6}) subgraphs?[^\n]{0,60}? exceeds? (?:the )?(?:specified )?max(?:imum)? "
                        r"subgraph count (?:of )?([0-9]{1,6})")
_SIGKILL = re.compile(r"signals\.sigkill|\bsigkill\b|signal 9\b|killed by signal 9")
_KILLED_CODES = {"-9", "137"}
_INSTRUCTIONS = re.compile(r"too many instructions|(?:number of )?instructions generated exceeds? the limit"
                           r"|number of instructions \(([0-9]{1,12})\) is over the threshold \(([0-9]{1,12})\)"
                           r"|generated too many instructions \(([0-9]{1,12})\)")


def _compiler(line: str) -> str:
    return "neuron-cc" if ("neuron-cc" in line or "neuroncc" in line) and "neuronx" not in line else "neuronx-cc"


def read(message: Message) -> list[Clue]:
    clues: list[Clue] = []
    for needle in ("neuronx-cc", "neuron-cc", "neuronxcc", "neuroncc", "compile command"):
        for position in message.hits(needle, 8):
            start, end = message.span(position)
            line = message.folded[start:end]
            found = _STATUS.match(line, position - start, min(len(line), position - start + 400))
            if found:
                status = found.group(2)
                kind = "compiler-killed" if status in _KILLED_CODES else "compiler-failed"
                clues.append(Clue(kind, READER, position, message.line(position),
                                  {"compiler": _compiler(line), "status": status}))
            elif _SIGKILL.search(line):
                clues.append(Clue("compiler-killed", READER, position, message.line(position),
                                  {"compiler": _compiler(line), "status": "SIGKILL"}))
    if "neuronx-cc" in message.folded or "neuron-cc" in message.folded:
        for position in message.hits("killed", 8):
            if message.line(position).lower() in ("killed", "killed.") or message.line(position).lower().endswith(
                    " killed"):
                clues.append(Clue("compiler-killed", READER, position, message.line(position),
                                  {"compiler": _compiler(message.folded), "status": "Killed"}))
                break
    for position in message.hits("max subgraph count", 2):
        start, end = message.span(position)
        found = _SUBGRAPHS.search(message.folded, max(start, position - 200), end)
        if found and "partitioner" in message.folded[start:end]:
            clues.append(Clue("partitioner-subgraphs", READER, position, message.line(position),
                              {"subgraphs": found.group(1), "max_subgraph_count": found.group(2)}))
    for needle in ("too many instructions", "instructions generated exceed", "number of instructions ("):
        for position in message.hits(needle, 2):
            start, end = message.span(position)
            found = _INSTRUCTIONS.search(message.folded, max(start, position - 40), end)
            if found:
                count = found.group(1) or found.group(3)
                clues.append(Clue("compiler-instruction-limit", READER, position, message.line(position),
                                  {**({"instructions": count} if count else {}),
                                   **({"limit": found.group(2)} if found.group(2) else {})}))
    for position in message.hits("decodeerror", 2):
        start, end = message.span(position)
        if "graphdef" in message.folded[position:end]:
            clues.append(Clue("graph-proto-unreadable", READER, position, message.line(position),
                              {"message": "GraphDef"}))
    for position in message.hits("artifacts stored in:", 2):
        start, end = message.span(position)
        line = message.folded[start:end]
        if "neuronx-cc" in line or "neuron-cc" in line or "neuronx-cc" in message.folded:
            artifacts = message.text[position + len("artifacts stored in:"):end].strip()[:300]
            clues.append(Clue("compiler-error-log", READER, position, message.line(position),
                              {"compiler": _compiler(line if "neuron" in line else message.folded),
                               **({"artifacts": artifacts} if artifacts else {})}))
            break
    return clues
