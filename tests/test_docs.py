"""The product documents itself: docs/ is complete and current, and nothing a user reads sends them
to a file outside the repository."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

READ_BY_USERS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md")), *sorted((REPO / "manifests").rglob("*")),
                 *sorted((REPO / "neurondoctor").rglob("*.py")), *sorted((REPO / "neurondoctor").rglob("*.json")),
                 *sorted((REPO / "scripts").glob("*"))]
# A page of docs/ is named docs/X.md, or X.md in a link from another page of docs/ (`[X](X.md)`).
OUTSIDE = re.compile(r"\.\./shared|(?<![/\w(\[])(ARCHITECTURE|machine-notes|peers|node-health|STYLE|UX)\.md|"
                     r"(?<![/\w.(\[])neuron-facts\.md")


def _texts() -> list[tuple[Path, str]]:
    return [(path, path.read_text(encoding="utf-8")) for path in READ_BY_USERS
            if path.is_file() and path.suffix in (".md", ".py", ".json", ".sh", "")]


def test_the_finding_catalogue_is_current() -> None:
    done = subprocess.run([sys.executable, str(REPO / "scripts" / "gen_findings_doc.py"), "--check"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_nothing_sends_a_user_outside_the_repository() -> None:
    found = [f"{path.relative_to(REPO)}: {match.group(0)}" for path, text in _texts()
             for match in OUTSIDE.finditer(text)]
    assert found == []


def test_every_cited_page_and_section_exists() -> None:
    sections = {name: set(re.findall(r"^#{2,3} (\d+(?:\.\d+)?)[. ]", (REPO / "docs" / name).read_text(),
                                     re.MULTILINE))
                for name in ("contracts.md", "neuron-facts.md")}
    missing = []
    for path, text in _texts():
        for page in set(re.findall(r"docs/([\w-]+\.md)", text)):
            if not (REPO / "docs" / page).is_file():
                missing.append(f"{path.relative_to(REPO)}: docs/{page}")
        for page, number in re.findall(r"docs/(contracts\.md|neuron-facts\.md) §(\d+(?:\.\d+)?)", text):
            if number not in sections[page]:
                missing.append(f"{path.relative_to(REPO)}: docs/{page} §{number}")
    assert missing == []


def test_every_report_field_is_documented() -> None:
    schema = json.loads((REPO / "neurondoctor" / "report" / "report.schema.json").read_text())
    documented = (REPO / "docs" / "report.md").read_text()
    names: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            names.update(node.get("properties", {}))
            for child in [*node.get("properties", {}).values(), node.get("items"), node.get("additionalProperties")]:
                walk(child)

    walk(schema)
    assert sorted(name for name in names if f"`{name}`" not in documented) == []
