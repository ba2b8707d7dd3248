"""The held-out third of the explain corpus, kept as a test: scored as `scripts/score_explain_corpus.py` scores it
(`neurondoctor explain --json --no-host FILE` per text), it must not answer fewer texts right, nor more texts wrong,
than when it was last scored after the readers were built (right 18, wrong 4 of 47: the first 42 texts and the
second batch's 5, each batch scored once, at the end of the round that added it). A wrong answer is worse than
none, so the bound on wrong answers is as firm as the one on right ones. The build split is scored by the script
alone: it is what the readers are built on."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parent.parent
HELD_OUT_RIGHT_AT_LEAST = 18
HELD_OUT_WRONG_AT_MOST = 4


def _scorer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("score_explain_corpus", REPO / "scripts/score_explain_corpus.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_the_held_out_third_scores_no_worse_than_when_it_was_set_aside() -> None:
    scorer = _scorer()
    results = scorer.score(scorer.CORPUS, "held-out")
    tally = results["held-out"]
    assert results["used_no_host"]
    assert tally["right"] + tally["wrong"] + tally["not_recognised"] == 47
    assert not [miss for miss in tally["misses"] if miss["problem"]], "explain failed on a text"
    assert tally["right"] >= HELD_OUT_RIGHT_AT_LEAST, tally["misses"]
    assert tally["wrong"] <= HELD_OUT_WRONG_AT_MOST, [miss for miss in tally["misses"] if miss["got"]]
