"""Write docs/findings.md, the finding catalogue, from the declarations every rule module makes (FindingSpec) and
from how each fix is proven (tests/fixes/fix_kinds.py). tests/test_docs.py fails when the file is stale.

Usage: python scripts/gen_findings_doc.py [--check]   (--check: exit 1 if docs/findings.md differs)
"""

from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neurondoctor.rules.registry import CHECKS, fleet_checks, probe_checks  # noqa: E402
from tests.fixes.fix_kinds import ADVICE_ONLY, EXECUTED, HOST_SIMULATED  # noqa: E402

TARGET = REPO / "docs" / "findings.md"
PROBE_COMMANDS = {"probe-ops": "ops", "probe-canary": "canary", "probe-perf": "canary --perf", "probe-shapes": "shapes"}
HEAD = """# Finding catalogue

Every finding id `neurondoctor check` and the probes can print, generated from the rules' own declarations by
`python scripts/gen_findings_doc.py` (`neurondoctor check --list` prints the same list; `neurondoctor explain ID`
one entry). Severities list every one an id can be printed at, its usual one first (the severity rule:
[contracts.md](contracts.md) §6). The last column says how the fix the doctor prints for it is proven:

- **executed**: a test builds the broken environment for real (real venvs, a package index on 127.0.0.1), pastes
  the printed lines into a shell, checks again and finds nothing left;
- **simulated**: the printed host commands (apt, dnf, modprobe, dkms, tee, kill) run verbatim against a fixture
  host tree through a recording simulator that applies them as the real tools would, then the check runs again;
- **advice**: no command can be run for it (what it says is done outside the host), with the reason.
"""


def _proof(finding_id: str) -> str:
    kinds = []
    if finding_id in EXECUTED:
        kinds.append(f"executed (`{EXECUTED[finding_id].split('::')[-1]}`)")
    if finding_id in HOST_SIMULATED:
        kinds.append(f"simulated (`{HOST_SIMULATED[finding_id]}`)")
    if finding_id in ADVICE_ONLY:
        kinds.append(f"advice: {ADVICE_ONLY[finding_id]}")
    return "; ".join(kinds) or "—"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render() -> str:
    lines = [HEAD]
    for check in (*CHECKS, *probe_checks(), *fleet_checks()):
        run_by = ("`neurondoctor check`" if check in CHECKS else "`neurondoctor fleet check --slurm`"
                  if check in fleet_checks() else f"`neurondoctor probe {PROBE_COMMANDS.get(check.id, check.id)}`")
        lines += ["", f"## {check.title} (`{check.id}`, run by {run_by})", "",
                  "| id | category | severities | what it means | fix |", "| --- | --- | --- | --- | --- |"]
        lines += [f"| {spec.id} | {spec.category} | {' or '.join(spec.severities)} | {_cell(spec.title)} | "
                  f"{_cell(_proof(spec.id))} |" for spec in check.findings]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if argv[1:] == ["--check"]:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != text:
            print(f"{TARGET} is stale: run python scripts/gen_findings_doc.py", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text, encoding="utf-8")
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
