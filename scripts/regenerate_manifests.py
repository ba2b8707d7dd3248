"""Regenerate `manifests/sdk.json` and `manifests/releases/*.json` from AWS's n2-manifest.json.

Usage: python scripts/regenerate_manifests.py [PATH/TO/n2-manifest.json]
(default: ../shared/reference/n2-manifest.json beside the repository). `manifests/compat.json`
is kept by hand and is not touched.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neurondoctor.release_data.n2_conversion import convert_n2_manifest, render_document  # noqa: E402
from neurondoctor.release_data.schema import SchemaError  # noqa: E402


def main(argv: list[str]) -> int:
    source = Path(argv[1]) if len(argv) > 1 else REPO.parent / "shared" / "reference" / "n2-manifest.json"
    try:
        documents = convert_n2_manifest(json.loads(source.read_text(encoding="utf-8")))
    except (OSError, ValueError, SchemaError) as error:
        print(f"error: {source}: {error}", file=sys.stderr)
        return 2
    target = REPO / "manifests"
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
