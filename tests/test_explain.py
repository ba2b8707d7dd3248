"""`neurondoctor explain` on error texts as users pasted them into the Neuron issue trackers.

Each text is an excerpt of the log in the named report (paths and timestamps as posted); each must come out in
the right category with the next step a user would take. Exit 0 recognised, 3 not, 2 unreadable input.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from neurondoctor.release_data.probe_data import load_error_signatures
from neurondoctor.rules.finding import CATEGORIES
from neurondoctor.rules.probes.canary import classify_failure
from tests.conftest import REPO, cli_env, run_cli

REPORTS = {
    # huggingface/optimum-neuron#698: the compiler's backend in the TGI Neuron image, which lacks libxml2
    "walrus-missing-library": (
        "2024-09-21 16:17:37.000815:  4816  ERROR ||NEURON_CC_WRAPPER||: Failed compilation with ['neuronx-cc', "
        "'compile', '--target=trn1', '--framework=XLA', '/tmp/no-user/neuroncc_compile_workdir/e555d4da-7536-45da-"
        "be1a-6ddf6c3e776d/model.MODULE_a7b0021f88c35fba5c31+39f12043.hlo_module.pb', '--output', '/tmp/no-user/"
        "neuroncc_compile_workdir/e555d4da-7536-45da-be1a-6ddf6c3e776d/model.MODULE_a7b0021f88c35fba5c31+39f12043."
        "neff', '--model-type=transformer', '--auto-cast=none', '--execute-repetition=1', '--verbose=35']: "
        "2024-09-21T16:17:32Z /usr/local/lib/python3.10/dist-packages/neuronxcc/starfish/bin/walrus_driver: error "
        "while loading shared libraries: libxml2.so.2: cannot open shared object file: No such file or directory\n",
        "compile-failure", "`sudo apt-get install -y libxml2`"),
    # aws-neuron/aws-neuron-samples#64: SD 1.5 UNet on a too-small instance
    "compiler-killed-f137": (
        "2023-12-26T08:37:54Z ERROR 26199 [job.WalrusDriver.0]: Backend exited with code -9 and stderr: \n"
        "2023-12-26T08:37:54Z INFO 26191 [root]: Subcommand returned with exitcode=-9\n"
        "2023-12-26T08:37:54Z ERROR 26191 [neuronxcc.driver.CommandDriver]:  An Internal Compiler Error has occurred\n"
        "2023-12-26T08:37:54Z USER 26191 [neuronxcc.driver.CommandDriver]: [F137] neuronx-cc was forcibly killed - "
        "This most commonly occurs due to insufficient system memory. Using a smaller data type, dimensions, batch "
        "size, or a larger instance type may help.\n",
        "compile-failure", "more host memory"),
    # aws-neuron/aws-neuron-sdk#706: OPT 1.3B traced with fp8 on trn1
    "compiler-minus-9": (
        "Traceback (most recent call last):\n  File \"eval_opt.py\", line 610, in <module>\n"
        "    model = torch_neuronx.trace(model, example, compiler_args=['--auto-cast-type', 'fp8_e4m3'])\n"
        "RuntimeError: neuronx-cc failed with -9\n",
        "compile-failure", "more host memory"),
    # aws-neuron/aws-neuron-sdk#679: F.one_hot on the XLA path
    "hlo-unsupported": (
        "RuntimeError: UNIMPLEMENTED: From /job:localservice/replica:0/task:0:\n2 root error(s) found.\n"
        "  (0) UNIMPLEMENTED: \nThe following HLO instructions are not supported by neuronx-cc:\n"
        "================================================================================\n\n"
        "%dynamic-slice = f32[2,128,768] dynamic-slice(f32[2,256,768] %concatenate.61, s64[] %constant.955, "
        "s64[] %constant.956, s64[] %constant.955), dynamic_slice_sizes={2,128,768}\n",
        "unsupported-op", "move it out of the compiled region"),
    # aws-neuron/aws-neuron-sdk#823: a NEFF from neuronx-cc 2.12 on an old runtime (inf2.xlarge)
    "neff-version": (
        "2024-Jan-19 05:03:34.343999 31898:32693 ERROR  NEFF:neff_parse                              NEFF version: "
        "2.0, features: 0x100 are not supported.  Currently supporting: 0x80000000000000ff\n"
        "2024-Jan-19 05:03:34.344048 31898:32693 ERROR  NMGR:kmgr_load_nn_post_metrics               Failed to load "
        "NN: /tmp/tmpfbnn2xkk/hlo_module.neff, err: 10\n",
        "runtime-compiler-mismatch", "aws-neuronx-runtime-lib"),
    # aws-neuron/aws-neuron-sdk#1338: inf2 pods after a scale-down (torch-neuronx 2.9.0.2.13.26312)
    "cores-busy": (
        "2026-May-29 10:12:01.0412 118:118 ERROR  NRT:nrt_allocate_neuron_cores               NeuronCore(s) not "
        "available - Requested:1 Available:0\n"
        "RuntimeError: Neuron runtime cannot be initialized; cannot determine the number of available NeuronCores\n",
        "cores-busy", "neuron-ls"),
    # PyPI's placeholder (docs/measured.md): torch-neuronx installed without the Neuron repository
    "wrong-package": (
        "Traceback (most recent call last):\n  File \"<string>\", line 1, in <module>\n"
        "  File \"/home/ubuntu/venv/lib/python3.10/site-packages/torch_neuronx/__init__.py\", line 1, in <module>\n"
        "ImportError: WRONG PACKAGE. Please install the package from Neuron Repository - "
        "pip.repos.neuron.amazonaws.com\n",
        "wrong-pip-index", "pip.repos.neuron.amazonaws.com"),
    # train-ts / docs/neuron-facts.md §3.3: torch upgraded under torch-xla
    "xlac-undefined-symbol": (
        "  File \"/opt/aws_neuronx_venv_pytorch_2_9/lib/python3.10/site-packages/torch_xla/__init__.py\", line 20, "
        "in <module>\n    import _XLAC\nImportError: /opt/aws_neuronx_venv_pytorch_2_9/lib/python3.10/site-packages/"
        "_XLAC.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN5torch8autograd12VariableInfoC1ERKN2at6TensorE\n",
        "stock-torch-conflict", "torch torch-neuronx is built for"),
    # aws-neuron/aws-neuron-sdk#1012: a loose libneuronxla pin
    "xla-flags": (
        "2024-11-12 18:03:55.000912: F external/xla/xla/parse_flags_from_env.cc:226] Unknown flags in XLA_FLAGS: "
        "--xla_gpu_simplify_all_fp_conversions=false --xla_gpu_force_compilation_parallelism=8\n"
        "Aborted (core dumped)\n",
        "framework-pin-mismatch", "one release"),
    # huggingface/optimum-neuron#619: tp_degree 4 on a trn1.32xlarge
    "collectives-topology": (
        "2024-Jun-02 04:05:36.428977   273:478   ERROR   NRT:nrt_load_collectives                    Unsupported "
        "topology. Supported number of Neuron Cores is 1, 2, 8, 16 or a multiple of 32.  For other configurations, "
        "such as multiples of 2, consider using inf2 instances\n",
        "env-var-misconfig", "1, 2, 8, 16 or 32"),
    # aws-neuron/aws-neuron-samples#96: Llama 3.1 8B at 16k on an inf2.24xlarge
    "device-memory": (
        "  File \"/opt/conda/lib/python3.10/site-packages/transformers_neuronx/compiler.py\", line 444, in load\n"
        "    self.model.load()\nRuntimeError: nrt_load_collectives status=4 message=\"Allocation Failure\"\n",
        "resource", "more NeuronCores"),
    # aws-neuron/aws-neuron-sdk#1000: an internal compiler error in an NKI kernel
    "internal-compiler-error": (
        "[F134] neuronx-cc terminated abnormally - Please open a support ticket at "
        "https://github.com/aws-neuron/aws-neuron-sdk/issues/new\nTraceback (most recent call last):\n",
        "compile-failure", "newest neuronx-cc"),
    # aws-neuron/aws-neuron-sdk#293: wav2vec2 on Inf1 (torch-neuron)
    "inf1-ops-not-compiled": (
        "INFO:Neuron:There are 5 ops of 4 different types in the TorchScript that are not compiled by neuron-cc: "
        "aten::_weight_norm, aten::index_put, aten::bitwise_not, aten::cumsum, (For more information see "
        "https://github.com/aws/aws-neuron-sdk/blob/master/release-notes/neuron-cc-ops/neuron-cc-ops-pytorch.md)\n",
        "unsupported-op", "replace"),
    # compiler/error-codes/EVRF056 (the documented message; neuronx-cc 2.24.5133.0, Neuron 2.29.0, added the check)
    "gather-out-of-bounds": (
        "ERROR 4471 [neuronx-cc]: [NCC_EVRF056] Operation gather encountered out of bound indices. Operation iota "
        "produces index values in range [0, 4096), while the operand dimension only allows indices in [0, 2048). "
        "This may indicate misconfigured model parameters (e.g., max_position_embeddings < sequence_length).\n",
        "compile-failure", "max_position_embeddings"),
    # the neuron-caching page's example of a rerun after a failed (or interrupted) compile
    "cached-failed-neff": (
        "INFO ||NCC_WRAPPER||: Got a cached failed neff at /var/tmp/neuron-compile-cache/neuronxcc-2.8.0.25+a3ad0f342/"
        "MODULE_12486829708343293975+d41d8cd9/model.neff. Will skip compilation, please set --retry_failed_compilation "
        "for recompilation.\n",
        "compile-cache", "cache prune --failed"),
    # users' notes: a killed compile's lock, waited on once a minute for hours with no neuronx-cc alive
    "stale-compile-lock": (
        "[INFO]: Another process must be compiling MODULE_18108742649528384371+839ddec0, been waiting for: 186.0 "
        "minutes\n[INFO]: Another process must be compiling MODULE_18108742649528384371+839ddec0, been waiting for: "
        "187.0 minutes\n",
        "compile-cache", "cache prune --stale-locks"),
    # measured: a CUDA script's AdamW(fused=True) stepped on the XLA device (torch 2.9.0, torch-xla 2.9.0)
    "fused-optimizer": (
        "  File \"train.py\", line 88, in <module>\n    optimizer.step()\nRuntimeError: `fused=True` requires all "
        "the params to be floating point Tensors of supported devices: ['mps', 'cuda', 'xpu', 'hpu', 'cpu', 'mtia', "
        "'privateuseone'] but torch.float32 and xla\n",
        "unsupported-op", "foreach=True"),
    # aws-neuron/aws-neuron-sdk#601: neuronx-cc 2.2's wording of a cached failed compile
    "cached-failed-graph-2-2": (
        "2022-11-22 19:07:46.000353: ERROR ||NCC_WRAPPER||: There was a compilation error for this graph in the "
        "previous run. Returning with the errored graph at /var/tmp/neuron-compile-cache/USER_neuroncc-2.2.0.73+"
        "0af5a171c/MODULE_13878571457055826912/MODULE_0_SyncTensorsGraph.30_13878571457055826912_ip-10-1-184-157-"
        "29418192-1467770-5ee13d96e785e/16f779da-6555-4514-a573-bd6a9c65ad20/MODULE_0_SyncTensorsGraph.30_"
        "13878571457055826912_ip-10-1-184-157-29418192-1467770-5ee13d96e785e.neff .\n To fix the error:\n 1. Raise "
        "the error with the AWS Neuron team.\n 2. If the error is already fixed, you can retry compilation by passing "
        "--retry_failed_compilation in NEURON_CC_FLAGS\n",
        "compile-cache", "cache prune --failed"),
    # aws-neuron/aws-neuron-sdk#806: the compile of MiniGPT-4's ViT, its terminal closed
    "compiler-sighup": (
        "2023-12-27 22:27:36.717702: F ./tensorflow/compiler/xla/xla_client/debug_macros.h:27] Non-OK-status: "
        "status.status() status: INTERNAL: CompileImpl: error condition error != 0: <class 'subprocess."
        "CalledProcessError'>: Command '' died with <Signals.SIGHUP: 1>.\n",
        "compile-failure", "tmux"),
    # aws-neuron/aws-neuron-sdk#690: Stable Diffusion 2 on neuronx-cc 2.6, the compiler's traceback then its exit
    "compiler-failed-with-1": (
        "2023-06-15T12:11:12Z ERROR 85724 [neuronx-cc]:   File \"neuronxcc/driver/jobs/WalrusDriver.py\", line 706, "
        "in neuronxcc.driver.jobs.WalrusDriver.WalrusDriver.runSingleInput\n"
        "2023-06-15T12:11:12Z ERROR 85724 [neuronx-cc]: Version information:\n"
        "2023-06-15T12:11:12Z ERROR 85724 [neuronx-cc]:   NeuronX Compiler version 2.6.0.19+3d819e565\n"
        "RuntimeError: neuronx-cc failed with 1\n",
        "compile-failure", "log-neuron-cc.txt"),
    # aws-neuron/aws-neuron-sdk#819: a graph too large for one compile
    "too-many-instructions": (
        "Compiler generated too many instructions (6888787). This maybe due to a failure in parallelism extraction "
        "by the tensorizer.\n",
        "compile-failure", "mark_step"),
    # aws-neuron/aws-neuron-sdk#647: dpkg's lines after the driver's DKMS build failed (kernel 5.19, driver 2.8.4.0)
    "dkms-postinst-failed": (
        "Errors were encountered while processing:\ndpkg: error processing package aws-neuronx-dkms (--configure):\n"
        " installed aws-neuronx-dkms package post-installation script subprocess returned error exit status 10\n",
        "dkms-build", "sudo dpkg --configure -a"),
    # A dnf install of aws-neuronx-dkms on a host without Internet access, as the EKS and ECS images' scripts
    # describe it (amazon-eks-ami neuron-package-install.sh, amazon-ecs-ami neuron-inf1-downgrade.sh: the install
    # script's `update-pciids` hangs), in wget's words (the update-pciids of pciutils fetches with curl or wget)
    "update-pciids-without-internet": (
        "  Running scriptlet: aws-neuronx-dkms-2.21.37.0-dkms.noarch                       1/1\n"
        "--2026-07-14 09:12:01--  https://pci-ids.ucw.cz/v2.2/pci.ids.gz\n"
        "Resolving pci-ids.ucw.cz (pci-ids.ucw.cz)... failed: Temporary failure in name resolution.\n",
        "dkms-build", "no-op `update-pciids`"),
    # aws-neuron/aws-neuron-sdk#947
    "tensorizer-internal-error": (
        "Compilation failure - Internal tensorizer error: NeuronValueNumbering:insertAtEnd()\n",
        "compile-failure", "newest neuronx-cc"),
}


def _explain(tmp_path: Path, text: str, *extra: str) -> tuple[int, dict[str, object]]:
    log = tmp_path / "log-neuron-cc.txt"
    log.write_text(text)
    result = run_cli(["explain", str(log), "--json", *extra])
    return result.returncode, json.loads(result.stdout)


@pytest.mark.parametrize("name", sorted(REPORTS))
def test_real_error_texts_get_their_category_and_next_step(tmp_path: Path, name: str) -> None:
    text, category, next_step = REPORTS[name]
    code, document = _explain(tmp_path, text)
    assert code == 0 and document["category"] == category, document
    assert any(next_step in way for way in document["ways_out"]), document["ways_out"]  # type: ignore[attr-defined]


def test_an_operator_gets_the_three_ways_out(tmp_path: Path) -> None:
    """A boolean-mask assignment that neuronx-cc could not lower: the op table's rewrite, moving it out of the
    compiled region, and what the data says about a newer compiler (nothing recorded: it says so)."""
    text = ("NeuronX Compiler version 2.21.33363.0+82129205\n"
            "ERROR [NCC_EVRF001] Operator aten::index_put_ (bool mask, accumulate=False) is not supported\n")
    code, document = _explain(tmp_path, text)
    assert code == 0 and (document["category"], document["op"], document["variant"]) == (
        "unsupported-op", "aten::index_put_", "bool mask")
    ways = document["ways_out"]
    assert len(ways) == 3 and ways[0].startswith("replace it: x = torch.where(mask, v, x)")  # type: ignore[index]
    assert "runs on the CPU between compiled stages" in ways[1]  # type: ignore[index]
    assert "records no neuronx-cc release that adds aten::index_put_ (this log names 2.21.33363.0)" in ways[2]  # type: ignore[index]
    assert document["compiler"] == "2.21.33363.0"


@pytest.mark.parametrize(("compiler", "says"), [
    ("2.3.0.4", "a newer neuronx-cc: 2.4.0.21 (Neuron 2.7.0) adds it"),
    ("2.5.0.28", "not a newer neuronx-cc: 2.4.0.21 (Neuron 2.7.0) already lowers it"),
])
def test_a_newer_compiler_is_offered_only_to_an_older_one(tmp_path: Path, compiler: str, says: str) -> None:
    """compiler-fixes.json: neuronx-cc 2.4.0.21 added SelectAndScatter (max pooling's backward). A log from an
    older compiler gets the upgrade; a log from a newer one is told the upgrade is not the way out."""
    text = (f"NeuronX Compiler version {compiler}\nThe following HLO instructions are not supported by neuronx-cc:\n"
            "%select-and-scatter.12 = f32[4,8,32,32] select-and-scatter(f32[4,8,32,32] %p0, f32[4,8,16,16] %p1, "
            "f32[] %c), window={size=1x1x2x2 stride=1x1x2x2}\n")
    code, document = _explain(tmp_path, text)
    assert code == 0 and document["op"] == "hlo:select-and-scatter" and document["compiler"] == compiler
    ways = document["ways_out"]
    assert isinstance(ways, list) and says in ways[2] and "SelectAndScatter" in ways[2]


def test_text_output_from_stdin() -> None:
    """A traceback pasted on stdin (no argument, or `-`)."""
    for args in (["explain"], ["explain", "-"]):
        done = subprocess.run([sys.executable, "-m", "neurondoctor", *args], input=REPORTS["cores-busy"][0].encode(),
                              capture_output=True, env=cli_env(), cwd=str(REPO), timeout=60)
        assert done.returncode == 0, done.stderr
        shown = done.stdout.decode()
        assert shown.startswith("What broke: cores-busy: another process holds the NeuronCores\n")
        assert "Ways out:\n  1. find the process that holds the NeuronCores" in shown


def test_unrecognised_unreadable_and_finding_ids(tmp_path: Path) -> None:
    code, document = _explain(tmp_path, "Traceback (most recent call last):\nKeyError: 'labels'\n")
    assert code == 3 and {key: document[key] for key in ("category", "op", "variant", "ways_out", "recognised")} == {
        "category": None, "op": None, "variant": None, "ways_out": [], "recognised": False}
    assert document["read_as"] == "a Python KeyError: 'labels'" and document["next"] == "neurondoctor check"
    garbage = tmp_path / "binary.log"
    garbage.write_bytes(b"\xff\xfe\x00 NeuronCore(s) not available \x80\n")
    assert run_cli(["explain", str(garbage)]).returncode == 0
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    refused = run_cli(["explain", str(fifo)], timeout=30)
    assert refused.returncode == 2 and refused.stderr.startswith("error: ") and "not a regular file" in refused.stderr
    missing = run_cli(["explain", str(tmp_path / "none.txt")])
    assert missing.returncode == 2 and len(missing.stderr.splitlines()) == 1
    finding = run_cli(["explain", "ND-TORCH-001", "--json"])
    assert finding.returncode == 0
    assert json.loads(finding.stdout)["category"] == "stock-torch-conflict"
    assert run_cli(["explain", "ND-NOPE-999"]).returncode == 3


def test_a_long_log_is_read_from_its_end(tmp_path: Path) -> None:
    """40 MiB of compiler progress before the error: the last 8 MiB are read, and the error is there."""
    log = tmp_path / "log-neuron-cc.txt"
    with log.open("w") as handle:
        for _ in range(40 * 1024):
            handle.write("2026-10-20T10:00:00Z INFO 1234 [root]: pass in progress ....." + "." * 960 + "\n")
        handle.write(REPORTS["compiler-minus-9"][0])
    result = run_cli(["explain", str(log), "--json"])
    assert result.returncode == 0 and json.loads(result.stdout)["category"] == "compile-failure"


def test_a_missing_library_names_the_binary_and_the_library(tmp_path: Path) -> None:
    code, document = _explain(tmp_path, REPORTS["walrus-missing-library"][0])
    assert code == 0 and document["detail"] == (
        "walrus_driver needs libxml2.so.2, which is not installed on this machine or in this image")
    other = REPORTS["walrus-missing-library"][0].replace("libxml2.so.2", "libfoo.so.7")
    code, document = _explain(tmp_path, other)
    assert document["ways_out"][0].startswith("install the package that holds it: `apt-file search libfoo.so.7`")


@pytest.mark.parametrize(("cause", "category"), [
    ("2023-01-01T00:00:00Z ERROR 1 [neuronx-cc]: [NCC_EVRF001] Operator 'Sort' is not supported\n", "unsupported-op"),
    ("nrt_execute status=1201\n", "hardware-error"),
    ("[F137] neuronx-cc was forcibly killed - This most commonly occurs due to insufficient system memory.\n",
     "compile-failure"),
])
def test_the_internal_error_banner_never_hides_the_cause_printed_beside_it(tmp_path: Path, cause: str,
                                                                            category: str) -> None:
    """neuronx-cc prints `An Internal Compiler Error has occurred` above many causes (an operator it cannot lower,
    the OOM killer): the banner explains a log only when nothing more specific in it does."""
    banner = ("2023-12-26T08:37:54Z ERROR 26191 [neuronxcc.driver.CommandDriver]:  An Internal Compiler Error has "
              "occurred\n")
    code, document = _explain(tmp_path, banner + cause + "RuntimeError: neuronx-cc failed with 1\n")
    assert code == 0 and document["category"] == category, document
    assert "internal compiler error" not in str(document["why"]), document
    assert classify_failure("compile", banner + cause, load_error_signatures())[0] == category
    code, alone = _explain(tmp_path, banner)
    assert code == 0 and alone["why"] == "an internal compiler error"



def test_every_category_and_way_of_the_release_data_is_one_the_contract_lists() -> None:
    """Signatures, runtime statuses and compiler codes all name a category of the closed list (docs/contracts.md)
    and give at least one way out (an operator's come from the op table), each code once."""
    signatures = load_error_signatures()
    entries = [*signatures.signatures, *signatures.runtime_statuses, *signatures.compiler_codes]
    assert {entry.category for entry in entries} <= CATEGORIES
    assert all(entry.ways_out or entry.category == "unsupported-op" for entry in entries)
    codes = [entry.code for entry in signatures.compiler_codes]
    assert len(codes) == len(set(codes)) == 60


@pytest.mark.parametrize(("line", "category", "detail"), [
    # as neuronx-cc prints it (quoted in public notes of a trn2 collectives benchmark, 2026)
    ("[ERROR] [NCC_EOOM001] Maximum peak HBM usage of 32.00GB exceeds HBM limit of 24.00GB for Trn2.",
     "resource", "the graph needs 32.00 GB of HBM at its peak; a NeuronCore on Trn2 has 24.00 GB (8.00 GB short)"),
    ("2024-01-01T00:00:00Z ERROR 7 [neuronx-cc]: [NCC_EMOD025] Dynamic shape is not supported.", "dynamic-shape",
     None),
    ("[ERROR] [NCC_EVRF004] Complex data types are not supported on the Neuron device.", "unsupported-op", None),
    ("[ERROR] [NCC_EXTP004] The number of instructions generated exceeds the limit.", "compile-failure", None),
    ("[ERROR] [NCC_EARG001] Unsupported Logical Neuron Core (LNC) configuration.", "env-var-misconfig", None),
    ("[ERROR] [NCC_EVRF065] NKI kernel was traced with an unsupported NKI version.", "framework-pin-mismatch", None),
])
def test_a_documented_compiler_code_is_explained_by_the_compilers_table(tmp_path: Path, line: str, category: str,
                                                                        detail: object) -> None:
    code, document = _explain(tmp_path, line + "\nRuntimeError: neuronx-cc failed with 70\n")
    assert code == 0 and document["category"] == category, document
    assert document["detail"] == detail
    assert str(document["source"]).startswith("compiler/error-codes/index.rst")
    assert classify_failure("compile", line, load_error_signatures())[0] == category


def test_an_undocumented_compiler_code_is_left_to_the_banner_or_unexplained(tmp_path: Path) -> None:
    """NCC_ILLC059 is in no table: on its own it is not guessed at; in the internal-error bracket it is one."""
    code, _ = _explain(tmp_path, "[NCC_ILLC059] Could not find MemoryLocation\n")
    assert code == 3
    code, document = _explain(tmp_path, "[INTERNAL_ERROR] [NCC_ILLC059] Could not find MemoryLocation named "
                                        "inst__I-5-0:send_k_buf on core 1\n")  # aws-neuron-sdk#1352
    assert code == 0 and document["why"] == "an internal compiler error"


def test_a_neff_of_another_architecture_is_a_runtime_compiler_mismatch(tmp_path: Path) -> None:
    """aws-neuron-sdk#1259: a model compiled for Trn1 loaded on a Trn2; the runtime refuses it and names
    NEURON_RT_ALLOW_LEGACY_NEFF. An environment dump that merely lists the variable is not that error."""
    code, document = _explain(tmp_path, "Loading a NEFF compiled for a different arch is not allowed, NEFF arch: v2, "
                                        "instance arch: v3\nTo override, set NEURON_RT_ALLOW_LEGACY_NEFF=1 and "
                                        "restart.\n")
    assert code == 0 and document["category"] == "runtime-compiler-mismatch", document
    assert "--target trn2" in document["ways_out"][0]  # type: ignore[index]
    code, _ = _explain(tmp_path, "ERROR   NRT:nrt_infodump      NEURON_RT_ALLOW_LEGACY_NEFF=1\n")
    assert code == 3
