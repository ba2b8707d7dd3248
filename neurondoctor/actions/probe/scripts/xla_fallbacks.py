"""Run by the target interpreter: one training step on an XLA device, and the ops that fell back to the CPU.

Usage: python xla_fallbacks.py MODEL_SPEC [--dispatched]   (PJRT_DEVICE=CPU anywhere; the Neuron device on a trn1)
`torch_xla.debug.metrics` counters named `aten::<op>` count the ops with no XLA lowering, which ran on the
CPU (archive/nxd-training/pytorch-neuron-debug.rst; pytorch/xla TROUBLESHOOTING.md). Counters are cleared
before each phase, so each fallback is attributed to forward, backward or the optimizer step.
`aten::_local_scalar_dense` is `.item()`: reported as a sync, not a fallback. With `--dispatched` the step also
runs under the inventory's recorder, and the aten ops the XLA device was handed are listed per phase (what
scripts/measure_op_support.py compares with the eager inventory). Prints one JSON line.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import contextlib

from op_inventory import _call_form, _emit, _fail, _load_factory, _loss, _optimizer, _parts, _progress, _recorder


def _move(value, device):
    if hasattr(value, "to"):
        return value.to(device)
    if isinstance(value, (tuple, list)):
        return type(value)(_move(item, device) for item in value)
    if isinstance(value, dict):
        return {key: _move(item, device) for key, item in value.items()}
    return value


def _read_counters(met):
    return {name: met.counter_value(name) for name in met.counter_names() if name.startswith("aten::")}


def _sync(torch_xla, xm):
    """Execute the pending graph (torch_xla.sync in 2.x; mark_step before it)."""
    if hasattr(torch_xla, "sync"):
        torch_xla.sync()
    else:
        xm.mark_step()


def xla_device(torch_xla, xm):
    """The XLA device (torch_xla.device in 2.x; xla_device before it)."""
    return torch_xla.device() if hasattr(torch_xla, "device") else xm.xla_device()


def xla_start(argv, script):
    """(torch, torch_xla, xla_model, metrics) for a probe run as `SCRIPT MODEL_SPEC`; None once the usage error or
    the skip (no torch-xla here is a verdict, not a crash) has been emitted."""
    if len(argv) != 2:
        _emit({"schema": "neurondoctor.probe/1", "status": "error", "stage": "usage", "error_type": "UsageError",
               "message": "usage: %s MODEL_SPEC" % script, "where": ""})
        return None
    _progress("importing torch and torch_xla")
    try:
        import torch
        import torch_xla
        import torch_xla.core.xla_model as xm
        import torch_xla.debug.metrics as met
    except Exception as error:
        _emit({"schema": "neurondoctor.probe/1", "status": "skipped", "stage": "import",
               "error_type": type(error).__name__, "message": "torch_xla is not importable here: %s" % error})
        return None
    return torch, torch_xla, xm, met


def main(argv):
    dispatched = "--dispatched" in argv[2:]
    if dispatched:
        argv = [arg for arg in argv if arg != "--dispatched"]
    modules = xla_start(argv, "xla_fallbacks.py")
    if modules is None:
        return
    torch, torch_xla, xm, met = modules
    recorder = _recorder() if dispatched else None

    def recording(phase):
        if recorder is None:
            return contextlib.nullcontext()
        recorder.phase = phase
        return recorder
    _progress("building the model")
    try:
        model, inputs, loss_fn, given_optimizer, _ = _parts(_load_factory(argv[1])())
    except BaseException as error:  # the user's model, reported as such
        _fail("load", error)
        return
    started = time.perf_counter()
    phases = {}
    try:
        device = xla_device(torch_xla, xm)
        model = model.to(device)
        args, kwargs = _move(_call_form(inputs), device)
        optimizer = _optimizer(model, given_optimizer, rebuild=True)
        met.clear_all()
        _progress("running one training step on %s" % device)
        with recording("forward"):
            output = model(*args, **kwargs)
            loss = loss_fn(output) if loss_fn is not None else _loss(output)
        _sync(torch_xla, xm)
        phases["forward"] = _read_counters(met)
        if loss.requires_grad:
            met.clear_all()
            with recording("backward"):
                loss.backward()
            _sync(torch_xla, xm)
            phases["backward"] = _read_counters(met)
            if optimizer is not None:
                met.clear_all()
                with recording("optimizer"):
                    optimizer.step()
                _sync(torch_xla, xm)
                phases["optimizer"] = _read_counters(met)
    except BaseException as error:  # reported as the user's error
        _fail("step", error)
        return
    ops = {}
    for phase, counters in phases.items():
        for name, count in counters.items():
            entry = ops.setdefault(name, {"op": name, "count": 0, "phases": {}})
            entry["count"] += count
            entry["phases"][phase] = count
    document = {"schema": "neurondoctor.probe/1", "status": "ok", "mode": "xla", "torch": torch.__version__,
                "torch_xla": getattr(torch_xla, "__version__", "?"), "device": str(device),
                "pjrt_device": os.environ.get("PJRT_DEVICE", ""), "model": argv[1],
                "duration_s": round(time.perf_counter() - started, 4),
                "ops": sorted(ops.values(), key=lambda entry: entry["op"])}
    if recorder is not None:
        by_phase = {}
        for name, phase in recorder.counts:
            by_phase.setdefault(phase, set()).add(name)
        document["dispatched"] = {phase: sorted(names) for phase, names in by_phase.items()}
    _emit(document)


if __name__ == "__main__":
    main(sys.argv)
