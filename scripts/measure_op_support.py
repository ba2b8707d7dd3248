"""Extend manifests/op-support.json with ops measured not to fall back on the XLA path.

Runs the built-in models (and any MODEL_SPEC given) through both probes in one torch-xla environment: the
inventory lists the aten ops of a training step; the XLA probe (PJRT_DEVICE=CPU) lists the ops that fell back.
An op of the inventory with no fallback counter is recorded as `supported`, with the measurement as its source.
CPU-only kernels (`*_for_cpu`) and `.item()` syncs are left out: they never reach the XLA device as such.

Usage: python scripts/measure_op_support.py --python XLA_ENV/bin/python [--write] [MODEL_SPEC ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "neurondoctor" / "probe" / "scripts"
OP_SUPPORT = REPO / "manifests" / "op-support.json"
BUILTINS = ("builtin:mlp", "builtin:transformer", "builtin:convnet")


def probe(python: str, script: str, spec: str) -> dict[str, Any]:
    env = dict(os.environ, PJRT_DEVICE="CPU")
    result = subprocess.run([python, str(SCRIPTS / script), spec], capture_output=True, text=True, env=env,
                            timeout=900)
    document: dict[str, Any] = json.loads(result.stdout.strip().splitlines()[-1])
    if document.get("status") != "ok":
        raise SystemExit(f"{script} {spec}: {document.get('message')}")
    return document


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="an interpreter with torch and torch-xla")
    parser.add_argument("--write", action="store_true", help="add the measured ops to op-support.json")
    parser.add_argument("specs", nargs="*", default=list(BUILTINS))
    args = parser.parse_args()
    measured: set[str] = set()
    for spec in args.specs:
        inventory = {entry["op"] for entry in probe(args.python, "op_inventory.py", spec)["ops"]}
        xla = probe(args.python, "xla_fallbacks.py", spec)
        fell_back = {entry["op"] for entry in xla["ops"]}
        fine = {op for op in inventory - fell_back if "_for_cpu" not in op and op != "aten::_local_scalar_dense"}
        print(f"{spec}: {len(inventory)} ops, {len(fell_back)} fell back, {len(fine)} measured fine")
        measured |= fine
        version = f"torch {xla['torch']}, torch-xla {xla['torch_xla']}"
    document = json.loads(OP_SUPPORT.read_text())
    new = sorted(op for op in measured if op not in document["ops"])
    print("not yet in op-support.json: " + (", ".join(new) or "none"))
    if args.write and new:
        source = (f"measured by scripts/measure_op_support.py ({version}, PJRT_DEVICE=CPU): in the training step "
                  f"of {', '.join(args.specs)} with no aten:: fallback counter")
        for op in new:
            document["ops"][op] = {"status": "supported", "source": source}
        document["ops"] = dict(sorted(document["ops"].items()))
        OP_SUPPORT.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {len(new)} ops to {OP_SUPPORT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
