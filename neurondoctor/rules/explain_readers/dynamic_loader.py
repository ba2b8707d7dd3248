"""The dynamic loader's messages (glibc's elf/dl-load.c, dl-version.c, dl-lookup.c, and Python's ImportError that
carries them):

- `error while loading shared libraries: LIB: cannot open shared object file: No such file or directory` (a program)
  and `LIB: cannot open shared object file` (an ImportError or OSError from ctypes);
- `version `GLIBC_2.34' not found (required by FILE)`, also `GLIBCXX_…` and `CXXABI_…`: the file was built on a
  newer system than this one;
- `undefined symbol: NAME` (read further by rules/probes/import_errors.py);
- `cannot allocate memory in static TLS block`;
- `Inconsistency detected by ld.so: FILE: LINE: FUNCTION: Assertion `…' failed!`: the loader's own consistency
  check (glibc's elf/*.c) stopped the process.

Facts: the library, the binary or file that asked, the symbol version.
"""

from __future__ import annotations

import re

from neurondoctor.rules.explain_readers.clue import Clue
from neurondoctor.rules.explain_readers.message import Message

READER = "dynamic loader"
_CANNOT_OPEN = re.compile(r"([^\s:'\"]{1,300}): cannot open shared object file")
_PROGRAM = re.compile(r"([^\s:'\"]{1,300}): error while loading shared libraries: ")
_VERSION = re.compile(r"version [`'‘]?((?:GLIBC|GLIBCXX|CXXABI)_[0-9.]{1,20})[`'’]? not found(?: \(required by "
                      r"([^\s)]{1,300})\))?")
_TLS = re.compile(r"([^\s:'\"]{1,300}): cannot allocate memory in static TLS block")
_ASSERTION = re.compile(r"inconsistency detected by ld\.so: ([^\s:]{1,200}): ?[0-9]{0,9}:? ?([A-Za-z0-9_]{1,100})?")
_SYMBOL = re.compile(r"undefined symbol: ([^\s,]{1,300})")


def read(message: Message) -> list[Clue]:
    clues: list[Clue] = []
    for position in message.hits(": cannot open shared object file", 8):
        start, end = message.span(position)
        found = _CANNOT_OPEN.search(message.text, max(start, position - 300), end)
        if not found:
            continue
        facts = {"library": found.group(1).rsplit("/", 1)[-1]}
        program = _PROGRAM.search(message.text, max(start, position - 700), end)
        if program:
            facts["binary"] = program.group(1)
        clues.append(Clue("library-missing", READER, position, message.line(position), facts))
    for position in message.hits(" not found", 8):
        start, end = message.span(position)
        found = _VERSION.search(message.text, max(start, position - 60), end)
        if found:
            facts = {"symbol_version": found.group(1)}
            if found.group(2):
                facts["required_by"] = found.group(2)
            clues.append(Clue("symbol-version-missing", READER, position, message.line(position), facts))
    for position in message.hits("in static tls block", 4):
        start, end = message.span(position)
        found = _TLS.search(message.text, max(start, position - 340), end)
        clues.append(Clue("static-tls", READER, position, message.line(position),
                          {"library": found.group(1).rsplit("/", 1)[-1]} if found else {}))
    for position in message.hits("inconsistency detected by ld.so", 2):
        found = _ASSERTION.search(message.folded, position, message.span(position)[1])
        if found:
            clues.append(Clue("loader-assertion", READER, position, message.line(position),
                              {"file": found.group(1), "function": found.group(2) or ""}))
    for position in message.hits("undefined symbol: ", 4):
        found = _SYMBOL.search(message.text, position, message.span(position)[1])
        if found:
            clues.append(Clue("undefined-symbol", READER, position, message.line(position),
                              {"symbol": found.group(1)[:200]}))
    return clues
