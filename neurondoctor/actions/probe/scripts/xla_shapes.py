"""Run by the target interpreter: how many graphs a model's training step compiles as its input shapes vary.

Usage: python xla_shapes.py MODEL_SPEC   (PJRT_DEVICE=CPU on any machine; the Neuron device on a trn1)
The shapes are the factory's own list when it gives one (`factory()` returning `(model, inputs, ...,
[inputs, ...])`), else the example inputs, the batch doubled, and for token inputs (integer tensors of two or more
dimensions, with the tensors of the same leading shape, such as an attention mask) the sequence length doubled.
Each shape runs one warm-up step, then one measured step: compilations are read from torch_xla.debug.metrics
(`CompileTime` samples) around each, because an optimizer's first step compiles another graph than its second
(archive/nxd-training/pytorch-neuron-debug.rst: metrics; pytorch/xla TROUBLESHOOTING.md: CompileTime). A shape's
graph count is what its measured step compiled, or one when only its warm-up did (a forward-only model). Prints one
JSON line.
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from op_inventory import _call_form, _emit, _fail, _load_factory, _optimizer, _parts, _progress, _step
from xla_fallbacks import _move, _sync, xla_device, xla_start


def _compiles(met):
    data = met.metric_data("CompileTime") if "CompileTime" in met.metric_names() else None
    return int(data[0]) if data else 0


def _tensors(args, kwargs):
    import torch

    return [value for value in list(args) + list(kwargs.values()) if isinstance(value, torch.Tensor)]


def _resized(value, axis, size, token):
    """`value` with dimension `axis` grown or cut to `size`: token ids are drawn again below their maximum, masks
    and features repeat their content."""
    import torch

    if value.shape[axis] == size:
        return value
    if token is not None and value is token:
        high = int(value.max().item()) + 1 if value.numel() else 2
        shape = list(value.shape)
        shape[axis] = size
        return torch.randint(0, max(high, 2), tuple(shape), dtype=value.dtype)
    repeats = -(-size // value.shape[axis])
    grown = torch.cat([value] * repeats, dim=axis)
    return grown.narrow(axis, 0, size)


def _variant(form, axis, size, leading, token):
    args, kwargs = form

    def change(value):
        import torch

        if isinstance(value, torch.Tensor) and value.dim() > axis and tuple(value.shape[:axis + 1]) == leading:
            return _resized(value, axis, size, token)
        return value

    return tuple(change(value) for value in args), {key: change(value) for key, value in kwargs.items()}


def _shapes(form):
    """(label, call form) pairs: the example, the batch doubled, the sequence length doubled (token inputs)."""
    import torch

    tensors = _tensors(*form)
    variants = [({"variant": "example"}, form)]
    if not tensors or tensors[0].dim() == 0:
        return variants
    first = tensors[0]
    batch = first.shape[0]
    variants.append(({"variant": "batch", "batch": batch * 2},
                     _variant(form, 0, batch * 2, (batch,), None)))
    token = next((value for value in tensors if value.dim() >= 2 and not value.is_floating_point()
                  and value.dtype != torch.bool), None)
    if token is not None:
        length = token.shape[1]
        variants.append(({"variant": "sequence", "sequence": length * 2},
                         _variant(form, 1, length * 2, tuple(token.shape[:2]), token)))
    return variants


def _describe(form):
    args, kwargs = form
    named = [("arg%d" % index, value) for index, value in enumerate(args)] + list(kwargs.items())
    return {name: list(value.shape) for name, value in named if hasattr(value, "shape")}


def main(argv):
    modules = xla_start(argv, "xla_shapes.py")
    if modules is None:
        return
    torch, torch_xla, xm, met = modules
    _progress("building the model")
    try:
        model, inputs, loss_fn, given_optimizer, listed = _parts(_load_factory(argv[1])())
        forms = ([({"variant": "listed", "index": index}, _call_form(shape)) for index, shape in enumerate(listed)]
                 if listed else _shapes(_call_form(inputs)))
    except BaseException as error:  # the user's model, reported as such
        _fail("load", error)
        return
    started = time.perf_counter()
    results = []
    try:
        device = xla_device(torch_xla, xm)
        model = model.to(device)
        optimizer = _optimizer(model, given_optimizer, rebuild=True)
        for number, (label, form) in enumerate(forms, start=1):
            _progress("shape %d of %d: %s" % (number, len(forms), _describe(form)))
            moved = _move(form, device)
            counts, seconds = [], 0.0
            for _ in range(2):  # a warm-up step, then the measured one
                before = _compiles(met)
                began = time.perf_counter()
                _step(model, moved, loss_fn, optimizer, None)
                _sync(torch_xla, xm)
                seconds = time.perf_counter() - began
                counts.append(_compiles(met) - before)
            results.append({**label, "shapes": _describe(form), "warmup_compiles": counts[0],
                            "measured_compiles": counts[1], "graphs": counts[1] or min(counts[0], 1),
                            "step_s": round(seconds, 4)})
    except BaseException as error:  # reported as the user's error
        _fail("step", error)
        return
    _emit({"schema": "neurondoctor.probe/1", "status": "ok", "mode": "shapes", "torch": torch.__version__,
           "torch_xla": getattr(torch_xla, "__version__", "?"), "pjrt_device": os.environ.get("PJRT_DEVICE", ""),
           "model": argv[1], "duration_s": round(time.perf_counter() - started, 4), "shapes": results})


if __name__ == "__main__":
    main(sys.argv)
