"""Readers of error texts, one per kind of message (pure: text in, facts out), and the rules that give the facts a
meaning (causes.py).

`read_message` normalises the text (message.py), runs every reader and returns what each found, in the order of the
text. Each reader knows the grammar of its source (Python's tracebacks, pip's resolver, apt and dnf, the dynamic
loader, DKMS and dpkg, the shell, container runtimes and Kubernetes, the Neuron runtime's log, the compilers,
torch.distributed and EFA, out-of-memory messages, deprecation warnings, a library refusing a feature on this device)
and finds its lines with `str.find` on the folded text, then reads each line with a pattern of bounded repeats in a
bounded window: linear in the text (neurondoctor/log_text.py), at most a fixed number of lines per reader however
many times a line repeats.
"""

from __future__ import annotations

from neurondoctor.rules.explain_readers import (
    collectives,
    compiler_output,
    containers,
    device_memory,
    device_support,
    dkms_build,
    dynamic_loader,
    os_packages,
    pip_output,
    python_traceback,
    runtime_log,
    shell,
    warning_lines,
)
from neurondoctor.rules.explain_readers.clue import Clue
from neurondoctor.rules.explain_readers.message import Message

READERS = (python_traceback.read, pip_output.read, os_packages.read, dynamic_loader.read, dkms_build.read,
           shell.read, containers.read, runtime_log.read, compiler_output.read, collectives.read, device_memory.read,
           warning_lines.read, device_support.read)


def read_message(text: str | Message) -> list[Clue]:
    """Every clue the readers find in the text (or its normalised Message), in the order of the text."""
    message = text if isinstance(text, Message) else Message.of(text)
    clues = [clue for read in READERS for clue in read(message)]
    return sorted(clues, key=lambda clue: clue.position)


__all__ = ["READERS", "Clue", "Message", "read_message"]
