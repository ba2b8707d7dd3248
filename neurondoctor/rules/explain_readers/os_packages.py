"""The OS package managers' errors (apt's and dpkg's words in apt-pkg and dpkg's sources, dnf's in dnf/cli):

- apt: `E: Unable to locate package NAME`, `E: Package 'NAME' has no installation candidate`,
  `E: Version 'V' for 'NAME' was not found`, `NO_PUBKEY KEY` / `EXPKEYSIG KEY` on a repository,
  `E: Could not get lock /var/lib/dpkg/lock-frontend`, `E: dpkg was interrupted`, `E: Held packages were changed and
  -y was used without --allow-change-held-packages` (apt-get's words for a held package it will not change);
- dnf/yum: `No match for argument: NAME`, `Error: Unable to find a match: NAME`, `GPG check FAILED`,
  `Public key for FILE is not installed`.

Facts: the tool, the package and the version asked for, the key.
"""

from __future__ import annotations

import re

from neurondoctor.rules.explain_readers.clue import Clue
from neurondoctor.rules.explain_readers.message import Message

_PACKAGE = r"'?([a-z0-9][a-z0-9.+_-]{0,100})'?"
_PATTERNS = (
    # (needle, pattern, kind, tool, fact names)
    ("unable to locate package ", re.compile(r"unable to locate package " + _PACKAGE), "os-package-missing", "apt",
     ("package",)),
    ("has no installation candidate", re.compile(r"package " + _PACKAGE + r" has no installation candidate"),
     "os-package-missing", "apt", ("package",)),
    ("was not found", re.compile(r"version '([^'\n]{1,64})' for '([a-z0-9][a-z0-9.+_-]{0,100})' was not found"),
     "os-package-version", "apt", ("version", "package")),
    ("no match for argument: ", re.compile(r"no match for argument: " + _PACKAGE), "os-package-missing", "dnf",
     ("package",)),
    ("unable to find a match: ", re.compile(r"unable to find a match: " + _PACKAGE), "os-package-missing", "dnf",
     ("package",)),
    ("no_pubkey ", re.compile(r"no_pubkey ([0-9a-f]{8,40})"), "os-repository-key", "apt", ("key",)),
    ("expkeysig ", re.compile(r"expkeysig ([0-9a-f]{8,40})"), "os-repository-key", "apt", ("key",)),
    ("gpg check failed", re.compile(r"gpg check failed"), "os-repository-key", "dnf", ()),
    ("is not installed", re.compile(r"public key for ([^ \n]{1,200}) is not installed"), "os-repository-key", "dnf",
     ("file",)),
    ("could not get lock ", re.compile(r"could not get lock ([^ \n]{1,200})"), "os-package-lock", "apt", ("lock",)),
    ("dpkg was interrupted", re.compile(r"dpkg was interrupted"), "os-package-lock", "apt", ()),
    ("held packages were changed", re.compile(r"held packages were changed"), "os-package-held", "apt", ()),
    ("allow-change-held-packages", re.compile(r"without --allow-change-held-packages"), "os-package-held", "apt", ()),
)


def read(message: Message) -> list[Clue]:
    clues: list[Clue] = []
    for needle, pattern, kind, tool, names in _PATTERNS:
        for position in message.hits(needle, 8):
            start, end = message.span(position)
            found = pattern.search(message.folded, max(start, position - 120), end)
            if found:
                facts = {"tool": tool, **{name: value.rstrip(".") for name, value in zip(names, found.groups())}}
                clues.append(Clue(kind, tool, position, message.line(position), facts))
    return clues
