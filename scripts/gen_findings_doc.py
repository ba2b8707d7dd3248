"""Write the finding catalogue (docs/findings.md), one page per finding id (docs/findings/ID.md) and the record of
how each fix is proven that the installed package carries (neurondoctor/finding_pages/proofs.json), from the
declarations every rule module makes (FindingSpec), from how each fix is proven (tests/fixes/fix_kinds.py) and from
the hand-written texts in neurondoctor/finding_pages/texts/. An id without a text still gets its page.
tests/test_docs.py fails when any of them is stale.

Usage: python scripts/gen_findings_doc.py [--check]   (--check: exit 1 if a file differs, is missing or is left over)
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neurondoctor.finding_pages.page import PROOFS, described, hand_text, render_page, run_by  # noqa: E402
from neurondoctor.rules.registry import CHECKS, fleet_checks, probe_checks  # noqa: E402
from tests.fixes.fix_kinds import ADVICE_ONLY, EXECUTED, HOST_SIMULATED  # noqa: E402

TARGET = REPO / "docs" / "findings.md"
PAGES = REPO / "docs" / "findings"
HEAD = """# Finding catalogue

Every finding id `neurondoctor check` and the probes can print, generated from the rules' own declarations by
`python scripts/gen_findings_doc.py` (`neurondoctor check --list` prints the same list). Each id links to its own
page (what it means, why it matters, the fix, how the fix is proven, the sources), which `neurondoctor explain ID`
prints on any host. Severities list every one an id can be printed at, its usual one first (the severity rule:
[contracts.md](contracts.md) §6). The last column says how the fix the doctor prints for it is proven:

- **executed**: a test builds the broken environment for real (real venvs, a package index on 127.0.0.1), pastes
  the printed lines into a shell, checks again and finds nothing left;
- **simulated**: the printed host commands (apt, dnf, modprobe, dkms, tee, kill) run verbatim against a fixture
  host tree through a recording simulator that applies them as the real tools would, then the check runs again;
- **advice**: no command can be run for it (what it says is done outside the host), with the reason.
"""


def proofs() -> dict[str, dict[str, str]]:
    """Each id's proofs by kind: the test that executes its fix, the simulator's case, or why it is advice."""
    found: dict[str, dict[str, str]] = {}
    for kind, table in (("executed", EXECUTED), ("simulated", HOST_SIMULATED), ("advice", ADVICE_ONLY)):
        for finding_id, how in table.items():
            found.setdefault(finding_id, {})[kind] = how
    return dict(sorted(found.items()))


CELL_FORMS: dict[str, Callable[[str], str]] = {
    "executed": lambda test: f"executed (`{test.split('::')[-1]}`)",
    "simulated": lambda case: f"simulated (`{case}`)",
    "advice": lambda reason: f"advice: {reason}",
}


def _proof(proof: dict[str, str]) -> str:
    return "; ".join(described(proof, CELL_FORMS)) or "—"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> dict[Path, str]:
    """Every file this script writes, by path."""
    known = proofs()
    fleet = fleet_checks()
    lines = [HEAD]
    files: dict[Path, str] = {}
    for check in (*CHECKS, *probe_checks(), *fleet):
        command = run_by(check, CHECKS, fleet)
        lines += ["", f"## {check.title} (`{check.id}`, run by `{command}`)", "",
                  "| id | category | severities | what it means | fix |", "| --- | --- | --- | --- | --- |"]
        for spec in check.findings:
            proof = known.get(spec.id, {})
            lines.append(f"| [{spec.id}](findings/{spec.id}.md) | {spec.category} | {' or '.join(spec.severities)} "
                         f"| {_cell(spec.title)} | {_cell(_proof(proof))} |")
            files[PAGES / f"{spec.id}.md"] = render_page(spec, check, command, proof, hand_text(spec.id))
    files[TARGET] = "\n".join(lines) + "\n"
    files[PROOFS] = json.dumps(known, indent=1, sort_keys=True) + "\n"
    return files


def _stale(files: dict[Path, str]) -> list[Path]:
    wrong = [path for path, text in files.items()
             if not path.is_file() or path.read_text(encoding="utf-8") != text]
    return wrong + sorted(path for path in PAGES.glob("*.md") if path not in files)


def main(argv: list[str]) -> int:
    files = render()
    if argv[1:] == ["--check"]:
        stale = [str(path.relative_to(REPO)) for path in _stale(files)]
        if stale:
            more = f" and {len(stale) - 5} more" if len(stale) > 5 else ""
            print(f"{', '.join(stale[:5])}{more}: stale; run python scripts/gen_findings_doc.py", file=sys.stderr)
        return 1 if stale else 0
    PAGES.mkdir(exist_ok=True)
    for path in PAGES.glob("*.md"):
        if path not in files:  # an id no rule declares any more
            path.unlink()
    for path, text in files.items():
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(REPO)}, {len(files) - 2} pages in {PAGES.relative_to(REPO)}, "
          f"{PROOFS.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
