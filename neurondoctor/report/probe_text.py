"""The terminal texts of the probes: the op inventory (or measured fallbacks) and the canary.

A probe's document comes from the target environment (op names, source lines, the model's name, an error message):
each such value is one field of its line (`field_text`), so none can end the line or start another.
"""

from __future__ import annotations

from neurondoctor.output_text import field_text
from neurondoctor.report.probe_report import ProbeReport
from neurondoctor.rules.finding import Finding

_MARKS = {"error": "✗", "warning": "!", "info": "•"}


def _detail(finding: Finding) -> list[str]:
    """A finding's detail under its title, every line indented (a sync can carry a library's way out and the
    general rewrite)."""
    return [f"    {field_text(line)}" for line in finding.detail.splitlines()]


def _finding_lines(finding: Finding) -> list[str]:
    return [f"{_MARKS[finding.severity]} {finding.id} {field_text(finding.title)}", *_detail(finding)]


def render_inventory_text(report: ProbeReport) -> str:
    probe = report.details
    ops = probe.get("ops", [])
    lines = [f"neurondoctor {report.tool_version} · probe ops {field_text(probe.get('model'))} · torch "
             f"{field_text(probe.get('torch'))} ({field_text(report.python)})", ""]
    for finding in report.findings:
        lines += _finding_lines(finding)
    counted = {status: sum(1 for op in ops if op["status"] == status) for status in
               ("supported", "cpu-fallback", "unsupported", "sync", "unknown")}
    if probe.get("mode") == "xla":
        lines += ["", f"{len(ops)} op(s) fell back to the CPU on the XLA device "
                  f"(PJRT_DEVICE={field_text(probe.get('pjrt_device'))}, torch-xla "
                  f"{field_text(probe.get('torch_xla'))})"]
    else:
        lines += ["", f"{len(ops)} distinct aten ops in forward + backward + optimizer step: "
                  + ", ".join(f"{count} {status}" for status, count in counted.items() if count)]
    unknown = probe.get("unknown", [])
    if unknown and probe.get("mode") != "xla":
        lines.append("no data (unknown, not assumed fine): " + ", ".join(map(field_text, unknown)))
    comparison = probe.get("comparison") or {}
    if comparison.get("available"):
        lines.append("against the CPU inventory's prediction: predicted but not observed: "
                     + (", ".join(map(field_text, comparison["predicted_not_observed"])) or "none")
                     + "; observed but not predicted: "
                     + (", ".join(map(field_text, comparison["observed_not_predicted"])) or "none"))
    return "\n".join(lines) + "\n"


def render_canary_text(report: ProbeReport) -> str:
    probe = report.details
    lines = [f"neurondoctor {report.tool_version} · probe canary · {field_text(report.python)}", ""]
    latency = probe.get("latency_ms")
    timed = (f"latency p50 {latency['p50']} ms, p99 {latency['p99']} ms over {latency['runs']} runs; max abs diff "
             f"vs CPU {probe.get('max_abs_diff'):.3g}") if isinstance(latency, dict) else ""
    if probe.get("status") == "ok" and probe.get("path") == "native":
        lines.append(f"[✓] canary ran on the neuron device (TorchNeuron {field_text(probe.get('torch_neuronx'))}): "
                     f"eager, then torch.compile(backend='neuron') in {field_text(probe.get('compile_s'))} s")
        if timed:
            lines.append(f"    eager {timed} eager, {probe.get('compiled_max_abs_diff'):.3g} compiled (tolerance "
                         f"{field_text(probe.get('tolerance'))})")
    elif probe.get("status") == "ok":
        what = "compiled (--cpu-backend, no device run)" if probe.get("cpu_backend") else "compiled and ran"
        lines.append(f"[✓] canary {what}: torch-neuronx {field_text(probe.get('torch_neuronx'))}, compile "
                     f"{field_text(probe.get('compile_s'))} s")
        if timed:
            lines.append(f"    {timed} (tolerance {field_text(probe.get('tolerance'))}); save/load round trip "
                         f"{'ok' if probe.get('roundtrip_matches') else 'CHANGED the output'}")
    for finding in report.findings:
        lines.append(f"[✗] {finding.id} ({finding.category}) {field_text(finding.title)}")
        lines += _detail(finding)
        lines += [f"    Fix: {field_text(command)}" for command in finding.fix_lines]
    return "\n".join(lines) + "\n"


def render_perf_text(report: ProbeReport) -> str:
    """One line per NeuronCore, then the findings (the medians with their ratio, slow cores, failures)."""
    probe = report.details
    lines = [f"neurondoctor {report.tool_version} · probe canary --perf · {field_text(report.python)}", ""]
    for result in probe.get("cores") or []:
        if not isinstance(result, dict):
            continue
        if result.get("status") == "ok":
            lines.append(f"  NeuronCore {field_text(result.get('core'))}: BF16 matmul "
                         f"{field_text(result.get('matmul_tflops'))} TFLOPS, memory copy "
                         f"{field_text(result.get('copy_gbs'))} GB/s")
        else:
            lines.append(f"  NeuronCore {field_text(result.get('core'))}: failed at {field_text(result.get('stage'))}")
    lines.append("")
    for finding in report.findings:
        lines += _finding_lines(finding)
    return "\n".join(lines) + "\n"


def render_shapes_text(report: ProbeReport) -> str:
    probe = report.details
    lines = [f"neurondoctor {report.tool_version} · probe shapes {field_text(probe.get('model'))} · torch-xla "
             f"{field_text(probe.get('torch_xla'))} (PJRT_DEVICE={field_text(probe.get('pjrt_device'))}, "
             f"{field_text(report.python)})", ""]
    for run in probe.get("shapes", []):
        shown = ", ".join(f"{field_text(name)} {field_text('x'.join(map(str, shape)))}"
                          for name, shape in run.get("shapes", {}).items())
        lines.append(f"  {field_text(run.get('variant')):<9} {shown}: {field_text(run.get('graphs'))} graph(s), step "
                     f"{field_text(run.get('step_s'))} s (compiles: warm-up {field_text(run.get('warmup_compiles'))}, "
                     f"measured {field_text(run.get('measured_compiles'))})")
    lines += ["", f"{field_text(probe.get('graphs'))} graph(s) in all"]
    for finding in report.findings:
        lines += _finding_lines(finding)
    return "\n".join(lines) + "\n"
