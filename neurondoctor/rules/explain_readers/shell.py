"""The shell's word for a command it cannot find: bash's `bash: NAME: command not found` (also `NAME: command not
found` from a script, and retyped without the colon: `neuron-ls command not found`), dash's `sh: 1: NAME: not
found`, zsh's `zsh: command not found: NAME`, `env`'s `/usr/bin/env: 'NAME': No such file or directory`, and a Go
program's `exec: "NAME": executable file not found in $PATH` (a tool that runs a helper program, as `neuron-profile
view` runs InfluxDB's `influx`).

The tools' own word for a helper that is there but not ready: neuron-profile's `influxdb not setup correctly` and
`influxdb token not setup correctly` (InfluxDB not installed, not started, or `influx setup` not run).

Facts: the command; `needed_by`, the program the text shows the user running (a `$ PROGRAM …` prompt line) when
the missing command is not that program itself.
"""

from __future__ import annotations

import re

from neurondoctor.rules.explain_readers.clue import Clue
from neurondoctor.rules.explain_readers.message import Message

READER = "shell"
_BASH = re.compile(r"(?:^|[ :])([A-Za-z0-9_.+/-]{1,200}):? command not found", re.MULTILINE | re.IGNORECASE)
_ZSH = re.compile(r"command not found: ([A-Za-z0-9_.+/-]{1,200})", re.IGNORECASE)
_DASH = re.compile(r"^sh: [0-9]{1,9}: ([A-Za-z0-9_.+/-]{1,200}): not found", re.MULTILINE | re.IGNORECASE)
_ENV = re.compile(r"env: '([A-Za-z0-9_.+/-]{1,200})': no such file or directory", re.IGNORECASE)
_EXEC = re.compile(r"exec: \"([A-Za-z0-9_.+/-]{1,200})\": executable file not found", re.IGNORECASE)
_PROMPT = re.compile(r"^ ?[$#] ([A-Za-z0-9_.+/-]{1,200})", re.MULTILINE)


def _program_run(message: Message, command: str) -> dict[str, str]:
    """The program of the text's first prompt line, when it is not the missing command."""
    found = _PROMPT.search(message.text, 0, min(len(message.text), 64 << 10))
    program = found.group(1).rsplit("/", 1)[-1] if found else ""
    return {"needed_by": program} if program and program != command else {}


def read(message: Message) -> list[Clue]:
    clues: list[Clue] = []
    read_lines: set[int] = set()  # zsh's line also holds bash's phrase: each line is read by the first shell's form
    for needle, pattern, before in (("command not found: ", _ZSH, 20), (": not found", _DASH, 230),
                                    ("': no such file or directory", _ENV, 220), ("command not found", _BASH, 220),
                                    ("executable file not found", _EXEC, 230)):
        for position in message.hits(needle, 4):
            start, end = message.span(position)
            if start in read_lines:
                continue
            found = pattern.search(message.text, max(start, position - before) if pattern is not _DASH else start,
                                   end)
            if found:
                read_lines.add(start)
                command = found.group(1).rsplit("/", 1)[-1]
                clues.append(Clue("command-not-found", READER, position, message.line(position),
                                  {"command": command, **_program_run(message, command)}))
    for position in message.hits("not setup correctly", 2):
        start, _ = message.span(position)
        if "influxdb" in message.folded[start:position]:
            clues.append(Clue("profiler-database-unready", READER, position, message.line(position),
                              {"command": "influx", "needed_by": "neuron-profile"}))
    return clues
