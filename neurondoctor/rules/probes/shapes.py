"""Judges a `probe shapes` run (pure): input shapes that each compile their own graph are `dynamic-shape`.

On the Neuron XLA path every new input shape traces and compiles a new graph, and until it is compiled the step
waits: throughput drops each time a batch arrives with a length not seen before. The ways out are fixed shapes,
padding to a few bucket lengths (the bucket edges are suggested from the lengths seen: the next power of two of
each), and one traced model per bucket for inference (about-neuron/appnotes/torch-neuron/bucketing-app-note.rst:
"the shape of every input must be fixed at compile time … padding or bucketing"; torch-neuronx Autobucketing,
frameworks/torch/torch-neuronx/programming-guide/inference/autobucketing-dev-guide.rst).
"""

from __future__ import annotations

from typing import Any

from neurondoctor.rules.check import Check, FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_WARNING, Finding
from neurondoctor.strict_numbers import json_count

_AXES = {0: "batch", 1: "sequence length"}


def bucket_edges(sizes: list[int]) -> list[int]:
    """The next power of two of each size seen (8 -> 8, 13 -> 16, 100 -> 128), sorted and distinct."""
    return sorted({1 << max(size - 1, 0).bit_length() for size in sizes if size > 0})


def varying_axes(shapes: list[dict[str, list[int]]]) -> dict[str, list[int]]:
    """{axis name: the sizes seen} for the dimensions that differ between the runs' inputs."""
    seen: dict[str, set[int]] = {}
    names = set.intersection(*(set(shape) for shape in shapes)) if shapes else set()
    for name in sorted(names):
        dims = {len(shape[name]) for shape in shapes}
        if len(dims) != 1:
            continue
        for axis in range(dims.pop()):
            sizes = {shape[name][axis] for shape in shapes}
            if len(sizes) > 1:
                seen.setdefault(_AXES.get(axis, f"dimension {axis}"), set()).update(sizes)
    return {axis: sorted(sizes) for axis, sizes in seen.items()}


def judge_shapes(document: dict[str, Any], model: str) -> list[Finding]:
    """ND-SHAPE-001 when the runs compiled more than one graph between them."""
    runs = [run for run in document.get("shapes", []) if isinstance(run, dict)]
    graphs = sum(json_count(run.get("graphs")) or 0 for run in runs)
    if graphs <= 1:
        return []
    axes = varying_axes([run.get("shapes", {}) for run in runs])
    plan = {axis: bucket_edges(sizes) for axis, sizes in axes.items()}
    seen = "; ".join(f"{axis} {', '.join(map(str, sizes))}" for axis, sizes in axes.items()) or "see the shapes"
    buckets = "; ".join(f"{axis} {', '.join(map(str, edges))}" for axis, edges in plan.items())
    return [Finding(
        id="ND-SHAPE-001", category="dynamic-shape", severity=SEVERITY_WARNING,
        title=f"{len(runs)} input shapes compiled {graphs} graphs ({seen}): every new shape recompiles the step",
        detail=("Each new shape waits for a compilation, and the compile cache grows by one graph per shape. Keep "
                "shapes fixed: pad to a few bucket lengths" + (f" ({buckets})" if buckets else "")
                + " with torch.nn.functional.pad (and the attention mask with zeros); for inference trace one "
                  "model per bucket with torch_neuronx.trace (torch-neuronx Autobucketing packs them into one "
                  "model that picks the bucket by length)."),
        evidence={"model": model, "graphs": graphs, "varying": axes, "bucket_plan": plan,
                  "shapes": [run.get("shapes") for run in runs]},
        )]


def _summary(ctx: RuleContext) -> str:
    return "one graph for every shape tried"


RULE_SET = RuleSet(rules=(), findings=(
    FindingSpec("ND-SHAPE-001", "dynamic-shape", SEVERITY_WARNING,
                "input shapes that each compile their own graph (pad to buckets)"),))
CHECK = Check("probe-shapes", "Shapes", (RULE_SET,), _summary)
