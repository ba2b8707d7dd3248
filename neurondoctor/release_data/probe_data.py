"""The data the probes judge by: `op-support.json` (which aten ops fall back to CPU), `error-signatures.json`
(what a runtime or compiler message means) and `compiler-fixes.json` (the neuronx-cc that first lowers an op).
All are release data beside the manifests, so they update with them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from neurondoctor.regular_files import read_regular_file
from neurondoctor.release_data.catalog import bundled_manifest_dir

OP_SUPPORT_FILE = "op-support.json"
ERROR_SIGNATURES_FILE = "error-signatures.json"
COMPILER_FIXES_FILE = "compiler-fixes.json"


@dataclass(frozen=True)
class ErrorSignature:
    pattern: str
    category: str
    why: str
    source: str
    ways_out: tuple[str, ...] = ()
    detail: Optional[str] = None  # what rules/probes/runtime_log.py reads from the text (`device-memory`, …)
    # A banner the compiler prints above many causes (`An Internal Compiler Error has occurred`, `neuronx-cc failed
    # with 1`): it explains a text only when no other signature, runtime status or compiler error code does.
    fallback: bool = False


@dataclass(frozen=True)
class RuntimeStatus:
    """One status code of the runtime's API (nrt_status.h), as a log prints it: `status=1201`, or its name."""

    code: int
    name: str
    category: str
    why: str
    source: str
    ways_out: tuple[str, ...] = ()


@dataclass(frozen=True)
class CompilerCode:
    """One documented error code of neuronx-cc (compiler/error-codes/index.rst), as a log prints it: `NCC_EOOM001`."""

    code: str
    category: str
    why: str
    source: str
    ways_out: tuple[str, ...] = ()


@dataclass(frozen=True)
class ErrorSignatures:
    signatures: tuple[ErrorSignature, ...]
    compiler_unsupported_codes: frozenset[str]
    runtime_statuses: tuple[RuntimeStatus, ...] = ()
    compiler_codes: tuple[CompilerCode, ...] = ()


def _read(directory: Optional[Path], name: str) -> Any:
    path = (directory or bundled_manifest_dir()) / name
    try:
        return json.loads(read_regular_file(path, 32 << 20).decode("utf-8", errors="replace"))
    except (ValueError, RecursionError) as error:
        raise ValueError(f"{path}: not valid JSON ({error})") from error


def load_op_support(directory: Optional[Path] = None) -> dict[str, dict[str, Any]]:
    """The op table; raises OSError/ValueError with the file named when it is unreadable or malformed."""
    document = _read(directory, OP_SUPPORT_FILE)
    ops = document.get("ops") if isinstance(document, dict) else None
    if not isinstance(ops, dict):
        raise ValueError(f"{OP_SUPPORT_FILE}: no `ops` table")
    return ops


def load_error_signatures(directory: Optional[Path] = None) -> ErrorSignatures:
    """The signatures in file order; raises OSError/ValueError naming the file when it is malformed."""
    document = _read(directory, ERROR_SIGNATURES_FILE)
    try:
        signatures = tuple(ErrorSignature(str(entry["pattern"]), str(entry["category"]), str(entry["why"]),
                                          str(entry["source"]), tuple(str(way) for way in entry.get("ways_out", [])),
                                          str(entry["detail"]) if entry.get("detail") else None,
                                          entry.get("fallback") is True)
                           for entry in document["signatures"])
        codes = frozenset(str(code) for code in document["compiler_unsupported_codes"]["codes"])
        table = document.get("runtime_status_codes") or {"codes": []}
        statuses = tuple(RuntimeStatus(int(entry["code"]), str(entry["name"]), str(entry["category"]),
                                       str(entry["why"]), str(table.get("source", "")),
                                       tuple(str(way) for way in entry.get("ways_out", [])))
                         for entry in table["codes"])
        compiler = document.get("compiler_error_codes") or {"codes": []}
        compiler_codes = tuple(CompilerCode(str(entry["code"]), str(entry["category"]), str(entry["why"]),
                                            str(compiler.get("source", "")),
                                            tuple(str(way) for way in entry.get("ways_out", [])))
                               for entry in compiler["codes"])
    except (KeyError, TypeError, ValueError) as error:
        raise ValueError(f"{ERROR_SIGNATURES_FILE}: unexpected shape ({error})") from error
    return ErrorSignatures(signatures, codes, statuses, compiler_codes)


def load_compiler_fixes(directory: Optional[Path] = None) -> list[dict[str, Any]]:
    """The compiler fixes, each with `op`, `compiler`, `release` and `source`; raises OSError/ValueError naming the
    file when it is malformed."""
    document = _read(directory, COMPILER_FIXES_FILE)
    fixes = document.get("fixes") if isinstance(document, dict) else None
    if not isinstance(fixes, list) or not all(isinstance(fix, dict) and {"op", "compiler", "release", "source"}
                                              <= set(fix) for fix in fixes):
        raise ValueError(f"{COMPILER_FIXES_FILE}: each fix needs op, compiler, release and source")
    return [dict(fix) for fix in fixes]
