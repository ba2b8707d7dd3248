"""What an import-time failure of the Neuron stack means (pure): the first thing an ML engineer sees when
`import torch_neuronx` breaks, read from the text alone.

- `undefined symbol`: a compiled extension asks the loader for a function its library does not export, so the two
  come from different builds. Which builds is in the symbol: `nrt_…` (versioned `NRT_2.0.0`) is the Neuron runtime
  library, older than the framework that calls it (aws-neuron-sdk#1017: an Inf1-era `aws-neuron-tools` had held
  aws-neuronx-runtime-lib at 2.7, before `nrt_tensor_copy`); a C++ name in torch's namespaces (`3c10`, `N2at`,
  `N5torch`) is torch, built apart from the extension (the torch-xla guide's `_XLAC … undefined symbol: _ZN3c10…`;
  with `__cxx11` in it, the other C++ ABI: aws-neuron-sdk#654); `10tensorflow` is TensorFlow
  (aws-neuron-sdk#73); any other is a library of the same package or its dependency (aws-neuron-sdk#328,
  neuron-cc's libwalrus.so).
- `libneuronpjrt-path`: torch-xla 2.1 and later run the helper libneuronxla installs into the environment's `bin`
  directory. It is not found when that directory is not on PATH (the environment's python run by its full path from
  a service, IDE, cron job or notebook kernel: many real reports), or when libneuronxla is not the one torch-neuronx
  was released with (AWS's PyTorch 2.1 known issues: libneuronxla must be 2.0.* there).

- `Invalid dependency version torch==2.0.1+cu117. Expected torch==1.13.1`: torch-neuron (Inf1) checks the torch it
  is built for at import (aws-neuron-sdk#686): the two versions are read off the message.

Every scan is a `str.find`, bounded slices of one line or a pattern of bounded runs: linear in the text.
"""

from __future__ import annotations

import re
from typing import Optional

from neurondoctor.rules.fix import Shell, quote_word, render_word
from neurondoctor.rules.probes.text_detail import TextDetail

_UNDEFINED = "undefined symbol: "
_SHOWN_SYMBOL = 120
# Module directory (or top-level extension) under site-packages -> the distribution that installs it.
_DISTRIBUTIONS = {
    "_XLAC": "torch-xla", "torch_xla": "torch-xla", "torch_neuronx": "torch-neuronx", "torch_neuron": "torch-neuron",
    "neuronxcc": "neuronx-cc", "neuroncc": "neuron-cc", "libneuronxla": "libneuronxla",
    "neuronx_distributed": "neuronx-distributed", "neuronx_distributed_inference": "neuronx-distributed-inference",
    "transformers_neuronx": "transformers-neuronx", "tensorflow_core": "tensorflow", "tensorflow_neuron":
    "tensorflow-neuron", "jax_neuronx": "jax-neuronx",
}
# The packages whose torch is the one the Neuron release pins: `neurondoctor check` prints that torch.
_NEURON_PACKAGES = frozenset({"torch-xla", "torch-neuronx", "torch-neuron", "libneuronxla", "neuronx-distributed",
                              "neuronx-distributed-inference", "transformers-neuronx", "torch"})
# A framework's C++ namespaces as the Itanium ABI mangles them (`_ZN3c10…`, `_ZNK2at6Tensor…`,
# `_ZN5torch8autograd…`).
_TORCH_NAMESPACES = ("3c10", "N2at", "N5torch", "N6caffe2", "c10::", "at::", "torch::")
_TENSORFLOW_NAMESPACES = ("10tensorflow", "tensorflow::")
# The same words as the `_XLAC` signature's first way out (manifests/error-signatures.json): shown once.
REINSTALL_PINNED_TORCH = ("reinstall the torch torch-neuronx is built for: `neurondoctor check` prints the exact "
                          "command for the environment")
_CHECK_PINS = ("pin every package of the environment to one release: `neurondoctor check` prints the pins for this "
               "environment, or `neurondoctor venv create PATH --release X.Y.Z` builds a fresh guarded one")


def _line_at(text: str, position: int) -> tuple[str, int]:
    """The line holding `position`, and the position's offset in it."""
    start = text.rfind("\n", 0, position) + 1
    end = text.find("\n", position)
    return text[start:len(text) if end < 0 else end], position - start


def _package_of(path: str) -> Optional[str]:
    """The distribution that installed a file under site-packages or dist-packages, by its top directory."""
    parts = path.split("/")
    for index in range(len(parts) - 2, -1, -1):
        if parts[index] in ("site-packages", "dist-packages"):
            module = parts[index + 1].split(".", 1)[0]
            if module in ("tensorflow", "tensorflow_core") and "neuron" in parts[index + 2:-1]:
                return "tensorflow-neuron"  # tensorflow-neuron installs its extensions into TensorFlow's tree
            return _DISTRIBUTIONS.get(module, module.replace("_", "-")) if module else None
    return None


def _library_before(line: str, at: int) -> Optional[str]:
    """The library the loader names before `undefined symbol` (`…/_XLAC.cpython-310-x86_64-linux-gnu.so:`), if any."""
    head = line[:at].rstrip()
    if not head.endswith(":"):
        return None
    words = head[:-1].split()
    token = words[-1].strip("`'\"") if words else ""
    return token if token and ("/" in token or ".so" in token) else None


def _symbol_after(line: str, at: int) -> tuple[str, Optional[str]]:
    """The symbol and its version tag (`nrt_tensor_copy`, `NRT_2.0.0`)."""
    rest = line[at + len(_UNDEFINED):at + len(_UNDEFINED) + 4096]
    words = rest.replace(",", " ").split()
    symbol = words[0].strip("`'\"") if words else ""
    version = words[2].strip("`'\".") if len(words) > 2 and words[1] == "version" else None
    return symbol, version


def _shown(symbol: str) -> str:
    return symbol if len(symbol) <= _SHOWN_SYMBOL else symbol[:_SHOWN_SYMBOL] + "…"


def undefined_symbol(text: str) -> Optional[TextDetail]:
    """Which two builds disagree, from the first `undefined symbol:` line (module docstring)."""
    position = text.find(_UNDEFINED)
    if position < 0:
        return None
    line, at = _line_at(text, position)
    symbol, version = _symbol_after(line, at)
    if not symbol:
        return None
    library = _library_before(line, at)
    package = _package_of(library) if library else None
    file = library.rsplit("/", 1)[-1] if library else None
    where = (f"{file} (from {package})" if file and package else file) or "a compiled extension"
    asked = f"{_shown(symbol)}" + (f" (version {version})" if version else "")
    if symbol.startswith("nrt_") or (version or "").startswith("NRT_"):
        return TextDetail(
            what=f"{where} calls the Neuron runtime function {asked}, which the libnrt.so.1 it loaded does not have",
            ways=("upgrade the Neuron runtime (aws-neuronx-runtime-lib, with aws-neuronx-collectives) to the release "
                  "of the framework: `neurondoctor check` names the release of each side and prints the install "
                  "command for this host",
                  "if the older Inf1-era package aws-neuron-tools (no x) is installed, replace it with "
                  "aws-neuronx-tools: it kept aws-neuronx-runtime-lib at 2.7 in aws-neuron-sdk#1017",
                  "an older copy of libnrt.so.1 earlier on the loader's path does the same: `ldconfig -p | grep "
                  "libnrt` and LD_LIBRARY_PATH show which copy loads (the package's is /opt/aws/neuron/lib)"),
            category="mixed-sdk-release",
            why="the Neuron runtime library on this host is older than the framework that calls it")
    cxx11 = "cxx11" in symbol
    if any(name in symbol for name in _TORCH_NAMESPACES):
        ways: list[str] = []
        if package and package not in _NEURON_PACKAGES:
            ways.append(f"{package} is not a Neuron package: reinstall it built for the torch this environment "
                        "holds, or keep it out of the Neuron environment; `neurondoctor check` shows whether torch "
                        "is still the one the Neuron release pins")
        else:
            ways.append(REINSTALL_PINNED_TORCH)
        if cxx11:
            ways.append("the symbol is of the C++11 string ABI (`cxx11`): torch and the extension were built with "
                        "different `_GLIBCXX_USE_CXX11_ABI`; install the extension's build for the installed torch's "
                        "ABI (`python -c 'import torch; print(torch._C._GLIBCXX_USE_CXX11_ABI)'` tells which; "
                        "torch-neuron ships `+cxx11` builds: aws-neuron-sdk#654)")
        return TextDetail(
            what=f"{where} and the torch it loads come from different builds: it asks for {asked}, which the "
                 "installed torch does not export",
            ways=tuple(ways), category="stock-torch-conflict",
            why="a compiled extension does not match the installed torch")
    if any(name in symbol for name in _TENSORFLOW_NAMESPACES):
        return TextDetail(
            what=f"{where} and the TensorFlow it loads come from different builds: it asks for {asked}",
            ways=("install the TensorFlow the Neuron package was released with: the Neuron release's package list "
                  "names it; " + _CHECK_PINS,),
            category="framework-pin-mismatch", why="a Neuron extension does not match the installed TensorFlow")
    return TextDetail(
        what=f"{where} and a library it loads come from different builds: it asks for {asked}, which that library "
             "does not export",
        ways=(f"reinstall {package or 'the package'} and what it depends on from one release "
              "(`pip install --force-reinstall` of the release's versions); " + _CHECK_PINS,),
        category="framework-pin-mismatch",
        why="a compiled library and a library it loads come from different builds")


def _environment_prefix(text: str) -> Optional[str]:
    """The environment of the first site-packages path in the text (`/home/u/venv` of
    `/home/u/venv/lib/python3.10/site-packages/…`), from the path's own line."""
    for marker in ("/site-packages/", "/dist-packages/"):
        position = text.find(marker)
        if position < 0:
            continue
        line, at = _line_at(text, position)
        head = line[max(0, at - 1024):at]
        lib = max(head.rfind("/lib/python"), head.rfind("/lib64/python"))
        if lib <= 0:
            continue
        for marks in (("\"", "'", "`"), ("(",)):  # a quoted path may hold spaces and parentheses; a bare one not
            start = max(head.rfind(mark, 0, lib) for mark in marks)
            if start >= 0 and head[start + 1:lib].startswith("/"):
                return head[start + 1:lib]
        words = head[:lib].split()
        if words and words[-1].startswith("/"):
            return words[-1]
    return None


def pjrt_path_helper(text: str) -> Optional[TextDetail]:
    """Where the `libneuronpjrt-path` helper should have been found (module docstring)."""
    if "libneuronpjrt-path" not in text:
        return None
    prefix = _environment_prefix(text)
    if prefix in ("/usr", "/usr/local"):  # the system's bin is on PATH: the helper is missing, not hidden
        return TextDetail("the helper `libneuronpjrt-path`, which libneuronxla installs, is not on PATH")
    if prefix is None:
        return TextDetail(
            "the helper `libneuronpjrt-path`, which libneuronxla installs, is not on PATH",
            ("put the bin directory of the environment that holds torch-neuronx on PATH before Python starts: "
             "`source VENV/bin/activate`, or `PATH=VENV/bin:$PATH` in a service, cron job, IDE run configuration or "
             "notebook kernel; running its python by full path is not enough",))
    return TextDetail(
        f"the helper `libneuronpjrt-path` of the environment {quote_word(prefix)} is not on PATH",
        (f"put the environment's bin directory on PATH before Python starts: `source "
         f"{render_word((prefix, Shell('/bin/activate')))}`, or `PATH={render_word((prefix, Shell('/bin:$PATH')))}` "
         "in a service, cron job, IDE run configuration or notebook kernel; running its python by full path is "
         "not enough",))


_DEPENDENCY_VERSION = re.compile(r"Invalid dependency version torch==([\w.+-]{1,64})\. Expected torch==([\w.+-]{1,64})")


def torch_neuron_dependency(text: str) -> Optional[TextDetail]:
    """torch-neuron's own check (aws-neuron-sdk#686): the torch it found and the one it is built for."""
    found = _DEPENDENCY_VERSION.search(text)
    if found is None:
        return None
    installed, expected = found.group(1), found.group(2).rstrip(".")
    return TextDetail(f"torch {installed} is installed; this torch-neuron is built for torch {expected}")


IMPORT_READERS = {"undefined-symbol": undefined_symbol, "pjrt-path-helper": pjrt_path_helper,
                  "torch-neuron-dependency": torch_neuron_dependency}
