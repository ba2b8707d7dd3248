"""The words for a message no rule gives a meaning (pure): what kind of message it is and what was read from it
("a Python ImportError in /opt/venv for libneuronxla"), so that an unmatched text is still read.
"""

from __future__ import annotations

from typing import Optional

from neurondoctor.rules.explain_readers.clue import Clue

KINDS = ("Python traceback, pip, apt/dnf, dynamic loader, DKMS/dpkg, shell, container/Kubernetes, Neuron runtime "
         "log, compiler, torch.distributed/EFA, out-of-memory")


def describe(clue: Clue) -> str:
    facts = clue.facts
    if clue.kind == "python-exception":
        where = f" in {facts['environment']}" if facts.get("environment") else ""
        package = f" for {facts['package']}" if facts.get("package") else ""
        said = f": {facts['message']}" if facts.get("message") else ""
        return f"a Python {facts.get('type', 'exception')}{where}{package}{said}"
    shown = ", ".join(f"{name} {value[:120]}" for name, value in facts.items() if value)
    return f"a {clue.reader} message ({clue.kind.replace('-', ' ')})" + (f": {shown}" if shown else "")


def next_command(clue: Optional[Clue]) -> str:
    """The command that tells more about this host than the text does."""
    if clue is not None and clue.facts.get("environment"):
        return f"neurondoctor check --venv {clue.facts['environment']}"
    return "neurondoctor check"
