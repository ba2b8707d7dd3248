"""The runtime's status codes in a log (nrt_status.h): `nrt_execute status=1201`, `nrt_execute: status=1004, error
message=…`, `NMGR:dlr_infer Inference completed with err: 5`, or the enum name (`NRT_EXEC_HW_ERR_HBM_UE (1201)`).

Read by `explain` and the canary when no error signature matched: the runtime's own word on what failed, before any
guess from the stage that failed. Pure, and linear in the text (bounded repeats, no nested ones, none crossing a
line).
"""

from __future__ import annotations

import re
from typing import Optional

from neurondoctor.release_data.probe_data import RuntimeStatus

_STATUS_NUMBER = re.compile(r"(?:status[ \t]?[=:][ \t]?|completed with err:[ \t]?)([0-9]{1,4})(?![0-9])")
_STATUS_NAME = re.compile(r"NRT_[A-Z_]{3,40}")


def _word_start(text: str, start: int) -> bool:
    return start == 0 or not (text[start - 1].isalnum() or text[start - 1] == "_")


def _line_span(text: str, position: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return start, len(text) if end < 0 else end


def runtime_status(text: str, statuses: tuple[RuntimeStatus, ...]) -> Optional[tuple[RuntimeStatus, str]]:
    """The first runtime status the text names, by name, or by number on a line of the runtime (`nrt…`, `NRT`,
    `NMGR`), with that line; None when it names none the table explains. The whole text is searched at once (eight
    million empty lines cost one scan, not eight million), and a line is looked at once however many numbers it
    holds."""
    by_code = {status.code: status for status in statuses}
    by_name = {status.name: status for status in statuses}
    hits: list[tuple[int, RuntimeStatus]] = []
    for match in _STATUS_NAME.finditer(text):
        if _word_start(text, match.start()) and match.group(0) in by_name:
            hits.append((match.start(), by_name[match.group(0)]))
            break
    span, runtime_line = (-1, -1), False
    for number in _STATUS_NUMBER.finditer(text):
        code = int(number.group(1))
        if code not in by_code:
            continue
        if not span[0] <= number.start() <= span[1]:
            span = _line_span(text, number.start())
            line = text[span[0]:span[1]]
            runtime_line = "nrt" in line.lower() or "NMGR" in line
        if runtime_line:
            hits.append((number.start(), by_code[code]))
            break
    if not hits:
        return None
    position, status = min(hits, key=lambda hit: hit[0])
    start, end = _line_span(text, position)
    return status, text[start:end]
