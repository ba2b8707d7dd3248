"""Run by the target interpreter: one training step of a model under TorchDispatchMode, every aten op recorded.

Usage: python op_inventory.py MODEL_SPEC
MODEL_SPEC is `path/to/file.py:factory`, `package.module:factory`, or `builtin:mlp|transformer|convnet`.
`factory()` returns `(model, example_inputs)`, then optionally a loss function, the user's own optimizer (a
torch.optim.Optimizer, so its fused/foreach settings are what is probed) and a list of inputs (`probe shapes`);
the inputs are a tensor, a tuple, a dict (`model(**inputs)`) or `(args, kwargs)`. Prints exactly one JSON
line: the ops with counts per phase (forward, backward, optimizer), or where and why it failed.
Standard library and torch only; the doctor never imports torch itself.
"""

import importlib
import importlib.util
import json
import os
import sys
import time
import traceback

PHASES = ("forward", "backward", "optimizer")


HERE = os.path.dirname(os.path.abspath(__file__))


def _progress(message):
    """What the probe is doing, for the person waiting (the doctor shows it with the elapsed time)."""
    sys.stderr.write("neurondoctor-progress: %s\n" % message)
    sys.stderr.flush()


def _emit(document):
    sys.stdout.write(json.dumps(document) + "\n")
    sys.stdout.flush()


def _fail(stage, error):
    frames = traceback.extract_tb(error.__traceback__)
    where = "%s:%s" % (frames[-1].filename, frames[-1].lineno) if frames else ""
    if isinstance(error, SyntaxError):
        where = "%s:%s" % (error.filename, error.lineno)
    _emit({"schema": "neurondoctor.probe/1", "status": "error", "stage": stage,
           "error_type": type(error).__name__, "message": str(error).splitlines()[0] if str(error) else "",
           "where": where})


def _builtin(name):
    import torch
    from torch import nn

    torch.manual_seed(0)
    if name == "mlp":
        model = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
        return model, (torch.randn(8, 784),)
    if name == "transformer":
        layer = nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, batch_first=True, dropout=0.0)
        return nn.TransformerEncoder(layer, num_layers=2), (torch.randn(2, 16, 64),)
    if name == "convnet":
        model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                              nn.Flatten(), nn.Linear(8 * 16 * 16, 10))
        return model, (torch.randn(4, 3, 32, 32),)
    raise ValueError("unknown built-in model %r (mlp, transformer, convnet)" % name)


def _load_factory(spec):
    target, _, name = spec.rpartition(":")
    if not target or not name:
        raise ValueError("MODEL_SPEC must be file.py:factory, module:factory or builtin:NAME, got %r" % spec)
    if target == "builtin":
        return lambda: _builtin(name)
    if target.endswith(".py") or os.sep in target:
        module_spec = importlib.util.spec_from_file_location("neurondoctor_probe_model", target)
        if module_spec is None or module_spec.loader is None:
            raise ImportError("cannot load %s" % target)
        module = importlib.util.module_from_spec(module_spec)
        sys.modules["neurondoctor_probe_model"] = module
        module_spec.loader.exec_module(module)
    else:
        sys.path.insert(0, os.getcwd())
        module = importlib.import_module(target)
    factory = getattr(module, name, None)
    if factory is None:
        raise AttributeError("%s has no %s" % (target, name))
    return factory


def _source_file(thing):
    try:
        import inspect

        return inspect.getsourcefile(thing)
    except (TypeError, OSError):
        return None


def _sparse(values):
    """Whether a tensor among these (one level into lists and tuples) has a sparse layout (COO, CSR, …)."""
    import torch

    for value in values:
        items = value if isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if isinstance(item, torch.Tensor) and item.layout != torch.strided:
                return True
    return False


def _bool_index(args):
    """Whether an index/index_put call uses a boolean mask (data-dependent shape: falls back on XLA)."""
    import torch

    for arg in args:
        if isinstance(arg, (list, tuple)):
            for item in arg:
                if isinstance(item, torch.Tensor) and item.dtype == torch.bool:
                    return True
    return False


SYNC_OP = "aten::_local_scalar_dense"  # `.item()`, `bool(t)`, `if t > 0:`: the value goes to Python


def _user_line(user_files):
    """`model.py:42` of the innermost frame in the user's own source (the model's and the factory's files), with
    ` via helpers.py:7` when the tensor is read deeper, outside torch (a library's mask check); else that innermost
    frame outside torch and this probe; None when there is none."""
    frames = traceback.extract_stack()[:-3]
    outside = None
    for frame in reversed(frames):
        name = frame.filename
        if ("torch" + os.sep) in name or name.startswith("<") or os.path.dirname(os.path.abspath(name)) == HERE:
            continue
        outside = "%s:%s" % (os.path.basename(name), frame.lineno)
        break
    for frame in reversed(frames):
        if os.path.abspath(frame.filename) in user_files:
            line = "%s:%s" % (os.path.basename(frame.filename), frame.lineno)
            return line if outside in (None, line) else "%s via %s" % (line, outside)
    return outside


def _recorder(user_files=frozenset()):
    from torch.utils._python_dispatch import TorchDispatchMode

    class Recorder(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.phase = "forward"
            self.counts = {}
            self.sync_sites = {}  # (phase, "file:line") -> count
            self.sync_tensors = []  # (phase, id of the tensor read, site): optimizer state is dropped later

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            name = func._schema.name
            if name.startswith("profiler::"):
                return func(*args, **(kwargs or {}))
            if name in ("aten::index", "aten::index_put", "aten::index_put_") and _bool_index(args):
                name = name.rstrip("_") + " (bool mask)"
            result = func(*args, **(kwargs or {}))
            if _sparse(args) or _sparse((result,)):
                name += " (sparse)"
            if name == SYNC_OP:
                self.sync_tensors.append((self.phase, id(args[0]) if args else None, _user_line(user_files)))
            key = (name, self.phase)
            self.counts[key] = self.counts.get(key, 0) + 1
            return result

        def drop_optimizer_state(self, optimizer):
            """AdamW's step counters are CPU tensors read with `.item()` inside `step()` (capturable=False): no
            device sync, so they are not reported."""
            state = set()
            for entry in (optimizer.state.values() if optimizer is not None else ()):
                state.update(id(value) for value in entry.values() if hasattr(value, "dim") and value.dim() == 0)
            for phase, tensor, site in self.sync_tensors:
                if phase == "optimizer" and tensor in state:
                    key = (SYNC_OP, phase)
                    self.counts[key] -= 1
                    if not self.counts[key]:
                        del self.counts[key]
                elif site:
                    self.sync_sites[(phase, site)] = self.sync_sites.get((phase, site), 0) + 1

    return Recorder()


def _call_form(inputs):
    """(args, kwargs) of a factory's example inputs, as users write them: a dict is keyword arguments
    (`model(**batch)`, the Hugging Face form), a tuple or list positional ones, `(args, kwargs)` both, anything else
    (one tensor) the one argument."""
    if isinstance(inputs, dict):
        return (), dict(inputs)
    if isinstance(inputs, (tuple, list)):
        if len(inputs) == 2 and isinstance(inputs[0], (tuple, list)) and isinstance(inputs[1], dict):
            return tuple(inputs[0]), dict(inputs[1])
        return tuple(inputs), {}
    return (inputs,), {}


def _parts(built):
    """(model, inputs, loss_fn, optimizer, shapes) of what a factory returned: `(model, inputs)` followed, in any
    order, by a loss function (a callable, or None in its place), an optimizer and a list of inputs."""
    import torch

    if not isinstance(built, (tuple, list)) or len(built) < 2:
        raise TypeError("the factory must return (model, example_inputs[, loss_fn][, optimizer][, [inputs, ...]]), "
                        "not %s" % type(built).__name__)
    loss_fn = optimizer = shapes = None
    for extra in built[2:]:
        if isinstance(extra, torch.optim.Optimizer):
            optimizer = extra
        elif isinstance(extra, list):
            shapes = extra
        elif callable(extra):
            loss_fn = extra
    return built[0], built[1], loss_fn, optimizer, shapes


def _optimizer(model, given, rebuild=False):
    """The optimizer of the probed step: the factory's own (with `rebuild`, made again from its class and settings
    over the model's parameters as they are now: moving a model to the XLA device replaces them), else AdamW."""
    import torch

    parameters = [parameter for parameter in model.parameters() if parameter.requires_grad]
    if not parameters:
        return None
    if given is None:
        return torch.optim.AdamW(parameters, lr=1e-3)
    if not rebuild:
        return given
    import inspect

    accepted = inspect.signature(type(given)).parameters  # defaults may hold settings __init__ does not take
    takes_any = any(parameter.kind == parameter.VAR_KEYWORD for parameter in accepted.values())
    settings = {key: value for key, value in given.defaults.items() if takes_any or key in accepted}
    return type(given)(parameters, **settings)


def _loss(output):
    if isinstance(output, (tuple, list)):
        output = output[0]
    if isinstance(output, dict):
        output = next(iter(output.values()))
    return output.float().sum()


def _step(model, inputs, loss_fn, optimizer, recorder):
    """forward + loss + backward + optimizer step; with a recorder, each phase is labelled as it runs."""
    import contextlib

    context = recorder if recorder is not None else contextlib.nullcontext()
    with context:
        if recorder is not None:
            recorder.phase = "forward"
        args, kwargs = inputs
        output = model(*args, **kwargs)
        loss = loss_fn(output) if loss_fn is not None else _loss(output)
        if loss.requires_grad:
            if recorder is not None:
                recorder.phase = "backward"
            loss.backward()
            if optimizer is not None:
                if recorder is not None:
                    recorder.phase = "optimizer"
                optimizer.step()
                optimizer.zero_grad()


def _bench(model, inputs, loss_fn, optimizer, repeats):
    """Median seconds of a plain step and of a recorded step, alternating, after one warm-up step."""
    import statistics

    _step(model, inputs, loss_fn, optimizer, None)
    plain, recorded = [], []
    for _ in range(repeats):
        started = time.perf_counter()
        _step(model, inputs, loss_fn, optimizer, None)
        plain.append(time.perf_counter() - started)
        started = time.perf_counter()
        _step(model, inputs, loss_fn, optimizer, _recorder())
        recorded.append(time.perf_counter() - started)
    return statistics.median(plain), statistics.median(recorded)


def main(argv):
    repeats = 0
    if len(argv) == 4 and argv[2] == "--bench":
        repeats = int(argv[3])
        argv = argv[:2]
    if len(argv) != 2:
        _emit({"schema": "neurondoctor.probe/1", "status": "error", "stage": "usage",
               "error_type": "UsageError", "message": "usage: op_inventory.py MODEL_SPEC", "where": ""})
        return
    _progress("importing torch")
    try:
        import torch
    except Exception as error:  # no torch here is a verdict, not a crash
        _emit({"schema": "neurondoctor.probe/1", "status": "skipped", "stage": "import",
               "error_type": type(error).__name__, "message": "torch is not importable here: %s" % error})
        return
    _progress("loading %s" % argv[1])
    try:
        factory = _load_factory(argv[1])
    except BaseException as error:  # a broken model file is the user's input
        _fail("load", error)
        return
    _progress("building the model")
    try:
        model, raw_inputs, loss_fn, given_optimizer, _ = _parts(factory())
        inputs = _call_form(raw_inputs)
    except BaseException as error:  # reported as the user's error
        _fail("factory", error)
        return
    user_files = {os.path.abspath(path) for path in (_source_file(factory), _source_file(type(model))) if path}
    recorder = _recorder(frozenset(user_files))
    started = time.perf_counter()
    try:
        optimizer = _optimizer(model, given_optimizer)
        if repeats:
            plain, recorded = _bench(model, inputs, loss_fn, optimizer, repeats)
            _emit({"schema": "neurondoctor.probe/1", "status": "ok", "mode": "bench", "plain_s": plain,
                   "recorded_s": recorded, "repeats": repeats})
            return
        _progress("recording the ops of one training step")
        _step(model, inputs, loss_fn, optimizer, recorder)
        recorder.drop_optimizer_state(optimizer)
    except BaseException as error:  # reported as the user's error
        _fail("step", error)
        return
    ops = {}
    for (name, phase), count in recorder.counts.items():
        entry = ops.setdefault(name, {"op": name, "count": 0, "phases": {}})
        entry["count"] += count
        entry["phases"][phase] = entry["phases"].get(phase, 0) + count
    if SYNC_OP in ops:
        ops[SYNC_OP]["sites"] = [{"phase": phase, "where": where, "count": count}
                                 for (phase, where), count in sorted(recorder.sync_sites.items())]
    _emit({"schema": "neurondoctor.probe/1", "status": "ok", "mode": "inventory", "torch": torch.__version__,
           "model": argv[1], "duration_s": round(time.perf_counter() - started, 4),
           "ops": sorted(ops.values(), key=lambda entry: entry["op"])})


if __name__ == "__main__":
    main(sys.argv)
