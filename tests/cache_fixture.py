"""Neuron compile caches on disk, in the layouts of the public cache copies on the Hugging Face hub
(aws-neuron/optimum-neuron-cache, optimum-internal-testing/neuron-testing-cache; docs/neuron-facts.md §9):

- neuronx-cc 2.12 (`neuronxcc-2.12.54.0+f631c2365`): `compile_flags.txt`, `model.hlo.pb`, `model.neff`, no
  `model.done`; a failed compile keeps `model.log` beside a 5-byte NEFF; `model.hlo.pb.lock`, a 0-byte flock file;
- neuronx-cc 2.14 (`neuronxcc-2.14.227.0+2d4f85be`, optimum-internal-testing/neuron-testing-cache,
  `MODULE_0cd84407c4037ba783a7+2c2d707e`): `compile_flags.txt` (41 bytes), already `model.hlo_module.pb`,
  `model.neff`, and still no `model.done`;
- neuronx-cc 2.15 (`neuronxcc-2.15.141.0+d3cfc8ca`): `compile_flags.json` (2 or 74 bytes), `model.hlo_module.pb`,
  `model.neff`, `model.done` (0 bytes); graph hashes of 20 hex digits or of decimal digits
  (`MODULE_12221176946427745622+d7517139`);
- neuronx-cc 2.23 and later: `wrapped_neff.hlo` beside the NEFF;
- `0_REGISTRY/<optimum-neuron version>/<org>/<model>/<hash>.json`, optimum-neuron's model registry.
"""

from __future__ import annotations

import hashlib
import json
import struct
from pathlib import Path
from typing import Optional

FLAGS_JSON = json.dumps(["--model-type=transformer", "--auto-cast=none", "-O1"])  # 74 bytes in the copies
# A failed compile's log in the compiler's words: the line aws-neuron-sdk's report of a Llama 3 70B training compile
# on trn1 quotes (neuronx-cc of Neuron 2.18), then the compile wrapper's summary as its last line (its exact wording
# beside the compiler's output is ASSUMED).
XCG815_LOG = ("2024-05-10T23:47:20Z INFO 412 [job.Frontend.0]: Compiling graph\n"
              "2024-05-10T23:47:40Z [XCG815]  Estimated peak HBM usage (22.839451) exceeds 16GB. Neff won't be able "
              "to load on chip - Please open a support ticket at https://github.com/aws-neuron/aws-neuron-sdk/issues/new\n"
              "Compiler status ERROR\n"
              "ERROR ||NEURON_CC_WRAPPER||: Subcommand returned with exitcode=70\n")


def keyed(graph: str, flags: list[str], layout: str = "2.15") -> tuple[str, str]:
    """(entry name, flags file text) keyed as neuronx-cc keys them: the md5 of the flags text (the public copies:
    `[]` is `+d7517139` in 2.15, `--model-type=transformer --auto-cast=none` is `+2c2d707e` in 2.12 and 2.14)."""
    text = json.dumps(flags) if layout not in ("2.12", "2.14") else " ".join(flags)
    return f"MODULE_{graph}+{hashlib.md5(text.encode(), usedforsecurity=False).hexdigest()[:8]}", text


def neff_bytes(payload: int = 4096) -> bytes:
    """A NEFF's shape: a 1024-byte header of little-endian u64s (version 2, header size, data size), then data."""
    header = struct.pack("<QQQ", 2, 1024, payload).ljust(1024, b"\0")
    return header + b"\x1f\x8b" + b"\0" * (payload - 2)


def entry(compiler_dir: Path, name: str, state: str, layout: str = "2.15", lock: bool = False,
          log_text: str = "", flags: Optional[str] = None) -> Path:
    """One MODULE_ entry: state `done`, `failed` (a log, no usable NEFF) or `incomplete` (graph and flags only;
    `writing`: a 2.15 NEFF without its done marker)."""
    path = compiler_dir / name
    path.mkdir(parents=True)
    old = layout in ("2.12", "2.14")  # no done marker, flags as text
    (path / ("compile_flags.txt" if old else "compile_flags.json")).write_text(
        flags if flags is not None else (" ".join(json.loads(FLAGS_JSON)) if old else FLAGS_JSON))
    graph = path / ("model.hlo.pb" if layout == "2.12" else "model.hlo_module.pb")
    graph.write_bytes(b"\x0a\x10hlo-module" * 64)
    if state == "done":
        (path / "model.neff").write_bytes(neff_bytes())
        if not old:
            (path / "model.done").write_bytes(b"")
        if layout == "2.23":
            (path / "wrapped_neff.hlo").write_bytes(b"\x0a\x08wrapped" * 32)
    elif state == "failed":
        # The message is the compiler's documented one (the neuronx-cc release notes' UNet known issue); the
        # prefix of the line is ASSUMED.
        (path / "model.log").write_text(log_text or "Compiler status PASS\nStarting the scheduler\n"
                                        "ERROR: Estimated peak HBM usage exceeds 16GB.\nCompiler status ERROR\n")
        if layout == "2.12":
            (path / "model.neff").write_bytes(b"\0" * 5)
    elif state == "writing":
        (path / "model.neff").write_bytes(neff_bytes())
    if lock:
        (path / f"{graph.name}.lock").write_bytes(b"")
    return path


def registry(compiler_dir: Path, version: str = "0.4.6.dev2", model: str = "meta-llama/Llama-3.2-1B") -> Path:
    path = compiler_dir / "0_REGISTRY" / version / model / "2d3e776c01807213e8e2.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"_entry_class": "SingleModelCacheEntry", "_model_id": model,
                                "_task": "text-generation", "architectures": ["LlamaForCausalLM"]}))
    return path
