"""`explain` on this host: after the text is explained, the part of `check` whose findings answer its category runs
(explain_readers/check_areas.py), so the answer is this host's cause and fix, not only the text's.

It is `check --select AREA…` (actions/check/check_run.py), read-only like `check`: nothing is written. The
environment a traceback names (`/opt/venv` of its site-packages frames) is the one judged, when it is a directory
under the root and no --venv was given.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

from neurondoctor.rules.explain_readers.check_areas import KNOWN_BUG_AREA, areas_for, known_bugs_answer

_ANSWERING = ("error", "warning")
CACHE_CATEGORY = "compile-cache"
KNOWN_BUG = "known-bug"


@dataclass
class HostAnswer:
    root: str
    areas: list[str]
    environments: list[str]
    checks: list[dict[str, str]] = field(default_factory=list)  # each area: id, title, status, its one-line summary
    findings: list[dict[str, Any]] = field(default_factory=list)
    # A compile-cache wait or skip: the entry it names, as this host's caches hold it (actions/explain/cache_entry.py)
    cache_entries: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"root": self.root, "areas": list(self.areas), "environments": list(self.environments),
                "checks": list(self.checks), "findings": list(self.findings),
                "cache_entries": list(self.cache_entries)}


def _traceback_environment(root: str, environment: Optional[str]) -> list[str]:
    """The traceback's environment as a --venv path, when it is a directory under the root (read through RootFS, so
    a link in the tree cannot lead out of it)."""
    from neurondoctor.host.rootfs import RootFS

    if not environment or not environment.startswith("/"):
        return []
    fs = RootFS(root)
    if not fs.is_dir(environment) or (not fs.exists(environment + "/pyvenv.cfg") and not fs.exists(
            environment + "/bin/python")):
        return []
    return [environment if root == "/" else os.path.join(root, environment.lstrip("/"))]


def answer_on_host(category: str, facts: Mapping[str, str], root: str, venvs: Sequence[str],
                   environ: Mapping[str, str], text: str = "") -> Optional[HostAnswer]:
    """This host's findings in the areas that answer `category`; None when no area does. For a compile-cache text,
    also the entries its waits and skips name, as found here."""
    from neurondoctor.actions.check.check_run import CheckOptions, run_check
    from neurondoctor.release_data.catalog import load_catalog

    areas = list(areas_for(category))
    if not areas:
        return None
    selected = areas + ([KNOWN_BUG_AREA] if known_bugs_answer(category) and KNOWN_BUG_AREA not in areas else [])
    named = list(venvs) or _traceback_environment(root, facts.get("environment"))
    report = run_check(CheckOptions(root=root, venvs=named, select=selected, environ=environ), catalog=load_catalog())
    answer = HostAnswer(root=root, areas=areas, environments=[summary.path for summary in report.environments])
    for check in report.checks:
        answer.checks.append({"id": check.id, "title": check.title, "status": check.status,
                              "summary": check.error or check.summary})
        for finding in check.findings:
            # A known bug of an installed package is news, an info in `check`; beside a failure that is its symptom
            # (a hang on a runtime whose release notes fix one) it is the answer.
            if finding.severity in _ANSWERING or (finding.category == KNOWN_BUG and known_bugs_answer(category)):
                answer.findings.append({"id": finding.id, "category": finding.category,
                                        "severity": finding.severity, "title": finding.title,
                                        "fix": finding.fix_lines})
    answer.findings.sort(key=lambda finding: (finding["category"] != category, finding["severity"] != "error"))
    if category == CACHE_CATEGORY and text:
        from neurondoctor.actions.explain.cache_entry import answer_cache_entries

        answer.cache_entries = [found.to_json() for found in answer_cache_entries(text, root, environ)]
    return answer
