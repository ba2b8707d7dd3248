"""Python's tracebacks and exception lines (the format of the `traceback` module): `File "PATH", line N, in F`
frames, then `TYPE: MESSAGE` where TYPE is a dotted name ending in Error, Exception, Exit, Interrupt or Warning.

TorchScript's `Unknown builtin op: neuron::forward_1` is read too: a loaded Neuron model whose operators nobody
registered (the package that registers `neuron::` operators, torch_neuron or torch_neuronx, was not imported).

Facts: the exception's type and message; the environment of the frames' paths (`/opt/venv` of
`/opt/venv/lib/python3.10/site-packages/…`); the package of the innermost site-packages frame; the module an
ImportError names (`No module named 'torch_neuronx'`, `cannot import name 'X' from 'libneuronxla'`).
"""

from __future__ import annotations

import re
from typing import Optional

from neurondoctor.rules.explain_readers.clue import Clue
from neurondoctor.rules.explain_readers.message import Message

READER = "Python traceback"
_EXCEPTION = re.compile(r"(?:^|\s)((?:[A-Za-z_][A-Za-z0-9_]{0,60}\.){0,6}[A-Za-z_][A-Za-z0-9_]{0,60}"
                        r"(?:Error|Exception|Exit|Interrupt|Warning))(?::\s?([^\n]{0,400}))?$")
_FRAME = re.compile(r'File "([^"\n]{1,1024})", line [0-9]{1,9}')
_SITE = re.compile(r"^(/[^\n\"']{0,1024}?)/lib(?:64)?/python[0-9.]{1,8}/(?:site|dist)-packages/([A-Za-z0-9_.-]{1,100})")
_NO_MODULE = re.compile(r"(?i:no module named) '?([A-Za-z0-9_.]{1,200})'?")
_FROM_MODULE = re.compile(r"cannot import name '([A-Za-z0-9_.]{1,200})' from '([A-Za-z0-9_.]{1,200})'")
_NEURON_OP = re.compile(r"(neuron::[a-z0-9_]{1,80})")
_MAX_EXCEPTIONS = 256
_TAIL_LINES = 32  # a traceback ends a log: its last lines are read whatever came before
_MAX_FRAMES = 64


def package_of(module: str) -> str:
    """A top-level module or a site-packages folder (`torch_neuronx`, `_XLAC.cpython-310-x86_64-linux-gnu.so`)
    as the distribution name people install (`torch-neuronx`, `torch-xla`)."""
    top = module.split(".", 1)[0]
    return {"_XLAC": "torch-xla", "neuronxcc": "neuronx-cc", "neuroncc": "neuron-cc"}.get(top, top.replace("_", "-"))


def site_path(path: str) -> Optional[tuple[str, str]]:
    """The environment and package of a path under site-packages or dist-packages."""
    found = _SITE.match(path)
    return (found.group(1), package_of(found.group(2))) if found else None


def _frames(message: Message) -> list[tuple[str, str]]:
    """(environment, package) of each site-packages frame, innermost last."""
    seen: list[tuple[str, str]] = []
    for position in message.hits('file "/', _MAX_FRAMES):
        frame = _FRAME.search(message.line(position))
        where = site_path(frame.group(1)) if frame else None
        if where:
            seen.append(where)
    return seen


def read(message: Message) -> list[Clue]:
    clues: list[Clue] = []
    frames = _frames(message)
    positions = [position for needle in ("error", "exception", "exit", "interrupt")
                 for position in message.hits(needle, _MAX_EXCEPTIONS)] + message.last_lines(_TAIL_LINES)
    for position in positions:
        line = message.line(position)[:400]
        found = _EXCEPTION.search(line)
        if found is None or line.startswith(("File ", "WARNING", "warning")):
            continue
        kind, text = found.group(1), (found.group(2) or "").strip()
        name = kind.rsplit(".", 1)[-1]
        if name.isupper() or name in ("Error", "Exception", "Warning", "Exit", "Interrupt"):
            continue  # `ERROR:`, a bare `Error:`: a log level or a word, not a Python exception
        facts = {"type": kind, "message": text[:300]}
        if frames:
            facts["environment"], facts["package"] = frames[-1]
        module = _NO_MODULE.search(text) or _FROM_MODULE.search(text)
        if module:
            facts["module"] = module.group(1) if module.re is _NO_MODULE else module.group(2)
            facts["package"] = package_of(facts["module"])
        for path in text.split():
            where = site_path(path.strip("'\":,()"))
            if where and "environment" not in facts:
                facts["environment"], facts["package"] = where
        clues.append(Clue("python-exception", READER, message.span(position)[0], line[:400], facts))
    for position in message.hits("unknown builtin op: neuron::", 2):
        operator = _NEURON_OP.search(message.folded, position, message.span(position)[1])
        clues.append(Clue("neuron-op-unregistered", READER, position, message.line(position),
                          {"operator": operator.group(1)} if operator else {}))
    return sorted({clue.position: clue for clue in clues}.values(), key=lambda clue: clue.position)
