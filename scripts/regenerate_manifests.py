"""Regenerate `manifests/sdk.json` and `manifests/releases/*.json` from AWS's n2-manifest.json.

Usage: python scripts/regenerate_manifests.py PATH/TO/n2-manifest.json (AWS publishes it in the Neuron docs
repository as src/helperscripts/n2-manifest.json). Releases the manifest does not list yet are
merged from `manifests/hand-kept/X.Y.Z.json` (release_data/hand_kept.py); a newer official copy that lists one
wins, and the script says the hand-kept file can go. `manifests/compat.json` is kept by hand and is not touched.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neurondoctor.release_data.hand_kept import HAND_KEPT_DIR, load_hand_kept, merge_hand_kept  # noqa: E402
from neurondoctor.release_data.n2_conversion import convert_n2_manifest, render_document  # noqa: E402
from neurondoctor.release_data.schema import SchemaError  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python scripts/regenerate_manifests.py PATH/TO/n2-manifest.json", file=sys.stderr)
        return 2
    source = Path(argv[1])
    target = REPO / "manifests"
    try:
        merged, superseded = merge_hand_kept(json.loads(source.read_text(encoding="utf-8")),
                                             load_hand_kept(target / HAND_KEPT_DIR))
        documents = convert_n2_manifest(merged)
    except (OSError, ValueError, SchemaError) as error:
        print(f"error: {source}: {error}", file=sys.stderr)
        return 2
    for release in superseded:
        print(f"note: {source} lists {release}: manifests/{HAND_KEPT_DIR}/{release}.json is no longer used and can "
              "be deleted")
    releases_dir = target / "releases"
    releases_dir.mkdir(parents=True, exist_ok=True)
    for stale in releases_dir.glob("*.json"):
        stale.unlink()
    for relative, document in documents.items():
        path = target / relative
        path.write_text(render_document(document), encoding="utf-8")
    print(f"wrote {len(documents) - 1} releases and sdk.json to {target} from {source}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
