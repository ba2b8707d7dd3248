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

import re
from dataclasses import dataclass, field
from typing import Any, Optional

from neurondoctor import json_data
from neurondoctor.strict_numbers import finite_float, json_count, parse_count

_AVERAGE = re.compile(r"^\s*Avg bus bandwidth:\s*([0-9.eE+-]{1,64})\s*GB/s", re.MULTILINE)
_ERRORS = re.compile(r"^\s*([0-9]{1,9}) errors? found", re.MULTILINE)
# A message size past 2^63 bytes is no size nccom-test ran; a bandwidth past this is no link's (TB/s of a chip).
_MAX_SIZE_DIGITS = 19
_MAX_GBS = 1e6


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


def _number(text: Any) -> Optional[float]:
    """A measurement as strict_numbers reads one: finite, non-negative, ASCII (`nan`, `inf`, `1e999` are none)."""
    return finite_float(text, maximum=_MAX_GBS)


def _json_number(value: Any, maximum: Optional[float] = _MAX_GBS) -> Optional[float]:
    """A number of the JSON report: a JSON number, finite and in range (a string is not one here)."""
    return None if isinstance(value, str) else finite_float(value, maximum=maximum)


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
        size = parse_count(words[0], max_digits=_MAX_SIZE_DIGITS)
        if not columns or size is None or _ERRORS.match(line):
            continue
        if len(words) < 2 or parse_count(words[1], max_digits=_MAX_SIZE_DIGITS) is None:  # `33554432    Failure …`
            result.failures.append(" ".join(words[1:])[:200] or f"size {words[0]}: no result")
            continue
        row = dict(zip(columns, words))
        busbw = _number(row.get("busbw(GB/s)", ""))
        if busbw is None:
            result.failures.append(f"size {words[0]}: no bus bandwidth in {line.strip()[:120]!r}")
            continue
        time_text = row.get("time:avg(us)") or row.get("time(us)") or ""
        result.rows.append(NccomRow(size, busbw, _number(row.get("algbw(GB/s)", "")), finite_float(time_text)))
    average = _AVERAGE.search(text)
    result.average_busbw_gbs = _number(average.group(1)) if average else None
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
        document: Any = json_data.loads(text)
    except (ValueError, RecursionError) as error:
        return NccomResult(failures=[f"the JSON report is not JSON: {error}"])
    rows = document.get("results") if isinstance(document, dict) else None
    if not isinstance(rows, list):
        return NccomResult(failures=["the JSON report has no results"])
    result = NccomResult()
    for entry in rows:
        if not isinstance(entry, dict):
            continue
        size, busbw = json_count(entry.get("size(B)"), maximum=1 << 63), _json_number(entry.get("busbw(GB/s)"))
        if size is not None and busbw is not None:
            time_us = _json_number(entry.get("time:avg(us)", entry.get("time(us)")), maximum=None)
            result.rows.append(NccomRow(size, busbw, _json_number(entry.get("algbw(GB/s)")), time_us))
    if result.rows:
        result.average_busbw_gbs = sum(row.busbw_gbs for row in result.rows) / len(result.rows)
    else:
        result.failures.append("the JSON report has no result rows")
    return result
