"""Every finding has its own page (docs/findings/ID.md), made from the rules' declarations so that an id added later
gets one on regeneration; the report links it under each finding, JSON and `check --list --json` carry it first in
`docs`, and `explain ID` prints it, as `rustc --explain` prints an error code's page."""

from __future__ import annotations

import json
import re
from pathlib import Path

from neurondoctor.finding_pages.page import TEXTS, hand_text, page_for, render_page
from neurondoctor.rules.check import Check, FindingSpec, RuleSet
from neurondoctor.rules.registry import all_finding_specs
from tests.conftest import REPO, empty_folder, run_cli
from tests.fixes.fix_kinds import ADVICE_ONLY, EXECUTED, HOST_SIMULATED
from tests.host_fixture import HostSpec, build_host

DECLARED = {spec.id: (check, spec) for check, spec in all_finding_specs()}


def test_every_declared_id_has_its_page_and_the_page_is_what_explain_prints() -> None:
    for finding_id, (check, spec) in DECLARED.items():
        page = (REPO / "docs" / "findings" / f"{finding_id}.md").read_text(encoding="utf-8")
        assert page == page_for(finding_id)
        assert page.startswith(f"# {finding_id}: {spec.title}\n")
        assert f"- category: `{spec.category}`" in page and check.title in page
        assert all(severity in page.split("\n- category")[0] for severity in spec.severities)
        for section in ("## What it means", "## The fix", "## How the fix is proven", "## Sources"):
            assert section in page, (finding_id, section)


def test_a_page_says_how_its_fix_is_proven_by_the_test_that_executes_it() -> None:
    for finding_id in DECLARED:
        page = page_for(finding_id) or ""
        if finding_id in EXECUTED:
            assert f"**executed** by `{EXECUTED[finding_id]}`" in page
        if finding_id in HOST_SIMULATED:
            assert f"**simulated** in the case `{HOST_SIMULATED[finding_id]}`" in page
        if finding_id in ADVICE_ONLY:
            assert f"**advice**: no command can be run for it: {ADVICE_ONLY[finding_id]}" in page


def test_hand_written_text_comes_with_its_sources_and_names_a_declared_id() -> None:
    texts = sorted(TEXTS.glob("*.md"))
    assert len(texts) >= 7
    for path in texts:
        assert path.stem in DECLARED, f"{path.name}: no rule declares {path.stem}"
        text = hand_text(path.stem) or ""
        assert "## Why it matters" in text and "## Sources" in text
        page = page_for(path.stem) or ""
        assert "No hand-written text yet" not in page and text.split("## Sources")[0].strip() in page


def test_an_id_added_without_text_still_gets_a_page_from_its_declaration() -> None:
    """Another change declares a new id: its page lists the severity, category, title and fix kind, and says plainly
    that no longer text has been written."""
    spec = FindingSpec("ND-NEW-001", "resource", "warning", "a new thing the doctor sees", also=("error",))
    check = Check("new-area", "New area", (RuleSet((), (spec,)),), lambda ctx: "")
    page = render_page(spec, check, "neurondoctor check", {}, hand_text(spec.id))
    assert page.startswith("# ND-NEW-001: a new thing the doctor sees\n")
    assert "- severity: warning or error (usually warning" in page and "- category: `resource`" in page
    assert "- fix: not proven by a test" in page and "No hand-written text yet" in page
    assert "`neurondoctor check --select ND-NEW-001` prints the exact commands" in page
    assert "None recorded with the declaration yet." in page


def test_check_list_json_links_every_id_to_its_page() -> None:
    done = run_cli(["check", "--list", "--json"])
    assert done.returncode == 0, done.stderr
    findings = [finding for check in json.loads(done.stdout)["checks"] for finding in check["findings"]]
    assert {finding["id"] for finding in findings} == set(DECLARED)
    for finding in findings:
        assert finding["docs"][0] == f"docs/findings/{finding['id']}.md"
        assert (REPO / finding["docs"][0]).is_file()
        assert finding["docs"][1:] == list(DECLARED[finding["id"]][1].docs)


def test_the_report_links_each_finding_to_its_page_in_every_format(tmp_path: Path) -> None:
    """A trn1 whose driver is built but not loaded (docs/neuron-facts.md §7: `lsmod` shows no neuron): ND-DRV-002
    with its page under it; the healthy host beside it prints no link at all."""
    broken = build_host(tmp_path / "broken", HostSpec(driver_loaded=False))
    healthy = build_host(tmp_path / "healthy", HostSpec())
    venv = ["--venv", empty_folder(tmp_path), "--select", "ND-DRV"]
    text = run_cli(["check", "--root", str(broken), *venv]).stdout
    assert "      More: neurondoctor explain ND-DRV-002 (docs/findings/ND-DRV-002.md)" in text.splitlines()
    document = json.loads(run_cli(["check", "--root", str(broken), *venv, "--json"]).stdout)
    assert [finding["docs"] for finding in document["findings"]] == [["docs/findings/ND-DRV-002.md"]]
    markdown = run_cli(["check", "--root", str(broken), *venv, "--format", "markdown"]).stdout
    assert "More: `neurondoctor explain ND-DRV-002` (docs/findings/ND-DRV-002.md)" in markdown
    assert "More:" not in run_cli(["check", "--root", str(healthy), *venv]).stdout


def test_explain_prints_the_page_and_json_carries_it() -> None:
    page = (REPO / "docs" / "findings" / "ND-DRV-002.md").read_text(encoding="utf-8")
    done = run_cli(["explain", "nd-drv-002"])
    assert done.returncode == 0 and done.stdout == page
    document = json.loads(run_cli(["explain", "ND-DRV-002", "--json"]).stdout)
    assert document["page"] == page and document["docs"] == ["docs/findings/ND-DRV-002.md"]
    assert document["means"] == DECLARED["ND-DRV-002"][1].title  # the earlier keys stay


def test_the_catalogue_links_every_id_to_its_page() -> None:
    catalogue = (REPO / "docs" / "findings.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"^\| \[(ND-[A-Z0-9]+-\d{3})\]\(findings/\1\.md\)", catalogue, re.MULTILINE))
    assert linked == set(DECLARED)
