"""A test double of `torch_neuronx`, shipped as a wheel into test environments with real CPU torch.

It follows the documented API (frameworks/torch/torch-neuronx/api-reference-guide/inference/
api-torch-neuronx-trace.rst): `trace(func, example_inputs, *_, input_output_aliases={}, compiler_workdir=None,
compiler_args=None, partitioner_config=None, inline_weights_to_neff=True, cpu_backend=False)` returns a
`torch.jit.ScriptModule` that takes and returns CPU tensors. `FAKE_TORCH_NEURONX` selects a documented failure:
`compile-error` (an NCC_EVRF001 unsupported operator), `runtime-error` (cores held by another process, at the
first run), `import-error` (the `_XLAC … undefined symbol` of a mismatched torch), `wrong-output`.
"""

DOUBLE_SOURCE = '''
import os

if os.environ.get("FAKE_TORCH_NEURONX") == "import-error":
    raise ImportError("/venv/lib/python3.11/site-packages/_XLAC.cpython-311-x86_64-linux-gnu.so: undefined symbol: "
                      "_ZN5torch8autograd12VariableInfoC1ERKN2at6TensorE")

import torch

__version__ = "2.9.0.2.15.32035"


class _HeldCores(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise RuntimeError("nrt_init: NRT:nrt_allocate_neuron_cores NeuronCore(s) not available - "
                           "Requested:nc0-nc0 Available:0")


class _Skewed(torch.nn.Module):
    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x) + 1.0


def trace(func, example_inputs, *_, input_output_aliases={}, compiler_workdir=None, compiler_args=None,
          partitioner_config=None, inline_weights_to_neff=True, cpu_backend=False):
    behaviour = os.environ.get("FAKE_TORCH_NEURONX", "ok")
    if compiler_workdir:
        os.makedirs(compiler_workdir, exist_ok=True)
    if behaviour == "compile-error":
        raise RuntimeError("neuronx-cc failed with 70: [NCC_EVRF001] Operator 'aten::triangular_solve' is not "
                           "supported by the compiler.")
    if behaviour == "runtime-error":
        return torch.jit.script(_HeldCores())
    traced = torch.jit.trace(func, example_inputs)
    if behaviour == "wrong-output":
        return torch.jit.script(_Skewed(traced))
    return traced
'''
