"""What `nccom-test` prints, read (pure): its table on stdout and the document `--report-to-json-file` writes.

The formats are the NCCOM-TEST user guide's (tools/neuron-sys-tools/nccom-test.rst, Neuron 2.24 on): a header line
`size(B) count(elems) [total_input_size(B) total_output_size(B)] type time(us)|time:avg(us) [time:pNN(us)…]
algbw(GB/s) busbw(GB/s) [algorithm]`, one row per size, then `Avg bus bandwidth: 40.6901GB/s`; a failed size is
a row whose second field is not a number (`33554432    Failure running neuron-bench - log file …`) followed by
`1 errors found - test failed`; a problem found before any run is one line (`Neuron DKMS Driver is not running!
…`). The JSON document is `{"results": [{"size(B)", "count(elems)", "type", "algbw(GB/s)", "busbw(GB/s)",
"time:avg(us)"}, …]}`. Both come from a node's tool: data, bounded, never trusted.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

_AVERAGE = re.compile(r"^\s*Avg bus bandwidth:\s*([0-9.]+)\s*GB/s", re.MULTILINE)
_ERRORS = re.compile(r"^\s*(\d+) errors? found", re.MULTILINE)


@dataclass
class NccomRow:
    size_bytes: int
    busbw_gbs: float
    algbw_gbs: Optional[float] = None
    time_us: Optional[float] = None


@dataclass
class NccomResult:
    """One nccom-test run: its rows, the average bus bandwidth, and what failed (empty when it ran)."""

    rows: list[NccomRow] = field(default_factory=list)
    average_busbw_gbs: Optional[float] = None
    failures: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures and bool(self.rows)

    @property
    def largest_busbw_gbs(self) -> Optional[float]:
        """The bus bandwidth at the largest size: what the links carry (small sizes measure latency)."""
        return max(self.rows, key=lambda row: row.size_bytes).busbw_gbs if self.rows else None


def _number(text: str) -> Optional[float]:
    try:
        return float(text)
    except ValueError:
        return None


def parse_table(text: str) -> NccomResult:
    """The stdout of one run. Rows are read by the header's column names, so the optional columns move nothing."""
    result = NccomResult()
    columns: list[str] = []
    for line in text.splitlines()[:10_000]:
        words = line.split()
        if not words:
            continue
        if words[0] == "size(B)":
            columns = words
            continue
        if not columns or not words[0].isdigit() or _ERRORS.match(line):
            continue
        if len(words) < 2 or not words[1].isdigit():  # `33554432    Failure running neuron-bench - log file …`
            result.failures.append(" ".join(words[1:])[:200] or f"size {words[0]}: no result")
            continue
        row = dict(zip(columns, words))
        busbw = _number(row.get("busbw(GB/s)", ""))
        if busbw is None:
            result.failures.append(f"size {words[0]}: no bus bandwidth in {line.strip()[:120]!r}")
            continue
        time_text = row.get("time:avg(us)") or row.get("time(us)") or ""
        result.rows.append(NccomRow(int(words[0]), busbw, _number(row.get("algbw(GB/s)", "")), _number(time_text)))
    average = _AVERAGE.search(text)
    result.average_busbw_gbs = float(average.group(1)) if average else None
    errors = _ERRORS.search(text)
    if errors and int(errors.group(1)) > 0 and not result.failures:
        result.failures.append(f"{errors.group(1)} errors found")
    if not result.rows and not result.failures:
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        result.failures.append(lines[0][:200] if lines else "no output")
    return result


def parse_report(text: str) -> NccomResult:
    """The `--report-to-json-file` document; a document that is not one is a failure, never a result."""
    try:
        document: Any = json.loads(text)
    except (ValueError, RecursionError) as error:
        return NccomResult(failures=[f"the JSON report is not JSON: {error}"])
    rows = document.get("results") if isinstance(document, dict) else None
    if not isinstance(rows, list):
        return NccomResult(failures=["the JSON report has no results"])
    result = NccomResult()
    for entry in rows:
        if not isinstance(entry, dict):
            continue
        size, busbw = entry.get("size(B)"), entry.get("busbw(GB/s)")
        if isinstance(size, int) and isinstance(busbw, (int, float)):
            algbw, time_us = entry.get("algbw(GB/s)"), entry.get("time:avg(us)", entry.get("time(us)"))
            result.rows.append(NccomRow(size, float(busbw), float(algbw) if isinstance(algbw, (int, float)) else None,
                                        float(time_us) if isinstance(time_us, (int, float)) else None))
    if result.rows:
        result.average_busbw_gbs = sum(row.busbw_gbs for row in result.rows) / len(result.rows)
    else:
        result.failures.append("the JSON report has no result rows")
    return result
