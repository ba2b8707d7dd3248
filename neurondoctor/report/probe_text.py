"""The terminal texts of the probes: the op inventory (or measured fallbacks) and the canary."""

from __future__ import annotations

from neurondoctor.report.model import ProbeReport
from neurondoctor.rules.finding import Finding

_MARKS = {"error": "✗", "warning": "!", "info": "•"}


def _detail(finding: Finding) -> list[str]:
    """A finding's detail under its title, every line indented (a sync can carry a library's way out and the
    general rewrite)."""
    return [f"    {line}" for line in finding.detail.splitlines()]


def render_inventory_text(report: ProbeReport) -> str:
    probe = report.details
    ops = probe.get("ops", [])
    lines = [f"neurondoctor {report.tool_version} · probe ops {probe.get('model')} · torch {probe.get('torch')} "
             f"({report.python})", ""]
    for finding in report.findings:
        lines.append(f"{_MARKS[finding.severity]} {finding.id} {finding.title}")
        lines += _detail(finding)
    counted = {status: sum(1 for op in ops if op["status"] == status) for status in
               ("supported", "cpu-fallback", "unsupported", "sync", "unknown")}
    if probe.get("mode") == "xla":
        lines += ["", f"{len(ops)} op(s) fell back to the CPU on the XLA device "
                  f"(PJRT_DEVICE={probe.get('pjrt_device')}, torch-xla {probe.get('torch_xla')})"]
    else:
        lines += ["", f"{len(ops)} distinct aten ops in forward + backward + optimizer step: "
                  + ", ".join(f"{count} {status}" for status, count in counted.items() if count)]
    unknown = probe.get("unknown", [])
    if unknown and probe.get("mode") != "xla":
        lines.append("no data (unknown, not assumed fine): " + ", ".join(unknown))
    comparison = probe.get("comparison") or {}
    if comparison.get("available"):
        lines.append("against the CPU inventory's prediction: predicted but not observed: "
                     + (", ".join(comparison["predicted_not_observed"]) or "none")
                     + "; observed but not predicted: " + (", ".join(comparison["observed_not_predicted"]) or "none"))
    return "\n".join(lines) + "\n"


def render_canary_text(report: ProbeReport) -> str:
    probe = report.details
    lines = [f"neurondoctor {report.tool_version} · probe canary · {report.python}", ""]
    latency = probe.get("latency_ms")
    timed = (f"latency p50 {latency['p50']} ms, p99 {latency['p99']} ms over {latency['runs']} runs; max abs diff "
             f"vs CPU {probe.get('max_abs_diff'):.3g}") if isinstance(latency, dict) else ""
    if probe.get("status") == "ok" and probe.get("path") == "native":
        lines.append(f"[✓] canary ran on the neuron device (TorchNeuron {probe.get('torch_neuronx')}): eager, then "
                     f"torch.compile(backend='neuron') in {probe.get('compile_s')} s")
        if timed:
            lines.append(f"    eager {timed} eager, {probe.get('compiled_max_abs_diff'):.3g} compiled (tolerance "
                         f"{probe.get('tolerance')})")
    elif probe.get("status") == "ok":
        what = "compiled (--cpu-backend, no device run)" if probe.get("cpu_backend") else "compiled and ran"
        lines.append(f"[✓] canary {what}: torch-neuronx {probe.get('torch_neuronx')}, compile "
                     f"{probe.get('compile_s')} s")
        if timed:
            lines.append(f"    {timed} (tolerance {probe.get('tolerance')}); save/load round trip "
                         f"{'ok' if probe.get('roundtrip_matches') else 'CHANGED the output'}")
    for finding in report.findings:
        lines.append(f"[✗] {finding.id} ({finding.category}) {finding.title}")
        lines += _detail(finding)
        lines += [f"    Fix: {command}" for command in finding.fix_lines]
    return "\n".join(lines) + "\n"


def render_perf_text(report: ProbeReport) -> str:
    """One line per NeuronCore, then the findings (the medians with their ratio, slow cores, failures)."""
    probe = report.details
    lines = [f"neurondoctor {report.tool_version} · probe canary --perf · {report.python}", ""]
    for result in probe.get("cores") or []:
        if not isinstance(result, dict):
            continue
        if result.get("status") == "ok":
            lines.append(f"  NeuronCore {result.get('core')}: BF16 matmul {result.get('matmul_tflops')} TFLOPS, "
                         f"memory copy {result.get('copy_gbs')} GB/s")
        else:
            lines.append(f"  NeuronCore {result.get('core')}: failed at {result.get('stage')}")
    lines.append("")
    for finding in report.findings:
        lines.append(f"{_MARKS[finding.severity]} {finding.id} {finding.title}")
        lines += _detail(finding)
    return "\n".join(lines) + "\n"


def render_shapes_text(report: ProbeReport) -> str:
    probe = report.details
    lines = [f"neurondoctor {report.tool_version} · probe shapes {probe.get('model')} · torch-xla "
             f"{probe.get('torch_xla')} (PJRT_DEVICE={probe.get('pjrt_device')}, {report.python})", ""]
    for run in probe.get("shapes", []):
        shown = ", ".join(f"{name} {'x'.join(map(str, shape))}" for name, shape in run.get("shapes", {}).items())
        lines.append(f"  {run.get('variant'):<9} {shown}: {run.get('graphs')} graph(s), step {run.get('step_s')} s "
                     f"(compiles: warm-up {run.get('warmup_compiles')}, measured {run.get('measured_compiles')})")
    lines += ["", f"{probe.get('graphs')} graph(s) in all"]
    for finding in report.findings:
        lines.append(f"{_MARKS[finding.severity]} {finding.id} {finding.title}")
        lines += _detail(finding)
    return "\n".join(lines) + "\n"
