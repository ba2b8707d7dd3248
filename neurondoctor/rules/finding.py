"""A finding: one problem, why it matters, the evidence, and the exact commands that fix it."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Optional

from neurondoctor.rules.fix import Fix

SEVERITY_ERROR = "error"
SEVERITY_WARNING = "warning"
SEVERITY_INFO = "info"
SEVERITIES = (SEVERITY_ERROR, SEVERITY_WARNING, SEVERITY_INFO)

# The closed list of docs/contracts.md §6; a finding with another category is a bug.
CATEGORIES = frozenset({
    "driver-missing", "driver-not-loaded", "dkms-build", "driver-stale", "driver-runtime-mismatch",
    "runtime-compiler-mismatch", "framework-pin-mismatch", "stock-torch-conflict", "mixed-sdk-release",
    "unknown-version", "wrong-pip-index", "python-unsupported", "os-unsupported", "instance-unsupported",
    "shadowing", "broken-venv", "tools-missing", "device-missing", "device-permission", "cores-busy",
    "env-var-misconfig", "resource", "compile-cache", "hardware-error", "unsupported-op", "cpu-fallback",
    "compile-failure", "framework-missing", "dynamic-shape", "host-sync", "end-of-support",
    "known-bug",
})

FINDING_PAGES = "docs/findings"
_FINDING_ID = re.compile(r"ND-[A-Z0-9]+-[0-9]{3}")


def finding_page(finding_id: str) -> str:
    """The finding's own page in the product's documentation (`docs/` of the source tree and of the sdist); the
    same page is what `neurondoctor explain ID` prints, so a host without the docs still reads it."""
    return f"{FINDING_PAGES}/{finding_id}.md"


def with_page(finding_id: str, sources: Iterable[str]) -> list[str]:
    """A finding's `docs`: the link to its own page, then its sources (docs/contracts.md §6). An id that is not
    one the doctor names (another node's report holds anything) gets no page of ours."""
    page = finding_page(finding_id) if _FINDING_ID.fullmatch(finding_id) else None
    return [*([page] if page else []), *(link for link in sources if link != page)]


@dataclass
class Finding:
    """Serialised as-is into the JSON report (`findings[]`)."""

    id: str
    category: str
    severity: str
    title: str
    detail: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
    fix: Fix = field(default_factory=Fix)
    docs: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.category not in CATEGORIES:
            raise ValueError(f"{self.id}: unknown category {self.category!r}")
        if self.severity not in SEVERITIES:
            raise ValueError(f"{self.id}: unknown severity {self.severity!r}")
        if not isinstance(self.fix, Fix):
            raise TypeError(f"{self.id}: a fix is a Fix value, not {type(self.fix).__name__}")
        self.docs = with_page(self.id, self.docs)

    @property
    def page(self) -> Optional[str]:
        """The finding's own page (the first of `docs`), None for an id that has none of ours."""
        page = finding_page(self.id)
        return page if self.docs[:1] == [page] else None

    @property
    def fix_lines(self) -> list[str]:
        """The fix as the JSON report and a user's shell see it."""
        return self.fix.lines()
