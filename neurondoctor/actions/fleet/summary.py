"""`fleet summarize`: the reports of many nodes (collected by srun, SSM Run Command or a DaemonSet) read from
files, JSON lines or directories of them. Each document goes through the report reader, so reports of other
versions are read; an unreadable file or line is listed and skipped. A node is its report's `node.hostname` (else
the file name and line); when a node reported twice, its newest report counts. The summary is report/fleet.py's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from neurondoctor import json_data
from neurondoctor.regular_files import read_regular_file
from neurondoctor.report.fleet import FleetSummary, NodeRecord, node_record
from neurondoctor.report.reader import ReportFormatError, parse_report

FILE_LIMIT = 256 << 20


def _files(paths: Iterable[str]) -> Iterator[Path]:
    for given in paths:
        path = Path(given)
        if path.is_dir() and not path.is_symlink():
            for directory, subdirectories, names in os.walk(path, followlinks=False):
                subdirectories.sort()
                for name in sorted(names):
                    if name.endswith((".json", ".jsonl")):
                        yield Path(directory) / name
        else:
            yield path


def _documents(path: Path) -> Iterator[tuple[str, Any]]:
    """(where, decoded document or the ValueError that kept it from decoding) of every document in a file: one
    document, or JSON lines, where a bad line costs only that line."""
    text = read_regular_file(path, FILE_LIMIT).decode("utf-8", errors="replace")
    stripped = text.strip()
    if path.suffix != ".jsonl":
        try:
            yield str(path), json_data.loads(stripped)
            return
        except (ValueError, RecursionError) as error:
            if "\n" not in stripped:
                yield str(path), ValueError(f"not JSON: {error}")
                return
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                yield f"{path}:{number}", json_data.loads(line)
            except (ValueError, RecursionError) as error:
                yield f"{path}:{number}", ValueError(f"not JSON: {error}")


def _reason(error: Exception) -> str:
    text = getattr(error, "strerror", None) or (str(error).splitlines() or [type(error).__name__])[0]
    return str(text)[:160]


def summarize_paths(paths: Iterable[str]) -> FleetSummary:
    nodes: dict[str, NodeRecord] = {}
    unreadable: list[tuple[str, str]] = []
    for path in _files(paths):
        try:
            documents = list(_documents(path))
        except OSError as error:
            unreadable.append((str(path), _reason(error)))
            continue
        for where, document in documents:
            try:
                if isinstance(document, Exception):
                    raise document
                record = node_record(parse_report(document), Path(where).name)
            except (ValueError, ReportFormatError) as error:
                unreadable.append((where, _reason(error)))
                continue
            known = nodes.get(record.name)
            if known is None or record.generated_at >= known.generated_at:
                nodes[record.name] = record
    return FleetSummary(sorted(nodes.values(), key=lambda node: node.name), unreadable)
