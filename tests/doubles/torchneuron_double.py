"""A test double of TorchNeuron (torch-neuronx 2.13/2.14, the native backend), as a wheel beside real CPU torch.

What the real package does that the canary relies on (release-notes/components/torchneuron.rst, 2.33.0): importing
`torch_neuronx` adds the `neuron` device through PyTorch's PrivateUse1 extension (`model.to("neuron")`), and
`torch.compile(backend="neuron")` compiles for it. The double names the PrivateUse1 backend `neuron` with PyTorch's
own API (`torch.utils.rename_privateuse1_backend`) and a device module `torch.neuron`, registers a `neuron` dynamo
backend that runs the captured graph as it is, and stands in for the device memory with the CPU: a move to `neuron`
is recorded and done on the CPU (no kernels can be registered for a device from Python). Each step it takes is
written to `$FAKE_TORCHNEURON_LOG`, so a test sees that the canary took the native path. `FAKE_TORCH_NEURONX`
selects a failure: `device-error` (the cores are held by another process, at the first move), `compile-error` (the
neuron backend fails), `wrong-output` (the eager output on the device is off by one).
"""

DOUBLE_SOURCE = '''
import os

import torch

__version__ = "2.13.3.0.1024"

torch.utils.rename_privateuse1_backend("neuron")
_BEHAVIOUR = os.environ.get("FAKE_TORCH_NEURONX", "ok")


def _record(step):
    log = os.environ.get("FAKE_TORCHNEURON_LOG")
    if log:
        with open(log, "a") as handle:
            handle.write(step + "\\n")


def _is_neuron(value):
    return isinstance(value, (str, torch.device)) and str(value).split(":")[0] == "neuron"


_tensor_to = torch.Tensor.to


def _to(self, *args, **kwargs):
    if any(_is_neuron(value) for value in args) or _is_neuron(kwargs.get("device")):
        _record("to:neuron")
        if _BEHAVIOUR == "device-error":
            raise RuntimeError("nrt_init: NRT:nrt_allocate_neuron_cores NeuronCore(s) not available - "
                               "Requested:nc0-nc0 Available:0")
        args = tuple("cpu" if _is_neuron(value) else value for value in args)
        if _is_neuron(kwargs.get("device")):
            kwargs["device"] = "cpu"
    return _tensor_to(self, *args, **kwargs)


torch.Tensor.to = _to
_module_to = torch.nn.Module.to


def _module_on_device(self, *args, **kwargs):
    moved = _module_to(self, *args, **kwargs)
    if _BEHAVIOUR == "wrong-output" and (any(_is_neuron(value) for value in args) or _is_neuron(kwargs.get("device"))):
        moved.register_forward_hook(lambda module, inputs, output: output + 1.0)
    return moved


torch.nn.Module.to = _module_on_device

import types

# The device module a PrivateUse1 backend registers (`torch.neuron`): what torch.compile asks of the device.
_device_module = types.ModuleType("torch.neuron")
_device_module.is_available = lambda: True
_device_module.device_count = lambda: 1
_device_module.current_device = lambda: 0
_device_module.set_device = lambda index: None
_device_module.synchronize = lambda device=None: None
_device_module._is_in_bad_fork = lambda: False
_device_module.manual_seed_all = lambda seed: None
torch._register_device_module("neuron", _device_module)
# The real backend gives torch.compile the device's streams (C++ device guard); a Python double cannot, so it tells
# dynamo that no accelerator stream is there to track.
torch.accelerator.is_available = lambda: False

from torch._dynamo import register_backend


@register_backend(name="neuron")
def _neuron_backend(graph_module, example_inputs):
    _record("compile:neuron")
    if _BEHAVIOUR == "compile-error":
        raise RuntimeError("neuronx-cc failed with 70: [NCC_EVRF001] Operator 'aten::triangular_solve' is not "
                           "supported by the compiler.")
    return graph_module.forward
'''
