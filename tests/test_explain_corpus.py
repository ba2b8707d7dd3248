"""The corpus of real error texts for `neurondoctor explain` (tests/recorded/explain-corpus) is well formed.

The corpus measures the readers of `explain`: every text is verbatim from a public tracker thread or an AWS page whose
cause was confirmed there, and a third of it is held out from building the readers. These tests keep the index honest
(every file present and used once, every entry with its source and confirmed cause, the split one third held out per
the README). Scoring explain against the corpus is scripts/score_explain_corpus.py; the held-out third's score is
kept by tests/test_explain_corpus_score.py.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

CORPUS = Path(__file__).parent / "recorded" / "explain-corpus"
CONTRACTS = Path(__file__).resolve().parent.parent / "docs" / "contracts.md"
INDEX = json.loads((CORPUS / "corpus.json").read_text(encoding="utf-8"))
ENTRIES = INDEX["entries"]


def _contract_categories() -> set[str]:
    """The closed list of categories: the first column of the categories table in docs/contracts.md, plus the ones
    the contract adds in its prose (`end-of-support`)."""
    text = CONTRACTS.read_text(encoding="utf-8")
    table = set(re.findall(r"^\| `([a-z-]+)` \|", text, flags=re.MULTILINE))
    added = set(re.findall(r"\*\*`([a-z-]+)` \(§\d+\) is a category added", text))
    return table | added


def test_the_corpus_is_large_enough_and_spread_over_the_kinds() -> None:
    counts = Counter(entry["kind"] for entry in ENTRIES)
    assert len(ENTRIES) >= 155  # the corpus only grows (README "Later batches")
    assert set(counts) == set(INDEX["kinds"])
    assert min(counts.values()) >= 3, counts


def test_ids_are_unique_and_numbered_in_order_and_every_file_is_used_once() -> None:
    ids = [entry["id"] for entry in ENTRIES]
    assert ids == [f"{number:03d}" for number in range(1, len(ENTRIES) + 1)]
    files = [entry["file"] for entry in ENTRIES]
    assert len(set(files)) == len(files)
    assert sorted(path.name for path in CORPUS.glob("*.txt")) == sorted(files)
    for entry in ENTRIES:
        assert re.fullmatch(rf"{entry['id']}-[a-z0-9]+(-[a-z0-9]+)*\.txt", entry["file"]), entry["file"]


@pytest.mark.parametrize("entry", ENTRIES, ids=[entry["file"] for entry in ENTRIES])
def test_an_entry_has_its_text_source_confirmed_cause_and_facts(entry: dict) -> None:
    text = (CORPUS / entry["file"]).read_text(encoding="utf-8")
    assert text.strip(), entry["file"]
    assert entry["kind"] in INDEX["kinds"]
    assert entry["source"].startswith("https://"), entry["source"]
    assert entry["confirmed_by"].strip() and entry["cause"].strip()
    assert entry["split"] in ("build", "held-out")
    assert entry["facts"] and all(fact in text for fact in entry["facts"]), entry["facts"]


def test_every_category_is_the_contracts_or_a_listed_proposal() -> None:
    contract = _contract_categories()
    assert {"cores-busy", "dkms-build", "end-of-support"} <= contract  # the parse found the table
    proposed = set(INDEX["proposed_categories"])
    assert not proposed & contract
    readme = (CORPUS / "README.md").read_text(encoding="utf-8")
    for entry in ENTRIES:
        assert entry["category"] in contract | proposed, entry
        assert entry["category_proposed"] == (entry["category"] not in contract), entry
    for category in proposed:
        assert f"`{category}`" in readme, f"{category} is proposed but the README does not describe it"


def test_one_third_is_held_out_overall_and_in_every_kind() -> None:
    held = [entry for entry in ENTRIES if entry["split"] == "held-out"]
    assert abs(len(held) - len(ENTRIES) / 3) <= 2
    for kind in INDEX["kinds"]:
        of_kind = [entry for entry in ENTRIES if entry["kind"] == kind]
        held_of_kind = [entry for entry in of_kind if entry["split"] == "held-out"]
        assert abs(len(held_of_kind) - len(of_kind) / 3) <= 1, kind  # each batch's own rounding, at most one


def test_no_text_is_recorded_twice() -> None:
    texts = [(CORPUS / entry["file"]).read_text(encoding="utf-8").strip() for entry in ENTRIES]
    assert len(set(texts)) == len(texts)
