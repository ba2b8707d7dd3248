"""The readers of `explain`, one per kind of message (neurondoctor/rules/explain_readers/): what each extracts and
what the rules make of it.

Each failure text is either a real text from the named report (quoted as posted, trimmed to its lines) or the
grammar of its source as that source writes it (pip's, apt's, dnf's, glibc's, dkms's, bash's, the runtime's
messages); beside each, a near miss that must not be read as that failure: the same reader on a healthy or
unrelated line.
"""

from __future__ import annotations

from typing import Optional

import pytest

from neurondoctor.release_data.probe_data import load_compiler_fixes, load_error_signatures, load_op_support
from neurondoctor.rules.explain_readers import Message, read_message
from neurondoctor.rules.explain_readers.causes import first_cause
from neurondoctor.rules.explain_readers.describe import describe
from neurondoctor.rules.explain_readers.message import normalise
from neurondoctor.rules.probes.error_explanation import explain_message

# name -> (text, clue kind, facts it must hold, category the rules give or None)
CASES: dict[str, tuple[str, str, dict[str, str], Optional[str]]] = {
    # --- Python tracebacks (the traceback module's format)
    "no-module-in-venv": (
        "Traceback (most recent call last):\n"
        '  File "/home/ubuntu/aws_neuron_venv/lib/python3.10/site-packages/optimum/neuron/__init__.py", line 3, in '
        "<module>\n    import torch_neuronx\nModuleNotFoundError: No module named 'torch_neuronx'\n",
        "python-exception", {"type": "ModuleNotFoundError", "module": "torch_neuronx", "package": "torch-neuronx",
                             "environment": "/home/ubuntu/aws_neuron_venv"}, "framework-missing"),
    # near miss: a module that is no Neuron package is no Neuron finding category; explain names its own cause, a
    # dependency of the job's that the environment lacks (explain_causes.py)
    "no-module-other": (
        "ModuleNotFoundError: No module named 'pandas'\n", "python-exception", {"module": "pandas"},
        "python-dependency-missing"),
    # transformers-neuronx#33: the traceback's frames name the environment (lib64) and the package
    "cannot-import-from-libneuronxla": (
        "Traceback (most recent call last):\n"
        '  File "/home/ssm-user/aws_neuron_venv_pytorch/lib64/python3.7/site-packages/transformers_neuronx/'
        'compiler.py", line 31, in <module>\n    from libneuronxla import neuron_xla_compile\n'
        "ImportError: cannot import name 'neuron_xla_compile' from 'libneuronxla' (/home/ssm-user/"
        "aws_neuron_venv_pytorch/lib64/python3.7/site-packages/libneuronxla/__init__.py)\n",
        "python-exception", {"type": "ImportError", "module": "libneuronxla", "package": "libneuronxla",
                             "environment": "/home/ssm-user/aws_neuron_venv_pytorch"}, None),
    "no-device-runtime-error": ("RuntimeError: No neuron device found\n", "no-device", {}, "device-missing"),
    "log-level-is-no-exception": (  # near miss: `ERROR:` is a log level, not a Python exception
        "ERROR: something went wrong\n", "", {}, None),
    # --- pip (pip/_internal/resolution/resolvelib/factory.py's words)
    "pip-none": (
        "ERROR: Could not find a version that satisfies the requirement torch-neuronx (from versions: none)\n"
        "ERROR: No matching distribution found for torch-neuronx\n",
        "pip-no-distribution", {"package": "torch-neuronx", "versions": "none"}, "wrong-pip-index"),
    "pip-none-with-neuron-index": (
        "Looking in indexes: https://pypi.org/simple, https://pip.repos.neuron.amazonaws.com\n"
        "ERROR: Could not find a version that satisfies the requirement neuronx-cc==2.* (from versions: none)\n",
        "pip-no-distribution", {"package": "neuronx-cc", "specifier": "==2.*"}, "python-unsupported"),
    "pip-none-not-neuron": (  # near miss (Amblyopius/Stable-Diffusion-ONNX-FP16#44): not a Neuron package
        "Looking in indexes: https://pypi.org/simple, https://download.pytorch.org/whl/nightly/cpu\n"
        "ERROR: Could not find a version that satisfies the requirement torch (from versions: none)\n"
        "ERROR: No matching distribution found for torch\n",
        "pip-no-distribution", {"package": "torch", "versions": "none"}, None),
    "pip-requires-python": (
        "ERROR: Package 'neuronx-distributed' requires a different Python: 3.8.10 not in '>=3.9'\n",
        "pip-python", {"package": "neuronx-distributed", "python": "3.8.10", "requires": ">=3.9"},
        "python-unsupported"),
    "pip-conflict": (
        "ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. "
        "This behaviour is the source of the following dependency conflicts.\n"
        "torch-neuronx 2.9.0.2.15.32035 requires torch==2.9.*, but you have torch 2.10.0+cu128 which is "
        "incompatible.\n",
        "pip-conflict", {"package": "torch-neuronx", "wants": "torch", "has": "2.10.0+cu128"},
        "stock-torch-conflict"),
    "pip-conflict-other": (  # near miss: a conflict between packages that are not Neuron's
        "requests 2.31.0 requires urllib3<3,>=1.21.1, but you have urllib3 0.9 which is incompatible.\n",
        "pip-conflict", {"package": "requests"}, None),
    # --- apt / dnf
    # aws-neuron-sdk#452: the Neuron repository was not configured; adding it fixed the install
    "apt-no-dkms": ("E: Unable to locate package aws-neuron-dkms\n", "os-package-missing",
                    {"tool": "apt", "package": "aws-neuron-dkms"}, "driver-missing"),
    "apt-no-runtime": ("E: Unable to locate package aws-neuronx-runtime-lib\n", "os-package-missing",
                       {"package": "aws-neuronx-runtime-lib"}, "tools-missing"),
    "apt-no-other": ("E: Unable to locate package htop\n", "os-package-missing", {"package": "htop"}, None),
    "dnf-no-match": ("No match for argument: aws-neuronx-dkms\nError: Unable to find a match: aws-neuronx-dkms\n",
                     "os-package-missing", {"tool": "dnf", "package": "aws-neuronx-dkms"}, "driver-missing"),
    "apt-version": ("E: Version '2.99.0.0' for 'aws-neuronx-dkms' was not found\n", "os-package-version",
                    {"package": "aws-neuronx-dkms", "version": "2.99.0.0"}, "driver-missing"),
    # --- the dynamic loader (glibc's messages)
    # pytorch/xla#4150: a wheel built on a newer glibc than Ubuntu 18.04's
    "glibc-too-old": (
        "ImportError: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.28' not found (required by /opt/conda/lib/"
        "python3.7/site-packages/torch_xla/lib/libxla_computation_client.so)\n",
        "symbol-version-missing", {"symbol_version": "GLIBC_2.28"}, "os-unsupported"),
    "libnrt-missing": ("OSError: libnrt.so.1: cannot open shared object file: No such file or directory\n",
                       "library-missing", {"library": "libnrt.so.1"}, "tools-missing"),
    "cuda-library-missing": (  # near miss (aws-neuron-sdk#602): TensorFlow's optional CUDA library on a CPU host
        "2022-11-22 18:43:24.528353: W tensorflow/compiler/xla/stream_executor/platform/default/dso_loader.cc:64] "
        "Could not load dynamic library 'libcudart.so.11.0'; dlerror: libcudart.so.11.0: cannot open shared object "
        "file: No such file or directory\n", "library-missing", {"library": "libcudart.so.11.0"}, None),
    # --- DKMS and dpkg (aws-neuron-sdk#843: the driver's build on a kernel newer than it)
    "dkms-bad-status": (
        "amazon-ebs.linux: Building initial module for 6.5.0-1015-aws\n"
        "amazon-ebs.linux: Error! Bad return status for module build on kernel: 6.5.0-1015-aws (x86_64)\n"
        "amazon-ebs.linux: Consult /var/lib/dkms/aws-neuronx/2.15.9.0/build/make.log for more information.\n",
        "dkms-build-failed", {"kernel": "6.5.0-1015-aws", "driver": "2.15.9.0"}, "dkms-build"),
    "dkms-headers": ("Error! Your kernel headers for kernel 6.8.0-1015-aws cannot be found.\n", "dkms-headers",
                     {"kernel": "6.8.0-1015-aws"}, "dkms-build"),
    "make-log-error": (
        "/var/lib/dkms/aws-neuronx/2.8.4.0/build/neuron_dma.c:412:9: error: implicit declaration of function "
        "'dma_set_mask'\nmake: *** [Makefile:12: all] Error 2\n",
        "dkms-compile-error", {"file": "neuron_dma.c", "driver": "2.8.4.0"}, "dkms-build"),
    # --- the shell (aws-neuron-sdk#447: /opt/aws/neuron/bin was not on PATH; retyped without the colon)
    "neuron-ls-not-found": ("neuron-ls command not found\n", "command-not-found", {"command": "neuron-ls"},
                            "tools-missing"),
    "bash-neuron-top": ("bash: neuron-top: command not found\n", "command-not-found", {"command": "neuron-top"},
                        "tools-missing"),
    # compiler/neuronx-cc/how-to-generate-neff.rst, Common issues: `neuronx-cc: command not found` means the
    # environment that holds the compiler is not active: a command not on PATH (the contract's tools-missing)
    "zsh-compiler": ("zsh: command not found: neuronx-cc\n", "command-not-found", {"command": "neuronx-cc"},
                     "tools-missing"),
    "bash-compiler": ("neuronx-cc: command not found\n", "command-not-found", {"command": "neuronx-cc"},
                      "tools-missing"),
    # the neuron-profile user guide (archive/profiler/neuron-profile-user-guide.rst, "InfluxDB not installed"):
    # `neuron-profile view` runs InfluxDB's `influx`, a Go program's exec error names it
    "go-exec-helper-of-a-neuron-tool": (
        "$ neuron-profile view -n file.neff -s profile.ntff\n"
        "ERRO[0001] To install influxdb, go to https://portal.influxdata.com/downloads/ and follow the instructions "
        "there\ninfluxdb not setup correctly: exec: \"influx\": executable file not found in $PATH\n",
        "command-not-found", {"command": "influx", "needed_by": "neuron-profile"}, "tools-missing"),
    # the same guide's second message: InfluxDB installed but not started or not set up
    "neuron-profile-influx-token": (
        "$ neuron-profile view -n file.neff -s profile.ntff\nERRO[0000]\ninfluxdb token not setup correctly: exit "
        "status 1\nTry executing \"systemctl start influxdb\" and \"influx setup\"\n", "profiler-database-unready",
        {"needed_by": "neuron-profile"}, "tools-missing"),
    # near miss: a database's own "not setup correctly" with no InfluxDB named
    "other-not-setup": ("postgres replication not setup correctly\n", "", {}, None),
    # near miss: the same Go error from a program that is not a Neuron tool says nothing about Neuron
    "go-exec-helper-of-another-tool": (
        "$ terraform plan\nError: exec: \"aws\": executable file not found in $PATH\n", "command-not-found",
        {"command": "aws", "needed_by": "terraform"}, None),
    # near miss (aws-neuron-sdk#89): a tool the container lacks that says nothing about Neuron
    "sh-lspci": ("sh: lspci: command not found\n", "command-not-found", {"command": "lspci"}, None),
    # --- the Neuron runtime's log
    # aws-neuron-sdk#1338: inf2 pods after a scale-down, as one user wrote it and as the runtime logs it
    "logical-cores": ("Logical Neuron Core(s) not available - Requested:1 Available:0\n", "cores-unavailable",
                      {"requested": "1", "available": "0"}, "cores-busy"),
    "cores-with-prefix": (
        "2026-May-29 10:12:01.0412 118:118 ERROR  NRT:nrt_allocate_neuron_cores               NeuronCore(s) not "
        "available - Requested:2 Available:1\n", "cores-unavailable",
        {"function": "nrt_allocate_neuron_cores", "requested": "2", "available": "1"}, "cores-busy"),
    # aws-neuron-sdk#493: the Inf1 runtime daemon, in its own spelling
    "insufficent-ncs": (
        "RuntimeError: NeuronDevice::process_nrtd_response: Context=NRTD_CTX_INITIALIZE NRTD response code "
        "'NERR_RESOURCE_NC' (9) There were insufficent NCs for the requested operation\n",
        "cores-unavailable", {}, "cores-busy"),
    "failed-to-open": ("Failed to open /dev/neuron0\n", "device-open-failed", {"device": "0"}, "device-missing"),
    "open-permission": ("ERROR TDRV:tdrv_init_mla_phase1 Failed to open /dev/neuron3: Permission denied\n",
                        "device-open-failed", {"device": "3", "errno": "permission denied"}, "device-permission"),
    # aws-neuron-sdk#89: the Neuron 1.x runtime in a container
    "device-index": ("nrtd[1]: [TDRV:tdrv_init_mla_phase1] Could not open the device index:0\n",
                     "device-open-failed", {"device": "0", "function": "tdrv_init_mla_phase1"}, "device-missing"),
    "cores-available-healthy": (  # near miss: a healthy line naming available cores
        "INFO NRT:nrt_allocate_neuron_cores Instance info:: device count:1 cores per device:2 architecture:TRN\n",
        "", {}, None),
    # --- containers and Kubernetes (aws-neuron-sdk#396: `1 Insufficient aws.amazon.com/neuron`; the typo)
    "k8s-insufficient": ("0/3 nodes are available: 3 Insufficient aws.amazon.com/neuron.\n", "k8s-insufficient",
                         {"resource": "aws.amazon.com/neuron"}, "device-missing"),
    "k8s-insufficent-typo": ("0/1 nodes are available: 1 insufficent aws.amazon.com/neuroncore\n",
                             "k8s-insufficient", {"resource": "aws.amazon.com/neuroncore"}, "device-missing"),
    "k8s-insufficient-cpu": ("0/3 nodes are available: 3 Insufficient cpu.\n", "", {}, None),  # near miss
    "docker-device": (
        "docker: Error response from daemon: error gathering device information while adding custom device "
        "\"/dev/neuron4\": no such file or directory.\n", "container-device-missing", {"device": "/dev/neuron4"},
        "device-missing"),
    # the container troubleshooting guide (deploy/troubleshooting.rst, "Contiguous Device ID's")
    "cores-not-contiguous": (
        "2022-Sep-08 23:00:05.0667 8:8 ERROR NRT:nrt_allocate_neuron_cores Neuron cores are not contiguous\n",
        "cores-not-contiguous", {"function": "nrt_allocate_neuron_cores"}, "device-missing"),
    # near miss: "not contiguous" about a tensor is the model's, not the runtime's
    "tensor-not-contiguous": ("RuntimeError: view size is not compatible: the tensor is not contiguous\n", "", {},
                              None),
    # --- the dynamic loader's own assertion: the training troubleshooting guide
    # (archive/nxd-training/training-troubleshooting.rst, "Assertion `listp->slotinfo[cnt].gen <= GL(dl_tls_generation)'
    # failed"): a glibc 2.26 bug, an OS with glibc 2.27 is the way out
    "ld-so-tls-assertion": (
        "INFO: Inconsistency detected by ld.so: ../elf/dl-tls.c: 488: _dl_allocate_tls_init: Assertion "
        "`listp->slotinfo[cnt].gen <= GL(dl_tls_generation)' failed!\n", "loader-assertion",
        {"file": "../elf/dl-tls.c", "function": "_dl_allocate_tls_init"}, "os-unsupported"),
    # near miss: the loader's check in another part of it is not the documented glibc bug
    "ld-so-other-assertion": (
        "Inconsistency detected by ld.so: dl-close.c: 811: _dl_close: Assertion `map->l_init_called' failed!\n",
        "loader-assertion", {"file": "dl-close.c", "function": "_dl_close"}, None),
    # --- the compilers' error log: aws-neuron-sdk#664 (an internal error of neuronx-cc, fixed by 2.6)
    "neuronx-cc-artifacts-footer": (
        "2023-05-02T03:26:18Z ERROR 25325 [neuronx-cc]: MXNet not available\n"
        "2023-05-02T03:26:18Z ERROR 25325 [neuronx-cc]: Artifacts stored in: /home/ubuntu/xla/neuronxcc-vspf59fi\n",
        "compiler-error-log", {"compiler": "neuronx-cc", "artifacts": "/home/ubuntu/xla/neuronxcc-vspf59fi"},
        "compile-failure"),
    # near miss: another program's artifacts line names no compiler
    "other-artifacts-line": ("Build finished. Artifacts stored in: /tmp/out\n", "", {}, None),
    # the torch-neuronx graph partitioner application note (torch-neuronx-graph-partitioner-app-note.rst): a
    # CPU-placed sort makes 3 subgraphs where max_subgraph_count=2
    "partitioner-subgraphs": (
        "ValueError: The partitioner has found 3 subgraphs which exceeds the specified max subgraph count of 2.\n",
        "partitioner-subgraphs", {"subgraphs": "3", "max_subgraph_count": "2"}, "cpu-fallback"),
    # near miss: a count within the limit, said by something else, is no partitioner failure
    "subgraph-count-logged": ("INFO: compiled 2 subgraphs (max subgraph count 4)\n", "", {}, None),
    # the torch-neuron troubleshooting guide (archive/torch-neuron/troubleshooting-guide.rst, 2GB protobuf limit)
    "graphdef-above-2gb": (
        "E google.protobuf.message.DecodeError: Error parsing message with type 'tensorflow.GraphDef'\n",
        "graph-proto-unreadable", {}, "compile-failure"),
    # near miss: another message type protobuf cannot parse says nothing about a compiled graph
    "other-proto": ("google.protobuf.message.DecodeError: Error parsing message with type 'onnx.ModelProto'\n", "",
                    {}, None),
    # the MXNet-Neuron troubleshooting guide (archive/mxnet-neuron/troubleshooting-guide.rst): neuron-rtd not running
    "neuron-rtd-not-running": (
        "[19:56:23] src/operator/subgraph/inferentia/./inferentia_util.h:218: Check failed: status.ok() Failed to "
        "create NeuronCore Group with GRPC Error. Status Error: 14, Error message: \"Connect Failed\"\n",
        "runtime-daemon-unreachable", {}, "tools-missing"),
    # near miss: a connection to the daemon that broke is not a daemon that is absent
    "neuron-rtd-socket-closed": (
        "Failed to create NeuronCore Group with GRPC Error. Status Error: 14, Error message: \"Socket closed\"\n",
        "", {}, None),
    # the NxD Training installation guide (archive/nxd-training/installation_guide.rst, Common failures during
    # installation, "Torch vision version error"): torchvision's operators are not in this torch's registry
    "torchvision-ops-not-registered": (
        "ValueError: Could not find the operator torchvision::nms. Please make sure you have already registered the "
        "operator\n", "python-exception", {"type": "ValueError"}, "framework-pin-mismatch"),
    # the training troubleshooting guide (archive/nxd-training/training-troubleshooting.rst, "Compilation errors when
    # placing NeuronCache home directory on NFS/EFS/FSx mounted drive")
    "compile-cache-key-lost": (
        "KeyError: 'neff_cache2/neuron-compile-cache/USER_neuroncc-1.0.48875.0+7437fbf18/MODULE_7223055628515330524/"
        "MODULE_0_SyncTensorsGraph.14_7223055628515330524_compute1-dy-training-2-1-e859998e-3035-5df63dab5ce63'\n",
        "python-exception", {"type": "KeyError"}, "resource"),
    # near miss: a model's state dict missing a key is the model's
    "state-dict-key": ("KeyError: 'model.layers.0.self_attn.q_proj.weight'\n", "python-exception",
                       {"type": "KeyError"}, None),
    # the torch-neuron troubleshooting guide (archive/torch-neuron/troubleshooting-guide.rst, "TorchVision related
    # issues"): torchvision 0.7 with the torch of Torch-Neuron 1.5.1
    "torch-private-attribute": ("E AttributeError: module 'torch.jit' has no attribute '_script_if_tracing'\n",
                                "python-exception", {"type": "AttributeError"}, "framework-pin-mismatch"),
    # near miss: a public torch name missing is an API the script uses (explain's own cause), not a build for
    # another torch
    "torch-public-attribute": ("AttributeError: module 'torch' has no attribute 'compiler_fake'\n",
                               "python-exception", {"type": "AttributeError"}, "framework-api-change"),
    # near miss: an operator of the model's own namespace missing is the model's (an extension it did not load)
    "own-ops-not-registered": (
        "ValueError: Could not find the operator mylib::fused_rope. Please make sure you have already registered "
        "the operator\n", "python-exception", {"type": "ValueError"}, None),
    # --- the compilers' exits
    "neuronx-cc-137": ("subprocess.CalledProcessError: Command '['neuronx-cc', 'compile']' returned non-zero exit "
                       "status 137.\n", "compiler-killed", {"compiler": "neuronx-cc", "status": "137"},
                       "compile-failure"),
    "neuron-cc-failed": ("neuron-cc failed with 2\n", "compiler-failed", {"compiler": "neuron-cc", "status": "2"},
                         "compile-failure"),
    # --- torch.distributed and EFA
    "rendezvous": (
        "torch.distributed.DistNetworkError: The client socket has timed out after 900s while trying to connect to "
        "(10.0.0.12, 29500).\n", "rendezvous-failed", {"failure": "timeout"}, "env-var-misconfig"),
    "connection-refused-no-distributed": ("curl: (7) Failed to connect to localhost port 80: Connection refused\n",
                                          "", {}, None),  # near miss: not a rendezvous
    "no-efa": ("No EFA devices found\n", "efa-missing", {}, "resource"),
    "efa-warning-beside-a-kill": (  # near miss: an EFA line printed beside the real failure does not outrank it
        "NET/OFI No EFA devices found, falling back\nneuronx-cc failed with -9\n", "compiler-killed",
        {"status": "-9"}, "compile-failure"),
    # --- memory
    # aws-neuron-sdk#884: the compiler's estimate of a graph's HBM above a trn1 NeuronCore's 16GB
    "peak-hbm-estimate": (
        "2024-05-10T23:47:40Z [XCG815]  Estimated peak HBM usage (22.839451) exceeds 16GB. Neff won't be able to "
        "load on chip\n", "memory-exhausted", {"where": "device", "limit": "16gb"}, "resource"),
    # the training troubleshooting guide (archive/nxd-training/training-troubleshooting.rst,
    # "TDRV:tdrv_one_tmpbuf_reserve Number of ONE TMPBUF pages requested exceeded ..."): the tensors need more device
    # memory; a smaller batch
    "device-pages-exceeded": (
        "ERROR TDRV:tdrv_one_tmpbuf_reserve Number of ONE TMPBUF pages requested exceeded the max number of pages "
        "allowed (requested: 28, max allowed: 16).\n", "memory-exhausted",
        {"where": "device", "needs": "28 pages", "limit": "16 pages"}, "resource"),
    # near miss: a peak HBM usage that is reported, not exceeded
    "peak-hbm-reported": ("INFO: Estimated peak HBM usage (11.2) of 16GB\n", "", {}, None),
    "xla-oom": ("RuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8.00G on ND 0:NC 1.\n",
                "memory-exhausted", {"where": "device", "device": "0", "core": "1"}, "resource"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_reader_extracts_its_facts_and_the_rules_their_meaning(name: str) -> None:
    text, kind, facts, category = CASES[name]
    clues = read_message(text)
    if kind:
        clue = next((clue for clue in clues if clue.kind == kind), None)
        assert clue is not None, [(clue.kind, clue.facts) for clue in clues]
        assert {key: clue.facts.get(key) for key in facts} == facts, clue.facts
    chosen = first_cause(clues)
    assert (chosen[1].category if chosen else None) == category, chosen


def test_the_text_as_it_comes_reads_the_same() -> None:
    """Colours, timestamps, pod prefixes, case, spacing and a wrapped line do not change the reading."""
    plain = "Logical Neuron Core(s) not available - Requested:1 Available:0"
    dressed = ("[pod/inference-7f9c/model] 2026-05-29T10:12:01.041Z \x1b[31mERROR\x1b[0m  "
               "LOGICAL   NEURON core(s)   NOT available - requested:1 available:0\r\n")
    assert normalise(dressed).strip() == "ERROR LOGICAL NEURON core(s) NOT available - requested:1 available:0"
    for text in (plain, dressed):
        chosen = first_cause(read_message(text))
        assert chosen is not None and chosen[1].category == "cores-busy" and chosen[0].facts["available"] == "0"
    # a known signature wrapped by a terminal onto two lines, in other case
    signatures, ops, fixes = load_error_signatures(), load_op_support(), load_compiler_fixes()
    wrapped = "2024-Jan-19 05:03:34.343999 31898:32693 ERROR  NRT:nrt_init  unable to determine neuron\ndriver " \
              "version. Please check aws-neuron-dkms package is installed.\n"
    explanation, _ = explain_message(wrapped, signatures, ops, fixes)
    assert explanation is not None and explanation.category == "driver-missing"


def test_the_first_cause_is_named_and_the_others_listed() -> None:
    """A job's log with a device that would not open, then the rendezvous the other ranks waited on, then the
    compiler's exit: the device is the cause, the rest are listed."""
    text = ("2024-May-21 16:08:34.244955 58100:58100 ERROR  TDRV:tdrv_init_mla_phase1  Failed to open /dev/neuron3\n"
            "torch.distributed.DistNetworkError: The client socket has timed out after 900s while trying to connect "
            "to (10.0.0.12, 29500).\n"
            "E: Unable to locate package aws-neuronx-tools\n")
    explanation, _ = explain_message(text, load_error_signatures(), load_op_support(), load_compiler_fixes())
    assert explanation is not None and explanation.category == "device-missing"
    assert [other["category"] for other in explanation.also] == ["env-var-misconfig", "tools-missing"]
    assert explanation.facts == {"function": "tdrv_init_mla_phase1", "device": "3"}


def test_specific_evidence_wins_over_a_banner() -> None:
    """`Neuron runtime cannot be initialized` is printed above several causes (busy cores, no device): with a device
    that would not open beside it, the device is the answer; alone, the banner still explains it."""
    signatures, ops, fixes = load_error_signatures(), load_op_support(), load_compiler_fixes()
    banner = "RuntimeError: Neuron runtime cannot be initialized; cannot determine the number of available NeuronCores"
    explanation, _ = explain_message("ERROR TDRV:tdrv_init_mla_phase1 Failed to open /dev/neuron0\n" + banner,
                                     signatures, ops, fixes)
    assert explanation is not None and explanation.category == "device-missing"
    alone, _ = explain_message(banner, signatures, ops, fixes)
    assert alone is not None and alone.category == "cores-busy"


def test_an_unmatched_text_is_still_described() -> None:
    clues = read_message(CASES["cannot-import-from-libneuronxla"][0])
    assert first_cause(clues) is None
    assert describe(clues[-1]) == (
        "a Python ImportError in /home/ssm-user/aws_neuron_venv_pytorch for libneuronxla: cannot import name "
        "'neuron_xla_compile' from 'libneuronxla' (/home/ssm-user/aws_neuron_venv_pytorch/lib64/python3.7/"
        "site-packages/libneuronxla/__init__.py)")
    assert Message.of("").folded == ""


def test_the_loader_naming_a_newer_c_library_outranks_a_file_name_signature() -> None:
    """introducing-pytorch-2-9.rst, "GLIBC compatibility issue on Amazon Linux 2023": torch-xla's extension needs
    GLIBC_2.35, which the OS lacks. The line also names `_XLAC`, which the release data reads as a torch mismatch
    when the loader says `undefined symbol`; the loader's `version ... not found` states the cause itself."""
    signatures, ops, fixes = load_error_signatures(), load_op_support(), load_compiler_fixes()
    glibc = ("ImportError: /usr/lib64/libm.so.6: version `GLIBC_2.35' not found (required by "
             "/opt/conda/lib/python3.12/site-packages/_XLAC.cpython-312-x86_64-linux-gnu.so)\n")
    explanation, _ = explain_message(glibc, signatures, ops, fixes)
    assert explanation is not None and explanation.category == "os-unsupported", explanation
    assert explanation.facts["symbol_version"] == "GLIBC_2.35"
    # near miss: the same extension with an undefined symbol is still the torch mismatch of the release data
    symbol = ("ImportError: /opt/venv/lib/python3.10/site-packages/_XLAC.cpython-310-x86_64-linux-gnu.so: undefined "
              "symbol: _ZN5torch8autograd12VariableInfoC1ERKN2at6TensorE\n")
    explanation, _ = explain_message(symbol, signatures, ops, fixes)
    assert explanation is not None and explanation.category == "stock-torch-conflict", explanation
