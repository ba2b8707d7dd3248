"""The causes `explain` names itself where no finding category fits (explain_readers/explain_causes.py): each read by
its message's grammar, each answered with `"category": null`, a `cause` and ways out, and each with a near miss that
must not be read as it.

Texts here are written from the grammar of their source, not copied from the corpus of tests/recorded/explain-corpus
(which measures explain and is not used to build it): the runtime's notification and status wording
(neuron-runtime/nrt-troubleshoot.rst, nrt_status.h), the collectives' bootstrap messages (the same guide's collectives
section), Python's warnings module (`FILE:LINE: CATEGORY: MESSAGE`), apt-get's held-package refusal and the Python
parser's SyntaxError.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import pytest

from neurondoctor.release_data.probe_data import load_compiler_fixes, load_error_signatures, load_op_support
from neurondoctor.rules.explain_readers.check_areas import areas_for
from neurondoctor.rules.explain_readers.explain_causes import EXPLAIN_CAUSES
from neurondoctor.rules.probes.error_explanation import explain_message

DOCS = Path(__file__).resolve().parent.parent / "docs"


def _answer(text: str) -> Optional[dict[str, Any]]:
    explanation, _ = explain_message(text, load_error_signatures(), load_op_support(), load_compiler_fixes())
    return explanation.to_json() if explanation else None


# name -> (text, the cause, a fact the answer must carry or None)
READ: dict[str, tuple[str, str, Optional[tuple[str, str]]]] = {
    # the runtime's custom notification for an indirect copy outside the tensor, on another core and operation
    "out-of-bounds-notification": (
        "ERROR  TDRV:generate_custom_notification_msg  nd1:nc3:h_model.id1201: Received notification generated at "
        "runtime: failed to run dynamic slice, due to out-of-bound access.\n", "model-input", ("core", "3")),
    # nrt_status.h's name for 1006, as the Python bindings print it
    "out-of-bounds-status-name": ("nrtpy.NrtError: NRT_EXEC_OOB(1006) in model.neff\n", "model-input", None),
    # the Inf1 runtime's input check and nrt_status.h's name for 1002
    "unexpected-input-size": ("nrtd[812]: [TDRV:io_queue_prepare_input_nonhugetlb] Unexpected input size, for "
                              "input_ids, expected: 4096, received: 8192\n", "model-input", ("received", "8192")),
    "bad-input-status": ("nrtpy.NrtError: NRT_EXEC_BAD_INPUT(1002)\n", "model-input", None),
    # neuronx-distributed's divisibility check through its parallel layers, another dimension and degree
    "not-divisible": ('  File "/opt/venv/lib/python3.10/site-packages/neuronx_distributed/parallel_layers/utils.py",'
                      ' line 9, in ensure_divisibility\nAssertionError: 32000 is not divisible by 6\n',
                      "unsupported-config", None),
    # nrt_status.h's 1003 as torch-neuronx prints a failed execution
    "numerical-status": ("RuntimeError: nrt_execute status=1003 message=Numerical Error\n", "numerical-error", None),
    # the runtime's message when a killed job left the engines running, with the device it names
    "engines-left-running": (
        "ERROR TDRV:tpb_eng_init_hals_v2 CRITICAL HW ERROR: One or more engines are running. Please restart device by "
        "reloading driver:\nsudo modprobe -r neuron; sudo modprobe neuron;\n", "device-reset", None),
    "core-will-not-stop": ("ERROR TDRV:tsync_timestamps_finish nd3 nc1 Failed to stop neuron core\n", "device-reset",
                           ("device", "3")),
    # the collectives' bootstrap: a peer that closed the connection, a peer not there yet
    "peer-closed": ("ERROR ENC:ncclBootstrapRecv RX, connection closed by remote peer 10.0.1.7:45123\n",
                    "peer-failed-first", None),
    "peer-reset": ("RuntimeError: [gloo] recv: Connection reset by peer\n", "peer-failed-first", None),
    "peer-late-connect": ("CCOM WARN Connect to 10.0.3.4:61234 failed - retrying\n", "peer-late",
                          ("address", "10.0.3.4:61234")),
    "peer-late-rx": ("Timed out waiting for RX (waited 60 sec) - retrying\n", "peer-late", None),
    # Python's warnings module and a library's logged deprecation
    "deprecation-module": (
        "/opt/venv/lib/python3.10/site-packages/torch_xla/core/xla_model.py:1032: DeprecationWarning: "
        "xla_model.get_ordinal() is deprecated. Use torch_xla.runtime.global_ordinal instead.\n",
        "not-the-failure", None),
    "deprecation-logged": ("WARNING:root:NEURON_CC_FLAGS --model-type=cnn will be removed in a future release\n",
                           "not-the-failure", None),
    # apt-get refusing a held package (apt-pkg's message), with another command line before it
    "held-package": ("$ sudo apt-get install -y aws-neuronx-runtime-lib\n"
                     "E: Held packages were changed and -y was used without --allow-change-held-packages.\n",
                     "package-held", None),
    # dnf and apt refusing the Neuron repository's key (apt's EXPKEYSIG with another key id)
    "repo-key": ("W: GPG error: https://apt.repos.neuron.amazonaws.com jammy InRelease: The following signatures "
                 "were invalid: EXPKEYSIG 1234ABCD5678EF90 Amazon AWS Neuron <neuron-maintainers@amazon.com>\n",
                 "package-repo-key", None),
    # Python's import system: a top-level module no Neuron package provides
    "dependency-missing": ('Traceback (most recent call last):\n  File "train.py", line 2, in <module>\n'
                           "ModuleNotFoundError: No module named 'sentencepiece'\n", "python-dependency-missing",
                           ("module", "sentencepiece")),
    # a script asking a framework module for a public name the release does not have
    "api-attribute": ("AttributeError: module 'torch_xla.core.xla_model' has no attribute 'rendezvous_all'\n",
                      "framework-api-change", None),
    # (an import from torch-xla or torch-neuronx is the release data's pairing signature, framework-pin-mismatch)
    "api-import": ('  File "serve.py", line 4, in <module>\n'
                   "ImportError: cannot import name 'draft_export' from 'torch.export' "
                   "(/opt/venv/lib/python3.10/site-packages/torch/export/__init__.py)\n",
                   "framework-api-change", None),
    # TorchScript's message for an operator no imported package registered, with another operator name
    "neuron-op-unregistered": ("RuntimeError: Unknown builtin op: neuron::forward_v2.\n", "missing-import",
                               ("operator", "neuron::forward_v2")),
    # torch's CUDA messages on a host without NVIDIA GPUs
    "cuda-not-compiled": ("AssertionError: Torch not compiled with CUDA enabled\n", "unsupported-config", None),
    # a library refusing a feature on XLA devices, with another feature
    "xla-feature": ("ValueError: Mixed precision fp16 is not supported on TPU.\n", "unsupported-config",
                    ("feature", "Mixed precision fp16")),
    # kube-scheduler's reasons when only placement rules exclude the nodes
    "k8s-selector": ("Warning  FailedScheduling  12s  default-scheduler  0/3 nodes are available: 3 node(s) didn't "
                     "match Pod's node affinity/selector.\n", "k8s-scheduling", None),
    # the collectives' bootstrap without an interface toward its peer, another address
    "bootstrap-no-interface": ("No interface found in the same subnet as remote address fe80::10:2a<40321>\n",
                               "network-config", ("remote", "fe80::10:2a")),
}

# A finding category where one fits: the compiler's instruction limit, neuron_parallel_compile's killed compile and
# a compile-cache entry the file system could not copy.
CATEGORY: dict[str, tuple[str, str]] = {
    "instruction-limit": ("[XTP002] Number of instructions (9100200) is over the threshold (5000000).\n",
                          "compile-failure"),
    "parallel-compile-killed": ("ERROR ||PARALLEL_COMPILE||: parallel compilation with neuronx-cc exited with error."
                                "Received error code: -9\n", "compile-failure"),
    "cache-errno": ("RuntimeError: RunNeuronCCImpl: <class 'OSError'>: [Errno 5] Input/output error: "
                    "'/efs/neuron-compile-cache/neuronxcc-2.15.1.0+abc/MODULE_123+456/model.neff'\n",
                    "compile-cache"),
}

# name -> (text, a cause it must NOT be given)
NEAR_MISSES: dict[str, tuple[str, str]] = {
    # the same words about a Python index, not the runtime's execution
    "index-error": ("IndexError: list index out of range\n", "model-input"),
    # a healthy run that reports the numerical-error check's setting
    "numerical-setting": ("INFO NRT: NEURON_RT_NUMERICAL_ERRORS_VERIFICATION=1\n", "numerical-error"),
    # a warning beside the real failure: the failure decides, the warning is not the answer
    "warning-with-error": (
        "/opt/venv/lib/python3.10/site-packages/torch_xla/core/xla_model.py:1032: DeprecationWarning: "
        "xla_model.xla_device() is deprecated. Use torch_xla.device instead.\n"
        "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
        "RuntimeError: Bad StatusOr access: UNKNOWN: something broke\n", "not-the-failure"),
    # a warning that deprecates nothing
    "plain-warning": ("WARNING: the compile cache is at /var/tmp/neuron-compile-cache\n", "not-the-failure"),
    # a retry that is not the collectives' bootstrap (pip's retries)
    "pip-retry": ("WARNING: Retrying (Retry(total=4)) after connection broken by 'ReadTimeoutError'\n", "peer-late"),
    # apt listing held packages as a fact, not refusing
    "held-listing": ("The following packages have been kept back:\n  aws-neuronx-dkms\n", "package-held"),
    # a missing submodule of an installed package is not a missing dependency
    "submodule-missing": ("ModuleNotFoundError: No module named 'vllm._C'\n", "python-dependency-missing"),
    # a Neuron package asking another for a name is a pairing of Neuron packages, not the script's API
    "neuron-package-pairing": (
        '  File "/opt/venv/lib/python3.10/site-packages/transformers_neuronx/compiler.py", line 31, in <module>\n'
        "    from torch_neuronx import trace_hlo\n"
        "ImportError: cannot import name 'trace_hlo' from 'torch_neuronx' (/opt/venv/lib/python3.10/site-packages/"
        "torch_neuronx/__init__.py)\n", "framework-api-change"),
    # a private torch name is a build for another torch (framework-pin-mismatch), not an API change
    "private-name": ("AttributeError: module 'torch.jit' has no attribute '_script_if_tracing'\n",
                     "framework-api-change"),
    # the scheduler's Neuron resource is the other answer, whatever rules the line also names
    "k8s-insufficient-and-affinity": ("0/4 nodes are available: 2 Insufficient aws.amazon.com/neuron, 2 node(s) "
                                      "didn't match pod affinity rules.\n", "k8s-scheduling"),
    # arithmetic of the user's own code that does not divide is not a parallel degree
    "own-divisibility": ('  File "prepare.py", line 3, in <module>\nValueError: 10 is not divisible by 3\n',
                         "unsupported-config"),
    # the runtime naming an input tensor's size when the load succeeded is no bad input
    "input-size-logged": ("INFO NRT: input_ids size 4096 bytes\n", "model-input"),
    # a compile log that counts its instructions without a limit is no failure
    "instructions-counted": ("INFO: the compiler generated 12000 instructions for sg0000\n", "compile-failure"),
}


@pytest.mark.parametrize("name", sorted(READ))
def test_each_cause_is_read_by_its_grammar(name: str) -> None:
    text, cause, fact = READ[name]
    answer = _answer(text)
    assert answer is not None, name
    assert answer["cause"] == cause, (name, answer["cause"], answer["why"])
    assert answer["category"] is None  # no finding category: explain's own cause
    assert answer["recognised"] is True and answer["ways_out"]
    if fact is not None:
        assert answer["facts"].get(fact[0]) == fact[1], answer["facts"]


@pytest.mark.parametrize("name", sorted(CATEGORY))
def test_a_grammar_with_a_finding_category_answers_with_it(name: str) -> None:
    text, category = CATEGORY[name]
    answer = _answer(text)
    assert answer is not None and answer["category"] == answer["cause"] == category, (name, answer)


@pytest.mark.parametrize("name", sorted(NEAR_MISSES))
def test_a_near_miss_is_not_given_that_cause(name: str) -> None:
    text, cause = NEAR_MISSES[name]
    answer = _answer(text)
    assert answer is None or answer["cause"] != cause, (name, answer)


def test_a_peer_message_gives_way_to_this_ranks_own_error() -> None:
    """A rank that lost its peer after its own failure: its own error (here the loader's) is the answer."""
    text = ("ERROR ENC:ncclBootstrapRecv RX, connection closed by remote peer 10.0.1.7:45123\n"
            "ImportError: libnrt.so.1: cannot open shared object file: No such file or directory\n")
    answer = _answer(text)
    assert answer is not None and answer["cause"] == "tools-missing" and answer["category"] == "tools-missing"
    assert [other["cause"] for other in answer["also"]] == ["peer-failed-first"]
    assert answer["also"][0]["category"] is None


def test_a_package_syntax_error_is_a_python_too_old() -> None:
    """Python's parser failing inside an installed Neuron package: the interpreter is older than the package; a
    SyntaxError in the user's own script is not."""
    text = ('  File "/opt/env/lib/python3.6/site-packages/neuronx_distributed/__init__.py", line 4\n'
            "    if (n := len(x)) > 1:\n         ^\nSyntaxError: invalid syntax\n")
    answer = _answer(text)
    assert answer is not None and answer["cause"] == answer["category"] == "python-unsupported"
    own = _answer('  File "train.py", line 4\n    print "x"\n          ^\nSyntaxError: invalid syntax\n')
    assert own is None or own["cause"] != "python-unsupported"


def test_a_finding_category_is_both_category_and_cause() -> None:
    answer = _answer("RuntimeError: NeuronCore(s) not available - Requested:2 Available:0\n")
    assert answer is not None and answer["category"] == answer["cause"] == "cores-busy"


def test_every_cause_is_documented_and_none_is_a_finding_category() -> None:
    contracts = (DOCS / "contracts.md").read_text(encoding="utf-8")
    report = (DOCS / "report.md").read_text(encoding="utf-8")
    for cause in EXPLAIN_CAUSES:
        assert f"| `{cause}` |" not in contracts.split("## 6. Findings", 1)[1].split("## 7.", 1)[0], cause
        assert f"`{cause}`" in report, f"{cause} is not described in docs/report.md"
    assert "`cause`" in contracts


def test_a_cause_with_a_check_area_runs_it_and_the_others_run_none() -> None:
    assert "devices" in areas_for("device-reset") and "driver" in areas_for("package-repo-key")
    assert areas_for("model-input") == () and areas_for("not-the-failure") == ()


def test_the_cli_answers_an_explain_cause_with_exit_0_and_a_null_category(tmp_path: Path) -> None:
    from neurondoctor.cli.explain_command import run_explain

    log = tmp_path / "rank3.log"
    log.write_text(READ["peer-closed"][0], encoding="utf-8")
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = run_explain(str(log), as_json=True, host=False)
    document = json.loads(out.getvalue())
    assert code == 0 and document["category"] is None and document["cause"] == "peer-failed-first"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = run_explain(str(log), as_json=False, host=False)
    assert code == 0 and out.getvalue().startswith("What broke: peer-failed-first: ")
