"""Extend manifests/op-support.json with what a torch-xla run measures about each op of a corpus of real models.

For every model of the corpus (the built-ins, the Hugging Face and torchvision models of tests/models/hf_models.py,
a foreach AdamW, or the MODEL_SPECs given), in one interpreter that has torch, torch-xla (PJRT_DEVICE=CPU),
transformers and torchvision:
- the inventory probe lists the aten ops of an eager training step on the CPU: the names `probe ops` reports;
- the XLA probe runs the same step on the XLA device, with the ops the device was handed (`--dispatched`) and the
  `aten::` fallback counters, per phase.
An inventory op is then
- `cpu-fallback` when its fallback counter ticked;
- `supported` when the device was handed it (as itself, or as XLA spells it: in-place ops out of place, view ops
  as `*_copy`) and no counter of that name ticked;
- `supported` with `xla_sees` when the device was never handed it (a CPU-only kernel such as
  `_scaled_dot_product_flash_attention_for_cpu`, or an op decomposed before it reaches XLA) and no fallback counter
  ticked in any phase it ran in: the computation it stands for ran on the device.
Anything else stays out of the file (unknown). `.item()` syncs, sparse and bool-mask ops have their own entries.
Each written entry names the models it was measured in, as its source.

Usage: python scripts/measure_op_support.py --python XLA_ENV/bin/python [--write] [MODEL_SPEC ...]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SCRIPTS = REPO / "neurondoctor" / "actions" / "probe" / "scripts"
OP_SUPPORT = REPO / "manifests" / "op-support.json"
MODELS = REPO / "tests" / "models"
CORPUS = (
    "builtin:mlp", "builtin:transformer", "builtin:convnet",
    *(f"{MODELS / 'hf_models.py'}:{factory}" for factory in (
        "build_bert", "build_gpt2", "build_t5", "build_llama", "build_vit", "build_resnet", "build_mobilenet")),
    f"{MODELS / 'porting_patterns.py'}:build_foreach_adamw",  # the `_foreach_*` ops of AdamW(foreach=True)
)
SYNC_OP = "aten::_local_scalar_dense"

# What XLA is handed instead of a CPU-only kernel. scaled_dot_product_attention picks the flash kernel only on CPU
# (and CUDA); on other backends, XLA among them, it takes the math path (aten/src/ATen/native/transformers/
# attention.cpp, `_fused_sdp_choice`), which the --dispatched run shows as these ops.
XLA_FORMS = {
    "aten::_scaled_dot_product_flash_attention_for_cpu":
        "scaled_dot_product_attention's math path on XLA: aten::bmm, aten::_safe_softmax, aten::mul",
    "aten::_scaled_dot_product_flash_attention_for_cpu_backward":
        "the backward of that math path: aten::bmm, aten::_softmax_backward_data",
}


def probe(python: str, script: str, spec: str, *flags: str) -> dict[str, Any]:
    env = dict(os.environ, PJRT_DEVICE="CPU")
    result = subprocess.run([python, str(SCRIPTS / script), spec, *flags], capture_output=True, text=True, env=env,
                            timeout=900, cwd=REPO)
    lines = result.stdout.strip().splitlines()
    document: dict[str, Any] = json.loads(lines[-1]) if lines else {"message": result.stderr.strip()[-300:]}
    if document.get("status") != "ok":
        raise SystemExit(f"{script} {spec}: {document.get('message')}")
    return document


def xla_spellings(op: str) -> set[str]:
    """The names an eager op goes by on the XLA device: functionalization makes in-place ops out of place and
    view ops `*_copy` (docs/measured.md)."""
    base = op[:-1] if op.endswith("_") and not op.endswith("__") else op
    return {op, base, f"{base}_copy"}


@dataclass
class Measurement:
    """What the corpus showed about one op: the models it was handed to XLA in, the models it fell back in, the
    models in which it never reached XLA and nothing fell back."""
    dispatched: list[str] = field(default_factory=list)
    fell_back: list[str] = field(default_factory=list)
    decomposed: list[str] = field(default_factory=list)

    def status(self) -> str:
        if self.fell_back:
            return "cpu-fallback"
        return "supported" if self.dispatched or self.decomposed else "unknown"


def short(spec: str) -> str:
    return spec.rpartition(":")[2].removeprefix("build_")


def measure(python: str, spec: str, results: dict[str, Measurement]) -> str:
    inventory = probe(python, "op_inventory.py", spec)
    xla = probe(python, "xla_fallbacks.py", spec, "--dispatched")
    counters = {entry["op"]: set(entry["phases"]) for entry in xla["ops"]}
    handed = {phase: set(names) for phase, names in xla.get("dispatched", {}).items()}
    quiet_phases = {phase for phase in handed if not any(phase in phases for op, phases in counters.items()
                                                         if op != SYNC_OP)}
    for entry in inventory["ops"]:
        op = entry["op"]
        if op == SYNC_OP or op.endswith(")"):  # `.item()`, `(sparse)`, `(bool mask)`: entries of their own
            continue
        names = xla_spellings(op)
        measurement = results.setdefault(op, Measurement())
        if names & set(counters):
            measurement.fell_back.append(short(spec))
        elif any(names & handed.get(phase, set()) for phase in entry["phases"]):
            measurement.dispatched.append(short(spec))
        elif set(entry["phases"]) <= quiet_phases:
            measurement.decomposed.append(short(spec))
    unknown = sum(1 for entry in inventory["ops"] if entry["op"] in results
                  and results[entry["op"]].status() == "unknown")
    print(f"{short(spec)}: {len(inventory['ops'])} distinct ops, {len(counters)} fallback counters, "
          f"{unknown} not settled")
    return f"torch {xla['torch']}, torch-xla {xla['torch_xla']}"


def entry_for(op: str, measurement: Measurement, version: str) -> dict[str, Any]:
    where = f"measured by scripts/measure_op_support.py ({version}, PJRT_DEVICE=CPU): "
    if measurement.fell_back:
        return {"status": "cpu-fallback", "what": f"`{op}`",
                "source": where + f"its aten:: fallback counter ticked in {', '.join(measurement.fell_back)}"}
    if measurement.dispatched:
        return {"status": "supported", "source": where + "handed to the XLA device with no fallback counter in the "
                f"training step of {', '.join(measurement.dispatched)}"}
    return {"status": "supported",
            "xla_sees": XLA_FORMS.get(op, "decomposed before it reaches the XLA device"),
            "source": where + "never handed to the XLA device as such, and no aten:: fallback counter ticked in "
            f"the phases it ran in, in {', '.join(measurement.decomposed)}"}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", required=True, help="an interpreter with torch, torch-xla, transformers and "
                        "torchvision")
    parser.add_argument("--write", action="store_true", help="add the measured ops to op-support.json")
    parser.add_argument("specs", nargs="*", default=list(CORPUS))
    args = parser.parse_args()
    results: dict[str, Measurement] = {}
    version = ""
    for spec in args.specs:
        version = measure(args.python, spec, results)
    document = json.loads(OP_SUPPORT.read_text())
    new = {op: entry_for(op, measurement, version) for op, measurement in sorted(results.items())
           if op not in document["ops"] and measurement.status() != "unknown"}
    unsettled = sorted(op for op, measurement in results.items()
                       if op not in document["ops"] and measurement.status() == "unknown")
    for op, entry in new.items():
        print(f"  {entry['status']:>12}  {op}" + (f"  ({entry['xla_sees']})" if "xla_sees" in entry else ""))
    print(f"{len(new)} ops not yet in op-support.json; left unknown: {', '.join(unsettled) or 'none'}")
    if args.write and new:
        document["ops"] = dict(sorted({**document["ops"], **new}.items()))
        OP_SUPPORT.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
        print(f"wrote {len(new)} ops to {OP_SUPPORT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
