"""Run by the target interpreter: run a small fixed-shape model on a NeuronCore, compare with CPU.

Usage: python canary.py [--cpu-backend] [--runs N] [--workdir DIR]
The quick-start canary (MLP 784-128-10; about-neuron/quick-start/inference-quickstart.rst), by the path the installed
torch-neuronx takes:
- PyTorch/XLA (torch-neuronx 2.9 and earlier): `torch_neuronx.trace` (api-torch-neuronx-trace.rst), one run compared
  with the CPU output, a `torch.jit.save`/`load` round trip, latency over N runs. `--cpu-backend` compiles only
  (`trace(..., cpu_backend=True)`, no device).
- TorchNeuron (torch-neuronx 2.13/2.14, the native backend: importing it names PyTorch's PrivateUse1 device
  `neuron`; release-notes/components/torchneuron.rst): the model and input moved to `device="neuron"`, run eagerly
  and compared with the CPU output, latency over N runs, then `torch.compile(backend="neuron")` run and compared.
  It has no compile-only mode: `--cpu-backend` says so and stops.
Prints one JSON line; failures name their stage (import, compile, device, run, roundtrip) and the message.
"""

import json
import os
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from op_inventory import _progress

RTOL = 1e-2  # neuronx-cc auto-casts matmuls to bf16 by default: compare with a bf16-sized tolerance
ATOL = 1e-2


def _emit(document):
    sys.stdout.write(json.dumps(document) + "\n")
    sys.stdout.flush()


def _fail(stage, error, extra=None):
    message = str(error).strip()
    document = {"schema": "neurondoctor.probe/1", "status": "error", "stage": stage,
                "error_type": type(error).__name__, "message": message[:4000],
                "traceback_tail": traceback.format_exc().strip().splitlines()[-6:]}
    document.update(extra or {})
    _emit(document)


def _percentile(values, fraction):
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(fraction * (len(ordered) - 1))))
    return ordered[index]


def _native_backend(torch):
    """TorchNeuron registers the Neuron device as PyTorch's PrivateUse1 backend named `neuron` when imported."""
    try:
        return torch._C._get_privateuse1_backend_name() == "neuron"
    except Exception:
        return False


def _latencies(function, runs):
    latencies = []
    for _ in range(runs):
        tick = time.perf_counter()
        function()
        latencies.append((time.perf_counter() - tick) * 1000)
    return {"p50": round(_percentile(latencies, 0.5), 4), "p99": round(_percentile(latencies, 0.99), 4),
            "runs": runs}


def _native(torch, torch_neuronx, model, example, expected, runs, cpu_backend):
    """The TorchNeuron path: eager on `neuron`, then torch.compile with the `neuron` backend (module docstring)."""
    result = {"schema": "neurondoctor.probe/1", "status": "ok", "mode": "canary", "path": "native",
              "device": "neuron", "torch": torch.__version__,
              "torch_neuronx": getattr(torch_neuronx, "__version__", "?"), "cpu_backend": cpu_backend,
              "tolerance": {"rtol": RTOL, "atol": ATOL}}
    if cpu_backend:
        _emit({"schema": "neurondoctor.probe/1", "status": "skipped", "stage": "compile", "path": "native",
               "message": "TorchNeuron has no compile-only mode (--cpu-backend is for the PyTorch/XLA "
                          "torch-neuronx); run the canary on a Trn2 or Trn3"})
        return
    _progress("moving the canary to the neuron device")
    started = time.perf_counter()
    try:
        device = torch.device("neuron")
        on_device = model.to(device)
        example_on_device = example.to(device)
    except BaseException as error:
        _fail("device", error, {"path": "native"})
        return
    _progress("running the canary eagerly on the neuron device")
    try:
        with torch.no_grad():
            output = on_device(example_on_device).to("cpu")
            result["first_run_s"] = round(time.perf_counter() - started, 3)
            result["max_abs_diff"] = float((output - expected).abs().max())
            result["matches_cpu"] = bool(torch.allclose(output, expected, rtol=RTOL, atol=ATOL))
            result["latency_ms"] = _latencies(lambda: on_device(example_on_device).to("cpu"), runs)
    except BaseException as error:
        _fail("run", error, {"path": "native"})
        return
    _progress("compiling the canary with torch.compile(backend='neuron')")
    started = time.perf_counter()
    try:
        compiled = torch.compile(on_device, backend="neuron")
        with torch.no_grad():
            compiled_output = compiled(example_on_device).to("cpu")
    except BaseException as error:
        _fail("compile", error, {"path": "native", "matches_cpu": result["matches_cpu"]})
        return
    result["compile_s"] = round(time.perf_counter() - started, 3)
    result["compiled_max_abs_diff"] = float((compiled_output - expected).abs().max())
    result["compiled_matches_cpu"] = bool(torch.allclose(compiled_output, expected, rtol=RTOL, atol=ATOL))
    _emit(result)


def main(argv):
    cpu_backend = "--cpu-backend" in argv
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 100
    workdir = argv[argv.index("--workdir") + 1] if "--workdir" in argv else os.getcwd()
    _progress("importing torch and torch_neuronx")
    try:
        import torch
    except Exception as error:  # no torch at all: nothing to trace with
        _emit({"schema": "neurondoctor.probe/1", "status": "skipped", "stage": "import",
               "message": "torch is not importable here: %s" % error})
        return
    try:
        import torch_neuronx
    except ModuleNotFoundError as error:
        _emit({"schema": "neurondoctor.probe/1", "status": "skipped", "stage": "import",
               "message": "torch-neuronx is not installed here (%s)" % error})
        return
    except BaseException as error:  # installed but broken: `check` explains why
        _fail("import", error)
        return
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(784, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10)).eval()
    example = torch.rand(1, 784)
    with torch.no_grad():
        expected = model(example)
    if _native_backend(torch):
        _native(torch, torch_neuronx, model, example, expected, runs, cpu_backend)
        return
    started = time.perf_counter()
    _progress("tracing the canary and compiling it with neuronx-cc")
    try:
        if cpu_backend:
            traced = torch_neuronx.trace(model, example, compiler_args="--target trn1", cpu_backend=True,
                                         compiler_workdir=os.path.join(workdir, "canary-compile"))
        else:
            traced = torch_neuronx.trace(model, example, compiler_workdir=os.path.join(workdir, "canary-compile"))
    except BaseException as error:
        _fail("compile", error)
        return
    compile_s = time.perf_counter() - started
    result = {"schema": "neurondoctor.probe/1", "status": "ok", "mode": "canary", "path": "xla",
              "torch": torch.__version__, "torch_neuronx": getattr(torch_neuronx, "__version__", "?"),
              "cpu_backend": cpu_backend, "compile_s": round(compile_s, 3),
              "traced_type": type(traced).__name__, "tolerance": {"rtol": RTOL, "atol": ATOL}}
    if cpu_backend:
        _emit(result)
        return
    try:
        with torch.no_grad():
            output = traced(example)
        difference = float((output - expected).abs().max())
        result["max_abs_diff"] = difference
        result["matches_cpu"] = bool(torch.allclose(output, expected, rtol=RTOL, atol=ATOL))
        latencies = []
        for _ in range(runs):
            tick = time.perf_counter()
            traced(example)
            latencies.append((time.perf_counter() - tick) * 1000)
        result["latency_ms"] = {"p50": round(_percentile(latencies, 0.5), 4),
                                "p99": round(_percentile(latencies, 0.99), 4), "runs": runs}
    except BaseException as error:
        _fail("run", error, {"compile_s": round(compile_s, 3)})
        return
    try:
        path = os.path.join(workdir, "canary.pt")
        torch.jit.save(traced, path)
        loaded = torch.jit.load(path)
        with torch.no_grad():
            again = loaded(example)
        result["roundtrip_matches"] = bool(torch.allclose(again, output, rtol=RTOL, atol=ATOL))
    except BaseException as error:
        _fail("roundtrip", error, {"compile_s": round(compile_s, 3)})
        return
    _emit(result)


if __name__ == "__main__":
    main(sys.argv)
