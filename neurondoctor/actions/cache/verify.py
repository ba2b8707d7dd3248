"""`cache verify`: whether each finished entry is whole, from its NEFF's header and size and its done marker.

A NEFF starts with a 1024-byte header of little-endian u64s: the format version (2), the header's size (1024), the
size of the data after it, … (neuron-packager user guide); the data is a gzip'd tar, so it starts with 1f 8b. An
entry is whole when its NEFF's header says so, the file holds at least header and data, and, from neuronx-cc 2.15,
`model.done` is beside it. Only the header is read (1 KiB), through regular_files' `read_untrusted_file` (no link,
no hard link to a file the cache's owner may not read), and only from a regular file: a NEFF that is a FIFO or a
device is reported, never opened.
"""

from __future__ import annotations

import os
import stat
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from neurondoctor.facts.cache_index import ENTRY_DONE, CacheIndex
from neurondoctor.host.cache_index import NEFF_HEADER_BYTES
from neurondoctor.output_text import field_text
from neurondoctor.regular_files import read_untrusted_file
from neurondoctor.rules.fix import quote_word

NEFF_VERSIONS = (1, 2)  # ASSUMED: the guide shows version 2; 1 is taken as the format's earlier number
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True)
class EntryProblem:
    entry: str  # `neuronxcc-…/MODULE_…`
    problem: str


def neff_problem(path: str) -> Optional[str]:
    """Why the NEFF at `path` (on this machine) is not whole, or None when its header and size agree."""
    try:
        found = os.lstat(path)
    except OSError as error:
        return f"model.neff unreadable: {error.strerror or error}"
    if not stat.S_ISREG(found.st_mode):
        return "model.neff is not a regular file"
    if found.st_size < NEFF_HEADER_BYTES:
        return f"model.neff has {found.st_size} bytes, less than its {NEFF_HEADER_BYTES}-byte header"
    try:
        head = read_untrusted_file(path, NEFF_HEADER_BYTES + len(GZIP_MAGIC))
    except OSError as error:
        return f"model.neff unreadable: {error.strerror or error}"
    version, header_size, data_size = struct.unpack_from("<QQQ", head)
    if version not in NEFF_VERSIONS or header_size != NEFF_HEADER_BYTES:
        return f"model.neff does not start with a NEFF header (it starts {head[:16]!r})"
    if found.st_size < header_size + data_size:
        return (f"model.neff is cut short: {found.st_size:,} bytes, its header says "
                f"{header_size + data_size:,}")
    if data_size and head[NEFF_HEADER_BYTES:] != GZIP_MAGIC:
        return "model.neff's data is not the gzip'd archive a NEFF holds"
    return None


def verify_entries(index: CacheIndex) -> tuple[int, list[EntryProblem]]:
    """(finished entries checked, the problems found) of an index kept with its entries."""
    checked, problems = 0, []
    if index.host_path is None:
        return 0, []
    for entry in index.entries:
        if entry.state != ENTRY_DONE or entry.link:
            continue
        checked += 1
        where = os.path.join(index.host_path, entry.compiler, entry.name)
        problem = neff_problem(os.path.join(where, "model.neff"))
        if problem is not None:
            problems.append(EntryProblem(f"{entry.compiler}/{entry.name}", problem))
    return checked, problems


def verify_document(root: str, path: str, checked: int, problems: Sequence[EntryProblem],
                    present: bool = True) -> dict[str, Any]:
    return {"schema": "neurondoctor.cache/1", "root": root,
            "verify": {"cache": path, "present": present, "checked": checked,
                       "problems": [{"entry": item.entry, "problem": item.problem} for item in problems]}}


def render_verify_text(path: str, checked: int, problems: Sequence[EntryProblem], present: bool = True) -> str:
    """Each entry's name is the cache's, and its problem may quote the file: each is one field (`field_text`). A
    default cache that does not exist says so: "0 entries checked" would read as a cache found whole."""
    if not present:
        return f"{field_text(path)}: not present, nothing to verify\n"
    lines = [f"{field_text(path)}: {checked:,} finished entr{'y' if checked == 1 else 'ies'} checked, "
             f"{len(problems):,} not whole"]
    lines += [f"  {field_text(item.entry)}: {field_text(item.problem)}" for item in problems]
    if problems:
        lines.append(f"A run that loads one of them fails: move them aside with "
                     f"`neurondoctor cache prune {field_text(quote_word(path))} --broken --yes`.")
    return "\n".join(lines) + "\n"
