"""Scores `neurondoctor explain` against the recorded corpus of real error texts (tests/recorded/explain-corpus).

For each text it runs `python -m neurondoctor explain --json --no-host FILE` (falling back to the command without
`--no-host` when the CLI does not know that option), reads the category it recognised, and compares it with the
category the corpus expects. It prints, per split (build, held-out), how many texts were recognised with the right
category, with a wrong one, or not at all, then every miss with its id. The held-out third is for the final measure:
score it once the readers are built, not while building them.

    python scripts/score_explain_corpus.py [--split build|held-out|all] [--corpus DIR] [--json]

Exit status: 0 whatever the score (this is a measurement, not a test); 2 when the corpus index cannot be read.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "recorded" / "explain-corpus"
SPLITS = ("build", "held-out")
TIMEOUT_SECONDS = 120  # one explain of a log of a few KiB; far above what it takes, so only a hang trips it


def _explain(path: Path, no_host: bool) -> subprocess.CompletedProcess[str]:
    options = ["--json", "--no-host"] if no_host else ["--json"]
    command = [sys.executable, "-m", "neurondoctor", "explain", *options, str(path)]
    return subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False)


def _rejects_no_host(done: subprocess.CompletedProcess[str]) -> bool:
    """An older CLI stops on the unknown option with a usage error (exit 2) naming it."""
    return done.returncode == 2 and "--no-host" in done.stderr


def _category_of(stdout: str) -> tuple[Optional[str], Optional[str]]:
    """(recognised cause or None, a problem with the output or None), whatever shape explain's JSON has:
    a document with `category`, one nested under `explanation`/`result`, or a list of such documents (first one)."""
    try:
        document: Any = json.loads(stdout)
    except ValueError:
        return None, "output is not JSON"
    if isinstance(document, list):
        document = document[0] if document else {}
    if not isinstance(document, dict):
        return None, "output is not a JSON object"
    for key in ("explanation", "result"):
        if isinstance(document.get(key), dict) and "category" in document[key]:
            document = document[key]
    category = document.get("cause") or document.get("category")
    if category is None or document.get("recognised") is False:
        return None, None
    return (category, None) if isinstance(category, str) else (None, "category is not a string")


class Scorer:
    def __init__(self) -> None:
        self.no_host = True  # until the CLI says it does not know the option

    def category(self, path: Path) -> tuple[Optional[str], Optional[str]]:
        done = _explain(path, self.no_host)
        if self.no_host and _rejects_no_host(done):
            self.no_host = False
            done = _explain(path, self.no_host)
        if done.returncode not in (0, 3):  # 0 recognised, 3 not recognised; anything else is a failure of explain
            return None, f"explain exited {done.returncode}: {done.stderr.strip()[-200:]}"
        return _category_of(done.stdout)


def score(corpus: Path, wanted: str) -> dict[str, Any]:
    index = json.loads((corpus / "corpus.json").read_text(encoding="utf-8"))
    scorer = Scorer()
    results: dict[str, Any] = {split: {"right": 0, "wrong": 0, "not_recognised": 0, "misses": []} for split in SPLITS}
    for entry in index["entries"]:
        if wanted != "all" and entry["split"] != wanted:
            continue
        got, problem = scorer.category(corpus / entry["file"])
        tally = results[entry["split"]]
        if got == entry["category"]:
            tally["right"] += 1
            continue
        tally["wrong" if got else "not_recognised"] += 1
        tally["misses"].append({"id": entry["id"], "file": entry["file"], "kind": entry["kind"],
                                "expected": entry["category"], "got": got, "problem": problem})
    results["used_no_host"] = scorer.no_host
    return results


def _report(results: dict[str, Any], wanted: str) -> str:
    lines = []
    for split in SPLITS:
        if wanted not in ("all", split):
            continue
        tally = results[split]
        total = tally["right"] + tally["wrong"] + tally["not_recognised"]
        lines.append(f"{split}: {total} texts: right {tally['right']}, wrong {tally['wrong']}, "
                     f"not recognised {tally['not_recognised']}")
        for miss in tally["misses"]:
            got = miss["got"] or "not recognised"
            note = f" ({miss['problem']})" if miss["problem"] else ""
            lines.append(f"  miss {miss['id']} [{miss['kind']}] expected {miss['expected']}, got {got}{note}")
    lines.append("ran explain " + ("with --no-host" if results["used_no_host"] else "without --no-host (not accepted)"))
    return "\n".join(lines) + "\n"


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("build", "held-out", "all"), default="all")
    parser.add_argument("--corpus", type=Path, default=CORPUS, help="the corpus directory (holds corpus.json)")
    parser.add_argument("--json", action="store_true", help="print the result as one JSON document")
    arguments = parser.parse_args(argv)
    try:
        results = score(arguments.corpus, arguments.split)
    except (OSError, ValueError, KeyError) as error:
        print(f"score_explain_corpus: cannot read the corpus index: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(json.dumps(results, indent=1) + "\n" if arguments.json else _report(results, arguments.split))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
