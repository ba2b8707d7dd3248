"""A finding's page as Markdown: the declaration, the hand-written text (or a plain note that there is none yet),
the fix, how the fix is proven, and the sources."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Optional

from neurondoctor.rules.check import Check, FindingSpec

HERE = Path(__file__).resolve().parent
TEXTS = HERE / "texts"
PROOFS = HERE / "proofs.json"
PROBE_COMMANDS = {"probe-ops": "ops", "probe-canary": "canary", "probe-perf": "canary --perf", "probe-shapes": "shapes"}
PROOF_KINDS = {
    "executed": "a test builds the broken environment for real (real venvs, a package index on 127.0.0.1), pastes "
                "the printed lines into a shell, checks again and finds nothing left",
    "simulated": "the printed host commands run verbatim against a fixture host tree through a recording simulator "
                 "that applies them as the real tools would (tests/fixes/test_host_fixes.py), then the check runs "
                 "again",
    "advice": "no command can be run for it",
}
SOURCES_HEADING = "## Sources"


def run_by(check: Check, checks: tuple[Check, ...], fleet: tuple[Check, ...]) -> str:
    """The command whose report can hold the finding."""
    if check in checks:
        return "neurondoctor check"
    if check in fleet:
        return "neurondoctor fleet check --slurm"
    return f"neurondoctor probe {PROBE_COMMANDS.get(check.id, check.id)}"


def load_proofs() -> dict[str, dict[str, str]]:
    """How each id's fix is proven, as the last `gen_findings_doc.py` wrote it; none when the file is missing or
    damaged (a page then says the proof is not known, never a guess)."""
    try:
        data = json.loads(PROOFS.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {key: value for key, value in data.items() if isinstance(value, dict)} if isinstance(data, dict) else {}


def hand_text(finding_id: str) -> Optional[str]:
    """The page's hand-written part (what it means, why it matters, its sources), if one was written."""
    try:
        return (TEXTS / f"{finding_id}.md").read_text(encoding="utf-8").strip()
    except OSError:
        return None


def _split_sources(text: str) -> tuple[str, list[str]]:
    """The text above its `## Sources` list, and the list's entries."""
    body, _, sources = text.partition(SOURCES_HEADING)
    return body.strip(), [line[2:].strip() for line in sources.splitlines() if line.startswith("- ")]


def fix_kind(proof: Mapping[str, str]) -> str:
    """`executed`, `simulated`, `executed and simulated`, `advice`, or `not proven by a test` (the catalogue's
    fix column in one word)."""
    kinds = [kind for kind in ("executed", "simulated") if kind in proof]
    return " and ".join(kinds) or ("advice" if "advice" in proof else "not proven by a test")


PROOF_ORDER = ("executed", "simulated", "advice")
PAGE_FORMS: dict[str, Callable[[str], str]] = {
    "executed": lambda test: f"- **executed** by `{test}`: {PROOF_KINDS['executed']}.",
    "simulated": lambda case: f"- **simulated** in the case `{case}`: {PROOF_KINDS['simulated']}.",
    "advice": lambda reason: f"- **advice**: {PROOF_KINDS['advice']}: {reason}.",
}


def described(proof: Mapping[str, str], forms: Mapping[str, Callable[[str], str]]) -> list[str]:
    """Each way the fix is proven, in one order, in the words `forms` gives each kind (the page's lines, the
    catalogue's cell)."""
    return [forms[kind](proof[kind]) for kind in PROOF_ORDER if kind in proof]


def _proof_lines(proof: Mapping[str, str]) -> list[str]:
    return described(proof, PAGE_FORMS) or ["No test executes a fix for this id yet: treat what it prints as advice."]


def _severities(spec: FindingSpec) -> str:
    shown = " or ".join(spec.severities)
    return f"{shown} (usually {spec.severity}: the report says which)" if spec.also else shown


def render_page(spec: FindingSpec, check: Check, command: str, proof: Mapping[str, str],
                text: Optional[str]) -> str:
    """The page of one finding id."""
    body, text_sources = _split_sources(text) if text else ("", [])
    if not body:
        body = ("## What it means\n\n"
                f"{spec.title[:1].upper()}{spec.title[1:]}.\n\n"
                "No hand-written text yet: this page is made from the finding's declaration (its severity, category, "
                "title and how its fix is proven). The report's detail line says what was found on the host.")
    sources = [*dict.fromkeys([*text_sources, *spec.docs])]
    fix = (f"`{command} --select {spec.id}` prints the exact commands for this host: apt or dnf, this kernel, "
           "the environment's own interpreter." if command == "neurondoctor check" else
           f"`{command}` prints the fix with the finding, for the host or environment it ran on.")
    lines = [f"# {spec.id}: {spec.title}", "",
             f"- severity: {_severities(spec)}",
             f"- category: `{spec.category}`",
             f"- area: {check.title}, reported by `{command}`",
             f"- fix: {fix_kind(proof)}",
             "", body, "", "## The fix", "", fix, "", "## How the fix is proven", "", *_proof_lines(proof), "",
             SOURCES_HEADING, ""]
    lines += [f"- {source}" for source in sources] or ["None recorded with the declaration yet."]
    return "\n".join(lines) + "\n"


def page_for(finding_id: str) -> Optional[str]:
    """The page of a declared id, as docs/findings/ID.md holds it; None for an id no check declares."""
    from neurondoctor.rules.registry import CHECKS, fleet_checks, probe_checks

    fleet = fleet_checks()
    for check in (*CHECKS, *probe_checks(), *fleet):
        for spec in check.findings:
            if spec.id == finding_id:
                return render_page(spec, check, run_by(check, CHECKS, fleet), load_proofs().get(spec.id, {}),
                                   hand_text(spec.id))
    return None
