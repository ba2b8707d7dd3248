"""`fleet summarize`: the reports of many nodes (collected by srun, SSM Run Command or a DaemonSet) read from
files, JSON lines or directories of them. Each document goes through the report reader, so reports of other
versions are read; an unreadable file or line is listed and skipped. A node is the file its report came in (its path
under the directory given, without `.json`), never the hostname the report claims; a JSON line, which arrives with
others in one file, is named by its claim as long as no file or other line is that node (rules/fleet/identity.py).
A report whose word about itself is not taken is named in `identity`. The summary is report/fleet.py's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Optional

from neurondoctor import json_data
from neurondoctor.regular_files import read_regular_file
from neurondoctor.report.fleet import FleetSummary, NodeRecord, node_record
from neurondoctor.report.reader import ReportFormatError, parse_report
from neurondoctor.rules.fleet.identity import Arrival, identities

FILE_LIMIT = 256 << 20


def _files(paths: Iterable[str]) -> Iterator[tuple[Path, str]]:
    """(file, the node it is: its path under the directory given, or its own name, without `.json`)."""
    for given in paths:
        path = Path(given)
        if path.is_dir() and not path.is_symlink():
            for directory, subdirectories, names in os.walk(path, followlinks=False):
                subdirectories.sort()
                for name in sorted(names):
                    if name.endswith((".json", ".jsonl")):
                        found = Path(directory) / name
                        yield found, _node_name(found.relative_to(path))
        else:
            yield path, _node_name(Path(path.name))


def _node_name(relative: Path) -> str:
    return str(relative)[: -len(".json")] if relative.suffix == ".json" else str(relative)


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


def summarize_paths(paths: Iterable[str], now: Optional[datetime] = None) -> FleetSummary:
    """The summary of every report under `paths`; `now` (the clock, by default) is what a report's date is held to.
    Each report is reduced to its NodeRecord as it is read (1,000 parsed reports kept alive cost the cycle collector
    more than reading them), and judged for its identity once all have arrived."""
    now = now or datetime.now(timezone.utc)
    arrivals: list[Arrival] = []
    records: list[NodeRecord] = []
    unreadable: list[tuple[str, str]] = []
    for path, node in _files(paths):
        try:
            documents = list(_documents(path))
        except OSError as error:
            unreadable.append((str(path), _reason(error)))
            continue
        for where, document in documents:
            try:
                if isinstance(document, Exception):
                    raise document
                report = parse_report(document)
            except (ValueError, ReportFormatError) as error:
                unreadable.append((where, _reason(error)))
                continue
            arrivals.append(Arrival(where, node if where == str(path) else None, report.node.hostname,
                                    report.generated_at))
            records.append(node_record(report, "", where))
    counted, identity = [], []
    for arrival, record, judged in zip(arrivals, records, identities(arrivals, now)):
        identity += [(judged.name, arrival.where, problem) for problem in judged.problems]
        if judged.counted:
            record.name = judged.name
            record.distrust(judged.problems)
            counted.append(record)
    return FleetSummary(sorted(counted, key=lambda node: node.name), unreadable, identity)
