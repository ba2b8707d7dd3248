"""The runtime's status codes in a log (nrt_status.h): `nrt_execute status=1201`, `nrt_execute: status=1004, error
message=…`, `NMGR:dlr_infer Inference completed with err: 5`, or the enum name (`NRT_EXEC_HW_ERR_HBM_UE (1201)`).

Read by `explain` and the canary when no error signature matched: the runtime's own word on what failed, before any
guess from the stage that failed. Pure, and linear in the text (bounded repeats, no nested ones).
"""

from __future__ import annotations

import re
from typing import Optional

from neurondoctor.release_data.probe_data import RuntimeStatus

_STATUS_NUMBER = re.compile(r"(?:status\s?[=:]\s?|completed with err:\s?)(\d{1,4})(?!\d)")
_STATUS_NAME = re.compile(r"NRT_[A-Z_]{3,40}")


def _word_start(line: str, start: int) -> bool:
    return start == 0 or not (line[start - 1].isalnum() or line[start - 1] == "_")


def runtime_status(text: str, statuses: tuple[RuntimeStatus, ...]) -> Optional[tuple[RuntimeStatus, str]]:
    """The first runtime status the text names, by name or by number on a line of the runtime (`nrt…`, `NRT`,
    `NMGR`), with that line; None when it names none the table explains."""
    by_code = {status.code: status for status in statuses}
    by_name = {status.name: status for status in statuses}
    for line in text.splitlines():
        for match in _STATUS_NAME.finditer(line):
            if _word_start(line, match.start()) and match.group(0) in by_name:
                return by_name[match.group(0)], line
        if "nrt" in line.lower() or "NMGR" in line:
            for number in _STATUS_NUMBER.finditer(line):
                if int(number.group(1)) in by_code:
                    return by_code[int(number.group(1))], line
    return None
