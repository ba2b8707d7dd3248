"""`explain` on the import-time failures of the Neuron stack: the first thing an ML engineer sees when `import
torch_neuronx` breaks. Each file under tests/recorded/import-errors/ is a text a user or AWS's docs published, its
first line naming where (`# source: URL`). An `undefined symbol` is read by its symbol: the runtime (`nrt_…`), torch,
TensorFlow or another library each point to a different fix, and a wrong one sends the user to reinstall torch when
the runtime package is what is old (aws-neuron-sdk#1017, which `explain` called a torch conflict before)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Optional

import pytest

from neurondoctor.release_data.probe_data import load_compiler_fixes, load_error_signatures, load_op_support
from neurondoctor.rules.probes.canary import classify_failure
from neurondoctor.rules.probes.error_explanation import explain_text
from neurondoctor.rules.probes.import_errors import pjrt_path_helper, undefined_symbol

RECORDED = Path(__file__).parent / "recorded" / "import-errors"

# file -> (category, the start of the detail or None, the start of the first way out)
EXPECTED: dict[str, tuple[str, Optional[str], str]] = {
    "nrt-symbol-old-runtime.log": (
        "mixed-sdk-release",
        "a compiled extension calls the Neuron runtime function nrt_tensor_copy (version NRT_2.0.0), which the "
        "libnrt.so.1 it loaded does not have",
        "upgrade the Neuron runtime (aws-neuronx-runtime-lib"),
    "xlac-torch-mismatch-nxdt-guide.log": (
        "stock-torch-conflict",
        "_XLAC.cpython-310-x86_64-linux-gnu.so (from torch-xla) and the torch it loads come from different builds",
        "reinstall the torch torch-neuronx is built for"),
    "xlac-aten-symbol-colab.log": (
        "stock-torch-conflict",
        "_XLAC.cpython-37m-x86_64-linux-gnu.so (from torch-xla) and the torch it loads come from different builds",
        "reinstall the torch torch-neuronx is built for"),
    "tensorflow-neuron-symbol.log": (
        "framework-pin-mismatch",
        "_whitelist_partition_swig.so (from tensorflow-neuron) and the TensorFlow it loads come from different builds",
        "install the TensorFlow the Neuron package was released with"),
    "libneuronpjrt-path-not-on-path.log": (
        "tools-missing", "the helper `libneuronpjrt-path`, which libneuronxla installs, is not on PATH",
        "put the bin directory of the environment that holds torch-neuronx on PATH before Python starts"),
    "libneuronxla-name-missing.log": ("framework-pin-mismatch", None, "pin every Neuron package of the environment"),
    "libnrt-not-found-nrtpy-guide.log": ("tools-missing", None, "`ls /opt/aws/neuron/lib/libnrt.so*`"),
    "libcrypt-al2023-guide.log": ("tools-missing", None, "`sudo dnf install -y libxcrypt-compat`"),
    "no-module-torch-neuronx-guide.log": ("framework-missing", None, "`which python` names the interpreter that ran"),
    "torch-neuron-dependency-version.log": (
        "stock-torch-conflict", "torch 2.0.1+cu117 is installed; this torch-neuron is built for torch 1.13.1",
        "reinstall the torch torch-neuron is built for"),
}


def _explain(path: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "neurondoctor", "explain", str(path), "--json"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_recorded_text_names_its_source_and_is_expected() -> None:
    files = sorted(path.name for path in RECORDED.glob("*.log"))
    assert files == sorted(EXPECTED)
    for name in files:
        assert (RECORDED / name).read_text().splitlines()[0].startswith("# source: https://"), name


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_real_import_failure_is_explained(name: str) -> None:
    category, detail, first_way = EXPECTED[name]
    answer = _explain(RECORDED / name)
    assert answer["category"] == category
    assert (answer["detail"] or "").startswith(detail or ""), answer["detail"]
    assert (answer["detail"] is None) == (detail is None)
    assert answer["ways_out"][0].startswith(first_way), answer["ways_out"]
    assert len(answer["ways_out"]) == len(set(answer["ways_out"])), "a way out is shown twice"


def test_a_runtime_symbol_keeps_only_the_runtime_ways_even_behind_the_xlac_signature() -> None:
    """The `_XLAC` signature comes first; its torch advice is wrong when the missing symbol is the runtime's."""
    text = ("  File \"/opt/venv/lib/python3.10/site-packages/torch_xla/__init__.py\", line 7, in <module>\n"
            "    import _XLAC\nImportError: /opt/venv/lib/python3.10/site-packages/libneuronxla/libneuronpjrt.so: "
            "undefined symbol: nrt_get_attached_efa_bdf, version NRT_2.0.0\n")
    signatures = load_error_signatures()
    category, why = classify_failure("import", text, signatures)
    assert category == "mixed-sdk-release" and "runtime library" in why
    detail = undefined_symbol(text)
    assert detail is not None
    assert detail.what.startswith("libneuronpjrt.so (from libneuronxla) calls the Neuron runtime")
    assert not any("torch" in way for way in detail.ways)


def test_the_canary_and_explain_agree_on_a_recorded_import_failure() -> None:
    signatures = load_error_signatures()
    for name, (category, _, _) in EXPECTED.items():
        text = (RECORDED / name).read_text()
        assert classify_failure("import", text, signatures)[0] == category, name


def test_a_torch_symbol_in_a_package_that_is_not_neurons_names_that_package() -> None:
    text = ("ImportError: /home/u/venv/lib/python3.10/site-packages/norse_op.cpython-310-x86_64-linux-gnu.so: "
            "undefined symbol: _ZN3c106detail19maybe_wrap_dim_slowIlEET_S2_S2_b")  # norse/norse#375's shape
    detail = undefined_symbol(text)
    assert detail is not None and detail.category == "stock-torch-conflict"
    assert detail.ways[0].startswith("norse-op is not a Neuron package: reinstall it built for the torch")


def test_a_cxx11_symbol_says_which_abi() -> None:
    text = ("ImportError: /env/lib/python3.8/site-packages/torch_neuron/lib/libtorchneuron.so: undefined symbol: "
            "_ZN5torch3jit8toIValueERKN8pybind116handleERKN3c1013Type24SingletonOrSharedTypePtrIS6_EENS9_8optional"
            "IiEEB5cxx11")
    detail = undefined_symbol(text)
    assert detail is not None and "(from torch-neuron)" in detail.what
    assert any("C++11 string ABI" in way and "+cxx11" in way for way in detail.ways)


def test_another_library_of_the_same_package_is_a_pin_mismatch_not_torch() -> None:
    """aws-neuron-sdk#328: neuron-cc's libwalrus.so asks its own compiler libraries for a symbol (`3bir`)."""
    text = ("ImportError: /home/ubuntu/miniconda3/envs/inf/lib/python3.7/site-packages/neuroncc/starfish/penguin/"
            "targets/codegen/libwalrus.so: undefined symbol: _ZNK3bir3Hwm21getInitiationIntervalERKNS_23InstCalcVar"
            "AddrSymbolicE")
    detail = undefined_symbol(text)
    assert detail is not None and detail.category == "framework-pin-mismatch"
    assert detail.what.startswith("libwalrus.so (from neuron-cc) and a library it loads come from different builds")
    assert detail.ways[0].startswith("reinstall neuron-cc and what it depends on from one release")


def test_undefined_symbol_without_a_symbol_keeps_the_signature() -> None:
    """aws-neuron-sdk#654 quotes the phrase without the symbol: the signature's own category and way stand."""
    assert undefined_symbol("`libtorchneuron.so: undefined symbol`") is None
    assert classify_failure("import", "libtorchneuron.so: undefined symbol", load_error_signatures())[0] == \
        "stock-torch-conflict"


@pytest.mark.parametrize(("path", "activate"), [
    ("/home/ubuntu/Dev/venv/hf", "`source /home/ubuntu/Dev/venv/hf/bin/activate`"),
    ("/opt/aws_neuronx_venv_pytorch_2_9", "`source /opt/aws_neuronx_venv_pytorch_2_9/bin/activate`"),
    ("/home/a b/$(touch x)/venv", "`source '/home/a b/$(touch x)/venv'/bin/activate`"),
])
def test_the_helper_is_looked_for_in_the_environment_of_the_traceback(path: str, activate: str) -> None:
    text = (f'  File "{path}/lib/python3.10/site-packages/torch_xla/_internal/neuron.py", line 40, in '
            "num_local_processes\nFileNotFoundError: [Errno 2] No such file or directory: 'libneuronpjrt-path'\n")
    detail = pjrt_path_helper(text)
    assert detail is not None and activate in detail.ways[0], detail


def test_a_system_python_is_not_told_to_change_path() -> None:
    text = ('  File "/usr/local/lib/python3.10/dist-packages/torch_xla/__init__.py", line 7\n'
            "FileNotFoundError: [Errno 2] No such file or directory: 'libneuronpjrt-path'\n")
    detail = pjrt_path_helper(text)
    assert detail is not None and detail.ways == ()
    answer = subprocess.run([sys.executable, "-m", "neurondoctor", "explain", "-", "--json"], input=text,
                            capture_output=True, text=True, timeout=60)
    ways = json.loads(answer.stdout)["ways_out"]
    assert ways == ["libneuronxla must be the one torch-neuronx was released with (2.0.* for PyTorch 2.1): "
                    "`neurondoctor check` compares them and prints the pins"]


FACTS = Path(__file__).resolve().parent.parent / "docs" / "neuron-facts.md"
# Rows of the troubleshooting table that `explain` does not recognise, each with why: a wrong category is worse than
# "not recognised".
NOT_EXPLAINED = {
    "nrt_init()": "the row is a situation (a driver-only upgrade), not a message a log prints",
}  # the runtime's out-of-bound access (1006) fits no category and is explain's own cause `model-input`


def _troubleshooting_rows() -> list[str]:
    """The exact symptom (first code span) of each row of docs/neuron-facts.md §7's table."""
    text = FACTS.read_text()
    section = text[text.index("## 7. Troubleshooting"):text.index("## 8.")]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [line.split(" | ")[0].split("`")[1] for line in rows]


def test_every_symptom_of_the_facts_troubleshooting_table_is_explained_or_says_why_not() -> None:
    """The table users read and the signatures `explain` runs stay one list: a row added to the docs without a
    signature (or an exclusion with its reason) fails here."""
    signatures = load_error_signatures()
    rows = _troubleshooting_rows()
    assert len(rows) >= 30
    unexplained = [row for row in rows
                   if explain_text(row, signatures, load_op_support(), load_compiler_fixes()) is None]
    assert sorted(unexplained) == sorted(NOT_EXPLAINED)
