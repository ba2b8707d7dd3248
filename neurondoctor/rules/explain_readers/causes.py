"""What the readers' facts mean (pure): a clue → the category of the failure, why, the ways out, the page or report
it rests on, and how specific it is.

A rule reads what the text says, not one exact phrase: any wording of "no Neuron device" is device-missing, any
apt or dnf "no such package" for an `aws-neuronx-*` package is the missing Neuron OS repository. A clue no rule
gives a meaning to is still described (describe.py). `specific` is False for evidence that many failures print
(a compiler's non-zero exit, a rendezvous timeout that follows another rank's crash): a specific clue anywhere in
the text wins over it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Optional

from neurondoctor.rules.explain_readers.clue import Clue

RUNTIME_GUIDE = "neuron-runtime/nrt-troubleshoot.rst"
PIP_INDEX = "https://pip.repos.neuron.amazonaws.com"
# The setup pages of every release (setup/torch-neuronx.rst, the DLAMI notes) install with
# `--extra-index-url=https://pip.repos.neuron.amazonaws.com`, the OS packages from apt.repos.neuron.amazonaws.com
# or yum.repos.neuron.amazonaws.com.
SETUP_PAGES = "the Neuron setup guides (setup/torch-neuronx.rst: the apt/yum repository and the pip repository)"
# Python modules and the Neuron distributions that install them.
NEURON_MODULES = frozenset({"torch_neuronx", "torch_neuron", "torch_xla", "libneuronxla", "neuronxcc", "neuroncc",
                            "neuronx_distributed", "neuronx_distributed_inference", "transformers_neuronx",
                            "tensorflow_neuron", "jax_neuronx", "nki", "neuronx_distributed_training"})
# Commands the Neuron packages install: the OS tools (aws-neuronx-tools, /opt/aws/neuron/bin) and the compiler
# (neuronx-cc, in the environment's bin).
NEURON_TOOLS = frozenset({"neuron-ls", "neuron-top", "neuron-monitor", "neuron-profile", "nccom-test",
                          "neuron-explorer", "neuron-dump"})
COMPILERS = frozenset({"neuronx-cc", "neuron-cc"})
# Companions of torch that ship compiled operators built against one torch release: with another torch their
# operators are missing from torch's registry (`Could not find the operator torchvision::nms`).
TORCH_COMPANIONS = ("torchvision", "torchaudio")
_CHECK = "`neurondoctor check` names what is wrong on this host and prints its fix"


@dataclass(frozen=True)
class Cause:
    category: str
    why: str
    ways_out: tuple[str, ...]
    source: str
    specific: bool = True
    # The text states this cause in so many words (the loader naming the C library version a binary needs): it
    # outranks a release-data signature that only recognises a file name in the same line.
    decisive: bool = False


def is_neuron_package(name: str) -> bool:
    """A distribution or OS package of the Neuron SDK (`torch-neuronx`, `aws-neuronx-dkms`, `libneuronxla`)."""
    name = name.lower().replace("_", "-")
    return "neuron" in name or name in ("nki", "jax-neuronx")


def _python(clue: Clue) -> Optional[Cause]:
    facts = clue.facts
    kind, text = facts.get("type", ""), facts.get("message", "").lower()
    module = facts.get("module", "")
    if kind.endswith("ModuleNotFoundError") or text.startswith("no module named"):
        top = module.split(".", 1)[0]
        if top in NEURON_MODULES or top == "torch":
            where = f" in {facts['environment']}" if facts.get("environment") else ""
            return Cause("framework-missing", f"the Python that ran{where} has no {top} (package "
                         f"{facts.get('package', top)})",
                         ("run with the environment that holds the Neuron framework (`source VENV/bin/activate`, or "
                          "its bin/python), or install it there: " + _CHECK,
                          f"the Neuron packages come from the Neuron pip repository: pip needs `--extra-index-url "
                          f"{PIP_INDEX}`"), SETUP_PAGES)
    package = facts.get("package", "")
    if kind.endswith("ModuleNotFoundError") and _is_plain_dependency(module):
        where = f" in {facts['environment']}" if facts.get("environment") else ""
        return Cause("python-dependency-missing", f"the Python that ran{where} has no module {module}: a package the "
                     "job needs, not part of the Neuron SDK, is not installed there",
                     (f"install it into the environment the job runs (`VENV/bin/python -m pip install …`, the "
                      f"distribution that provides {module}); if it is installed, the job runs another Python: "
                      "`neurondoctor check --venv VENV` shows which environment holds what",),
                     "Python's import system (ModuleNotFoundError)")
    divisible = _NOT_DIVISIBLE.search(text)
    if divisible and (package in _PARALLEL_LIBRARIES or "tp_degree" in text or "tensor parallel" in text):
        return Cause("unsupported-config", f"a model dimension ({divisible.group(1)}) is not divisible by the "
                     f"parallel degree ({divisible.group(2)}) the library shards it over",
                     ("choose a tensor-parallel degree that divides the model's dimensions (attention heads, "
                      "vocabulary, hidden size), or turn off the sharding of that layer if the library allows it",),
                     "the parallel library's own check (neuronx-distributed's ensure_divisibility)")
    api = _framework_api(kind, text, module, package)
    if api:
        return Cause("framework-api-change", f"the script uses {api}, which the installed framework release does not "
                     "have: removed, renamed or not yet added in this release",
                     ("use the API of the installed release (its release notes and migration pages name the "
                      "replacement), or install the release the script was written for; `neurondoctor check` "
                      "shows the installed versions",),
                     "Python's attribute and import errors on a framework module (the releases' migration notes)")
    if "errno" in text and _names_compile_cache_entry(text):
        return Cause("compile-cache", "the compile cache's file system failed to read or copy an entry: a cache on a "
                     "shared network file system that fails under many concurrent readers (the guide names FSx)",
                     ("put the cache where every worker can read it reliably: the instance's local disk, or the "
                      "cluster's shared NFS home (NEURON_COMPILE_CACHE_URL, or NEURON_CC_FLAGS=\"--cache_dir=…\")",
                      "`neurondoctor cache status` shows the cache this host uses"),
                     "archive/appnotes/torch-neuronx/introducing-pytorch-2-x.rst (OSError Errno 61 with the Neuron "
                     "Cache on an FSx mount)")
    if kind.endswith("SyntaxError") and is_neuron_package(package):
        where = f" ({facts['environment']})" if facts.get("environment") else ""
        return Cause("python-unsupported", f"{package} does not parse under the Python that imported it{where}: "
                     "the installed package is written for a newer Python",
                     ("use a Python the package's release supports (its setup page names them): "
                      "`neurondoctor venv create PATH --release X.Y.Z --python python3.X`; " + _CHECK,),
                     "Python's parser (a SyntaxError raised inside an installed package's own file)", decisive=True)
    private = _PRIVATE_TORCH_ATTRIBUTE.search(text) if kind.endswith("AttributeError") else None
    if private:
        return Cause("framework-pin-mismatch", f"a package calls torch's internal `{private.group(1)}."
                     f"{private.group(2)}`, which the installed torch does not have: the package (torchvision, an "
                     "extension) was built for another torch release",
                     ("install the versions made for this torch (each torch X.Y has one torchvision minor; "
                      "torch-neuron and torch-neuronx name theirs): " + _CHECK,),
                     "the torch-neuron troubleshooting guide (archive/torch-neuron/troubleshooting-guide.rst: "
                     "TorchVision related issues)")
    if kind.endswith("KeyError") and _names_compile_cache_entry(text):
        return Cause("resource", "the compile cache lost track of an entry another process was writing: a cache "
                     "shared by several instances on a network drive (NFS, EFS, FSx), whose file locking the cache "
                     "cannot rely on", ("give each instance its own cache on a local disk (NEURON_CC_FLAGS="
                                        "\"--cache_dir=/local/path\", or NEURON_COMPILE_CACHE_URL)",),
                     "the training troubleshooting guide (archive/nxd-training/training-troubleshooting.rst: "
                     "Compilation errors when placing NeuronCache home directory on NFS/EFS/FSx mounted drive)")
    companion = next((name for name in TORCH_COMPANIONS if f"could not find the operator {name}::" in text), None)
    if companion:
        return Cause("framework-pin-mismatch", f"{companion}'s compiled operators did not load into this torch: the "
                     f"installed {companion} is not the build for the installed torch",
                     (f"install the {companion} that goes with the environment's torch (each torch X.Y has one "
                      f"{companion} minor), with pip's constraint on torch so that torch stays: " + _CHECK,),
                     "the NxD Training installation guide (archive/nxd-training/installation_guide.rst: Common "
                     "failures during installation, Torch vision version error)")
    return None  # "no Neuron device" in an exception's message is the runtime reader's (runtime_log.py)


_NO_DEVICE = Cause("device-missing", "no Neuron device is visible to the process: not a Neuron instance, the driver "
                   "is not loaded, or a container was started without the devices",
                   ("`ls /dev/neuron*` and `neuron-ls` show the devices the host has; " + _CHECK,
                    "in a container, pass the devices: `docker run --device=/dev/neuron0 …` for each device the job "
                    "uses (Kubernetes: request aws.amazon.com/neuron and run the Neuron device plugin)"),
                   RUNTIME_GUIDE)


# torch's internal names (a leading underscore) are called only by packages built against one torch release.
_PRIVATE_TORCH_ATTRIBUTE = re.compile(r"module '(torch(?:\.[a-z_]{1,40}){0,4})' has no attribute '(_[a-z0-9_]{1,80})'")


# The frameworks whose public API a script calls (torch, torch-xla, the Neuron framework packages).
_FRAMEWORK_MODULES = frozenset({"torch", "torch_xla", "torch_neuronx", "neuronx_distributed",
                                "neuronx_distributed_inference", "transformers_neuronx"})
_MISSING_ATTRIBUTE = re.compile(r"module '([a-z_][a-z0-9_.]{0,80})' has no attribute '([a-z][a-z0-9_]{0,80})'")
_MISSING_NAME = re.compile(r"cannot import name '([a-z][a-z0-9_]{0,80})' from '([a-z_][a-z0-9_.]{0,80})'")


# The libraries that shard a model over NeuronCores and check that its dimensions divide by the degree.
_PARALLEL_LIBRARIES = frozenset({"neuronx-distributed", "neuronx-distributed-inference", "transformers-neuronx",
                                 "optimum"})
_NOT_DIVISIBLE = re.compile(r"([0-9]{1,12}) is not divisible by ([0-9]{1,6})")


def _is_plain_dependency(module: str) -> bool:
    """A top-level module that no Neuron package and not torch provides (`Cython`, `ray`): a missing submodule of an
    installed package (`vllm._C`) or a private module is something else."""
    return bool(module) and "." not in module and not module.startswith("_") and module not in NEURON_MODULES \
        and module != "torch" and not is_neuron_package(module)


def _framework_api(kind: str, text: str, module: str, importer: str) -> str:
    """`torch_xla.runtime.using_pjrt` when the script asks a framework module for a public name it does not have; ''
    when another Neuron package asks (a pairing of Neuron packages, not the script's API) or the module is no
    framework's."""
    found = _MISSING_ATTRIBUTE.search(text) if kind.endswith("AttributeError") else (
        _MISSING_NAME.search(text) if kind.endswith("ImportError") else None)
    if found is None:
        return ""
    owner, name = (found.group(1), found.group(2)) if found.re is _MISSING_ATTRIBUTE else (found.group(2),
                                                                                           found.group(1))
    if owner.split(".", 1)[0] not in _FRAMEWORK_MODULES:
        return ""
    if importer and is_neuron_package(importer) and importer != owner.split(".", 1)[0].replace("_", "-"):
        return ""
    return f"`{owner}.{name}`"


def _names_compile_cache_entry(text: str) -> bool:
    """A key that is a path in the Neuron compile cache: its folder, or a compiler's folder with a graph's MODULE_."""
    return "neuron-compile-cache" in text or ("module_" in text and ("neuronxcc-" in text or "neuroncc-" in text))


def _no_distribution(clue: Clue) -> Optional[Cause]:
    facts = clue.facts
    package = facts.get("package", "")
    if not is_neuron_package(package):
        return None
    versions = facts.get("versions", "")
    if versions in ("", "none"):
        if PIP_INDEX.split("//", 1)[1] in facts.get("indexes", ""):
            return Cause("python-unsupported", f"the Neuron pip repository is read but has no {package} for this "
                         "Python or platform", (f"use a Python that the Neuron release supports for {package} (the "
                                                "release's setup page names them); " + _CHECK,), SETUP_PAGES)
        return Cause("wrong-pip-index", f"pip found no {package}: the Neuron pip repository is not among the indexes "
                     "it reads (Neuron's packages are not on PyPI)",
                     (f"install with `--extra-index-url {PIP_INDEX}` (or put it in pip.conf as extra-index-url); "
                      "`neurondoctor check` reports the environment's pip configuration (ND-PIP-002, ND-PIP-003)",
                      "behind a mirror or proxy, the mirror must serve the Neuron repository too"), SETUP_PAGES)
    return Cause("unknown-version", f"no {package} version on the indexes pip read satisfies "
                 f"{facts.get('specifier') or 'the requirement'} (it saw: {versions[:120]})",
                 ("ask for a version the Neuron release lists: `neurondoctor manifests show X.Y.Z` prints each "
                  "release's versions, `neurondoctor venv create PATH --release X.Y.Z` installs one whole release",
                  "a version built for another Python is not offered: `pip debug --verbose` shows the tags this "
                  "Python accepts"), SETUP_PAGES)


def _pip_python(clue: Clue) -> Optional[Cause]:
    package = clue.facts.get("package")
    what = f"{package} requires Python {clue.facts.get('requires')}, and this is {clue.facts.get('python')}" \
        if package else "the versions pip would take require another Python"
    return Cause("python-unsupported", what,
                 ("create the environment with a Python the release supports (`neurondoctor venv create PATH "
                  "--release X.Y.Z --python python3.X`); " + _CHECK,), "pip's resolver (requires-python)")


def _pip_conflict(clue: Clue) -> Optional[Cause]:
    facts = clue.facts
    names = (facts.get("package", ""), facts.get("wants", ""))
    if not any(is_neuron_package(name) for name in names) and "torch-xla" not in names:
        return None
    torch = facts.get("wants") == "torch" or facts.get("package") == "torch"
    has = f", but {facts['wants']} {facts['has']} is installed" if facts.get("has") else ""
    return Cause("stock-torch-conflict" if torch and "+cu" in facts.get("has", "") else "framework-pin-mismatch",
                 f"{facts.get('package')} {facts.get('version')} needs {facts.get('wants')}"
                 f"{facts.get('specifier', '')}{has}",
                 ("install the Neuron packages of one release together, with their pins: " + _CHECK + "; `neurondoctor "
                  "venv create PATH --release X.Y.Z` builds a guarded environment",
                  "do not upgrade torch on its own in a Neuron environment: torch-neuronx is built for one torch"),
                 "pip's resolver (the package's Requires-Dist)")


def _os_package(clue: Clue) -> Optional[Cause]:
    package = clue.facts.get("package", "")
    if not package.startswith("aws-neuron"):
        return None
    tool = clue.facts.get("tool", "apt")
    category = "driver-missing" if "dkms" in package else "tools-missing"
    repo = "apt.repos.neuron.amazonaws.com" if tool == "apt" else "yum.repos.neuron.amazonaws.com"
    refresh = "`sudo apt-get update`" if tool == "apt" else "`sudo dnf makecache`"
    version = clue.facts.get("version")
    why = (f"{tool} has no {package}" + (f" {version}" if version else "") +
           f": the Neuron OS repository ({repo}) is not configured, or the package lists were not refreshed after "
           "it was added")
    return Cause(category, why, (f"add the Neuron repository and its key as the setup guide does, then {refresh}; "
                                 "`neurondoctor check` prints both commands for this host's OS",
                                 f"if the repository is there, {refresh} and ask again"
                                 + ("; the version must be one the repository holds: `apt-cache madison "
                                    f"{package}`" if version and tool == "apt" else "")), SETUP_PAGES)


def _os_key(clue: Clue) -> Optional[Cause]:
    if "neuron" not in clue.line.lower():
        return None
    return Cause("package-repo-key", "the package manager refuses the Neuron repository, so no Neuron OS package "
                 "(driver, runtime, tools) installs or upgrades: its signing key is missing or expired on this host",
                 ("re-import the key as the setup guide does (GPG-PUB-KEY-AMAZON-AWS-NEURON.PUB from the "
                  "repository), then `sudo apt-get update` (or `sudo dnf makecache`)",
                  "`neurondoctor check` then shows which Neuron packages are installed and from which release"),
                 "setup/setup-troubleshooting.rst (an expired Neuron GPG key: re-import it, then apt-get update)")


def _os_held(clue: Clue) -> Optional[Cause]:
    return Cause("package-held", "the package manager holds the packages (apt-mark hold, as the Neuron DLAMIs set for "
                 "the Neuron packages; yum versionlock), so it refuses to change them",
                 ("to upgrade on purpose, say so: `sudo apt-get install --allow-change-held-packages …` (or "
                  "`sudo apt-mark unhold PACKAGE`; `sudo yum versionlock delete PACKAGE`)",
                  "`neurondoctor check` shows the installed Neuron packages and their release"),
                 "apt's own message (held packages; the Neuron setup guides' --allow-change-held-packages)")


def _library(clue: Clue) -> Optional[Cause]:
    library = clue.facts.get("library", "")
    if library.startswith(("libnrt.so", "libnccom.so", "libncfw.so")):
        return Cause("tools-missing", f"{library} is not found by the loader: the Neuron runtime (aws-neuronx-runtime-"
                     "lib, aws-neuronx-collectives) is not installed, or not on the loader's path",
                     ("install aws-neuronx-runtime-lib and aws-neuronx-collectives from the Neuron OS repository: "
                      + _CHECK, "in a container, the image needs them too; the libraries are in /opt/aws/neuron/lib"),
                     RUNTIME_GUIDE)
    if library.startswith("libpython"):
        return Cause("broken-venv", f"the environment's interpreter cannot find {library}: the Python it was made "
                     "from moved or was removed", ("recreate the environment from an installed Python: " + _CHECK,),
                     "the dynamic loader (a venv links to its base Python)")
    return None


def _symbol_version(clue: Clue) -> Optional[Cause]:
    version = clue.facts.get("symbol_version", "")
    needed_by = clue.facts.get("required_by", "")
    if not version.startswith("GLIBC_") or not any(name in (needed_by + clue.line).lower()
                                                   for name in ("neuron", "torch_xla", "_xlac", "libnrt", "libnccom")):
        return None
    return Cause("os-unsupported", f"{needed_by or 'a Neuron binary'} needs {version}, newer than this system's C "
                 "library: the OS is older than the release supports",
                 ("use an OS the Neuron release supports (its setup page lists them; Ubuntu 22.04/24.04, Amazon Linux "
                  "2023): " + _CHECK,), "the dynamic loader (glibc symbol versions)", decisive=True)


def _loader_assertion(clue: Clue) -> Optional[Cause]:
    """glibc's loader stopping on its own consistency check in its thread-local storage code (elf/dl-tls.c): the
    training troubleshooting guide documents it as a glibc 2.26 bug, gone with glibc 2.27 (Ubuntu 20)."""
    if "dl-tls" not in clue.facts.get("file", "") and "tls" not in clue.facts.get("function", ""):
        return None
    return Cause("os-unsupported", f"the C library's loader failed its own check ({clue.facts.get('file')}: "
                 f"{clue.facts.get('function')}): a known intermittent bug of glibc 2.26, not of the model",
                 ("run on an OS with a newer C library (glibc 2.27 or later, for example Ubuntu 20.04 or later); "
                  + _CHECK,),
                 "frameworks/torch/torch-neuronx/training-troubleshooting.rst (Error \"Assertion "
                 "`listp->slotinfo[cnt].gen <= GL(dl_tls_generation)' failed\")", decisive=True)


def _dkms(clue: Clue) -> Optional[Cause]:
    kernel = clue.facts.get("kernel")
    on = f" for kernel {kernel}" if kernel else ""
    if clue.kind == "dkms-headers":
        return Cause("dkms-build", f"DKMS cannot build the Neuron driver{on}: the kernel headers are not installed",
                     ("install the headers of the running kernel (`sudo apt-get install -y linux-headers-$(uname -r)`"
                      " or `sudo dnf install -y kernel-devel-$(uname -r)`), then `sudo dpkg --configure -a` or "
                      "reinstall aws-neuronx-dkms; " + _CHECK,), "dkms's own message")
    error = clue.facts.get("error")
    driver = clue.facts.get("driver")
    return Cause("dkms-build", f"the Neuron driver{' ' + driver if driver else ''} did not build{on}"
                 + (f" ({clue.facts.get('file')}: {error})" if error else ""),
                 ("a driver older than the kernel's API fails to compile: install the aws-neuronx-dkms of the newest "
                  "release, or boot a kernel the driver supports; " + _CHECK,
                  "the whole log: /var/lib/dkms/aws-neuronx/VERSION/build/make.log"), "dkms and kbuild messages")


def _dpkg(clue: Clue) -> Optional[Cause]:
    package = clue.facts.get("package", "")
    if "neuronx-dkms" not in package:
        return None
    return Cause("dkms-build", "dpkg could not configure aws-neuronx-dkms: its DKMS build failed",
                 ("the reason is in /var/lib/dkms/aws-neuronx/VERSION/build/make.log (`neurondoctor explain` reads "
                  "it); " + _CHECK, "once fixed, `sudo dpkg --configure -a`"), "dpkg's messages")


def _command(clue: Clue) -> Optional[Cause]:
    command = clue.facts.get("command", "")
    if command in NEURON_TOOLS:
        return Cause("tools-missing", f"`{command}` is not on PATH: aws-neuronx-tools is not installed, or "
                     "/opt/aws/neuron/bin is not on PATH",
                     ("`export PATH=/opt/aws/neuron/bin:$PATH` (the setup guide's step); if /opt/aws/neuron/bin has no "
                      f"{command}, install aws-neuronx-tools: " + _CHECK,), SETUP_PAGES)
    if command in COMPILERS:
        return Cause("tools-missing", f"`{command}` is not on PATH: the environment that holds it is not active, "
                     "or it is not installed",
                     ("activate the environment that holds the compiler (`source VENV/bin/activate`); " + _CHECK,),
                     "compiler/neuronx-cc/how-to-generate-neff.rst (Common issues: `neuronx-cc: command not found`: "
                     "activate the environment)")
    tool = clue.facts.get("needed_by", "")
    if tool in NEURON_TOOLS:
        return Cause("tools-missing", f"`{tool}` runs `{command}`, which is not installed, not on PATH or not set up",
                     (f"install {command} as the {tool} guide says (`neuron-profile view` needs InfluxDB: install "
                      "it, `systemctl start influxdb`, `influx setup`), and put it on PATH",),
                     "the neuron-profile user guide (profiler/neuron-profile-user-guide.rst: InfluxDB not installed)")
    return None


def _cores(clue: Clue) -> Optional[Cause]:
    asked, free = clue.facts.get("requested"), clue.facts.get("available")
    numbers = f" (asked for {asked}, {free} available)" if asked is not None else ""
    return Cause("cores-busy", "the runtime could not get the NeuronCores it asked for" + numbers + ": other "
                 "processes hold them, or fewer are visible than the job asks for",
                 ("find the process that holds the NeuronCores: `neuron-ls` (or `neurondoctor check`, which names "
                  "PID, command and age) and stop it",
                  "ask for no more cores than are visible: NEURON_RT_VISIBLE_CORES, NEURON_RT_NUM_CORES, the "
                  "tensor-parallel degree"), RUNTIME_GUIDE)


def _cores_not_contiguous(clue: Clue) -> Optional[Cause]:
    return Cause("device-missing", "the Neuron devices or cores given to this process are not contiguous, and the "
                 "runtime needs a contiguous range",
                 ("pass the devices as one contiguous range (`--device=/dev/neuron0 --device=/dev/neuron1`, "
                  "NEURON_RT_VISIBLE_CORES=0-3)", "in Kubernetes, run the Neuron scheduler extension beside the "
                  "device plugin: it allocates contiguous devices"),
                 "the container troubleshooting guide (deploy/troubleshooting.rst: Contiguous Device ID's)")


def _device_open(clue: Clue) -> Optional[Cause]:
    device = clue.facts.get("device")
    node = f"/dev/neuron{device}" if device else "a Neuron device node"
    if clue.facts.get("errno") == "permission denied":
        return Cause("device-permission", f"{node} exists but this user cannot open it",
                     ("run as a user in the group that owns the device nodes (`ls -l /dev/neuron*`), or fix the udev "
                      "rule the driver package installs; " + _CHECK,), RUNTIME_GUIDE)
    return Cause("device-missing", f"the runtime could not open {node}: the node is missing (driver not loaded, "
                 "a container started without it) or held in a way that forbids it",
                 ("`ls -l /dev/neuron*`: no node means the driver is not loaded or the container lacks `--device="
                  f"{'/dev/neuron' + device if device else '/dev/neuronN'}`; " + _CHECK,
                  "a node that is there but will not open: see who holds it (`neuron-ls`), or its permissions"),
                 RUNTIME_GUIDE)


def _container_device(clue: Clue) -> Optional[Cause]:
    device = clue.facts.get("device", "")
    if "neuron" not in device:
        return None
    return Cause("device-missing", f"the container runtime was told to pass {device}, which the host does not have",
                 ("pass only the devices the host has (`ls /dev/neuron*` on the host); no node at all means the "
                  "host's driver is not loaded: " + _CHECK,), "the container runtime's --device handling")


def _k8s(clue: Clue) -> Optional[Cause]:
    resource = clue.facts.get("resource", "aws.amazon.com/neuron")
    return Cause("device-missing", f"no node offers enough {resource} to the scheduler: the Neuron device plugin is "
                 "not running there, or other pods hold the devices",
                 ("`kubectl get ds -n kube-system | grep neuron` shows the device plugin; `kubectl describe node` "
                  f"shows {resource} under Allocatable and what is allocated",
                  "ask for no more than one node has (trn1.32xlarge: 16 devices, 32 NeuronCores)"),
                 "the Kubernetes scheduler with the Neuron device plugin (containers/kubernetes-getting-started)")


def _compiler_killed(clue: Clue) -> Optional[Cause]:
    return Cause("compile-failure", f"{clue.facts.get('compiler', 'the compiler')} was killed "
                 f"({clue.facts.get('status')}), most often by the kernel's out-of-memory killer",
                 ("compile on an instance with more host memory (the compiler runs on the CPU)",
                  "make the graph smaller: a smaller batch size, sequence length or data type",
                  "check for the OOM kill: `sudo dmesg | grep -i 'killed process'`"),
                 "the compiler's exit status (-9, 137: SIGKILL)")


def _compiler_failed(clue: Clue) -> Optional[Cause]:
    compiler = clue.facts.get("compiler", "neuronx-cc")
    return Cause("compile-failure", f"{compiler} failed (exit status {clue.facts.get('status')}); its own error is "
                 "in its log", ("the compiler's first ERROR line says why: `neurondoctor explain log-neuron-cc.txt` "
                                "(the log is in the compile's work directory)",
                                "an `[NCC_…]` code in it has a page under compiler/error-codes"),
                 "the compiler's exit status", specific=False)


def _compiler_error_log(clue: Clue) -> Optional[Cause]:
    where = f"; its work files are in {clue.facts['artifacts']}" if clue.facts.get("artifacts") else ""
    return Cause("compile-failure", f"{clue.facts.get('compiler', 'neuronx-cc')} stopped with an error{where}",
                 ("the compiler's ERROR lines above say why; an internal error of an older neuronx-cc is often "
                  "fixed in a newer one: upgrade to the newest release's compiler and compile again",
                  "an `[NCC_…]` code in it has a page under compiler/error-codes"),
                 "the compiler's own log (`ERROR … [neuronx-cc]:`, `Artifacts stored in:`)", specific=False)


def _partitioner(clue: Clue) -> Optional[Cause]:
    count, allowed = clue.facts.get("subgraphs"), clue.facts.get("max_subgraph_count")
    return Cause("cpu-fallback", f"operators the partitioner places on the CPU cut the model into {count} "
                 f"subgraphs, more than max_subgraph_count ({allowed}) allows",
                 ("find the operators placed on the CPU (the partitioner's report lists them) and rewrite or move "
                  "them, or raise max_subgraph_count if the CPU stages are wanted",),
                 "the torch-neuronx graph partitioner application note (torch-neuronx-graph-partitioner-app-note.rst)")


def _graph_proto(clue: Clue) -> Optional[Cause]:
    return Cause("compile-failure", "the framework could not read back the serialised graph (protobuf GraphDef): a "
                 "model above protobuf's 2 GB limit",
                 ("compile with the weights kept out of the graph (`separate_weights=True` in torch.neuron.trace) on "
                  "a neuron-cc recent enough to take it",),
                 "the torch-neuron troubleshooting guide (archive/torch-neuron/troubleshooting-guide.rst: 2GB "
                 "protobuf limit related issues)")


def _runtime_daemon(clue: Clue) -> Optional[Cause]:
    return Cause("tools-missing", "the framework could not reach the Neuron runtime daemon (neuron-rtd, the Neuron "
                 "1.x runtime of Inf1) over gRPC: it is not running, or listens elsewhere",
                 ("start it: `sudo systemctl start neuron-rtd` (`systemctl status neuron-rtd` shows why it stopped), "
                  "or install aws-neuron-runtime; " + _CHECK,),
                 "the MXNet-Neuron troubleshooting guide (archive/mxnet-neuron/troubleshooting-guide.rst: Failed to "
                 "create NEURONCORE Group with GRPC Error)")


def _rendezvous(clue: Clue) -> Optional[Cause]:
    address = clue.facts.get("address")
    return Cause("env-var-misconfig", "the ranks did not meet at the rendezvous" + (f" ({address})" if address else "")
                 + ": a wrong MASTER_ADDR/MASTER_PORT, a port the security group blocks, or another rank that "
                 "failed first", ("look for the first error of every rank: a rank that crashed leaves the others "
                                  "waiting here",
                                  "MASTER_ADDR must be the first node's address as the others reach it and "
                                  "MASTER_PORT free and open between the nodes"),
                 "torch.distributed's rendezvous (c10d store)", specific=False)


def _efa(clue: Clue) -> Optional[Cause]:
    return Cause("resource", "no EFA device is usable: the instance has no EFA interface, or the EFA driver and "
                 "libfabric are not installed", ("launch the instances with EFA interfaces and install the EFA "
                                                 "software; " + _CHECK,), RUNTIME_GUIDE, specific=False)


def _memory(clue: Clue) -> Optional[Cause]:
    if clue.facts.get("where") == "host":
        return Cause("resource", "the host ran out of memory", ("a larger instance, or less work per process",),
                     "the operating system (ENOMEM)", specific=False)
    where = (f" on ND {clue.facts['device']}:NC {clue.facts['core']}" if clue.facts.get("core") else "")
    if clue.facts.get("needs"):
        where += f" (the graph needs {clue.facts['needs']} at its peak, the limit is {clue.facts.get('limit')})"
    return Cause("resource", f"the device ran out of memory{where}",
                 ("a smaller batch or sequence, or a larger tensor-parallel degree that spreads the model over more "
                  "NeuronCores",), RUNTIME_GUIDE)


def _out_of_bounds(clue: Clue) -> Optional[Cause]:
    where = f" on ND {clue.facts['device']}:NC {clue.facts['core']}" if clue.facts.get("core") else ""
    return Cause("model-input", f"an execution{where} read or wrote outside its tensors (NRT_EXEC_OOB, 1006): the "
                 "model or a kernel was given indices or inputs outside what it was built for",
                 ("check the inputs of the failing call (token ids below the vocabulary size, indices within the "
                  "tensor's shape); `NEURON_RT_DBG_DUMP_INPUTS_ON_ERR=1006` makes the runtime save the inputs of the "
                  "failing execution",
                  "in your own kernel (NKI), check the indices of its memory accesses",
                  "nothing on the host to fix: `neurondoctor check` will not find this"),
                 RUNTIME_GUIDE + " (Neuron Runtime execution fails at out-of-bound access: incorrect inputs were "
                 "provided to the model)", decisive=True)


def _bad_input(clue: Clue) -> Optional[Cause]:
    sizes = (f" (expected {clue.facts['expected']} bytes, received {clue.facts['received']})"
             if clue.facts.get("expected") else "")
    return Cause("model-input", f"the model was run with inputs that are not those it was compiled for{sizes}: another "
                 "shape, size or set of input tensors (NRT_EXEC_BAD_INPUT, 1002)",
                 ("give the model inputs of the shapes it was traced or compiled with (pad to them), or compile it "
                  "for the shapes the application sends (a bucket per shape)",
                  "nothing on the host to fix: `neurondoctor check` will not find this"),
                 "nrt_status.h (NRT_EXEC_BAD_INPUT, 1002: missing input tensors, incorrect input tensor sizes)",
                 decisive=True)


def _numerical(clue: Clue) -> Optional[Cause]:
    return Cause("numerical-error", "the device reported a numerical error (NaN or infinity) while executing the "
                 "model (NRT_EXEC_NUMERICAL_ERR, 1003)",
                 ("look for the layer that overflows: run the model on the CPU with the same inputs, or with "
                  "NEURON_RT_NUMERICAL_ERRORS_VERIFICATION disabled to let the execution finish and compare outputs",
                  "a lower-precision cast (auto-cast to bf16) can overflow: compile with `--auto-cast=none` to test",
                  "nothing on the host to fix: `neurondoctor check` will not find this"),
                 RUNTIME_GUIDE + " (numerical errors: INFER_ERROR_SUBTYPE_NUMERICAL); nrt_status.h (1003)",
                 decisive=True)


def _devices_left_running(clue: Clue) -> Optional[Cause]:
    return Cause("device-reset", "an earlier run left the Neuron devices running (an interrupted or killed job), "
                 "and the runtime cannot stop them: only a driver reload resets them",
                 ("stop every process that uses the devices (`neuron-ls` lists them; neuron-top and neuron-monitor "
                  "too), then reload the driver: `sudo rmmod neuron; sudo modprobe neuron`",
                  "`neurondoctor check` shows who holds the devices and whether the driver is loaded"),
                 RUNTIME_GUIDE + " (Failure to initialize Neuron: Timestamp program stop timeout); the training "
                 "troubleshooting guide (One or more engines are running)", decisive=True)


def _peer_gone(clue: Clue) -> Optional[Cause]:
    peer = f" ({clue.facts['address']})" if clue.facts.get("address") else ""
    return Cause("peer-failed-first", f"this process lost its connection to another rank{peer}: that rank or node "
                 "failed or exited first, and its own log holds the cause",
                 ("find the first error among all ranks' logs (the earliest time stamp); this message is a "
                  "consequence of it", "`neurondoctor explain` on that rank's log; `neurondoctor bundle` on that node "
                  "collects it"), "the collectives' and gRPC's connection messages", specific=False)


def _peer_not_ready(clue: Clue) -> Optional[Cause]:
    peer = f" {clue.facts['address']}" if clue.facts.get("address") else " its peer"
    return Cause("peer-late", f"this rank is waiting for{peer}, which has not come up yet (often still compiling "
                 "its graphs); the connection is retried, the wait is not an error by itself",
                 ("let it wait: the first run of a job compiles on every rank, some longer than others; compiling "
                  "ahead (`neuron_parallel_compile`) shortens the wait",
                  "if the wait ends in an error, that rank's own log holds the cause"),
                 RUNTIME_GUIDE + " (collectives: Timeout waiting for RX … retrying)", specific=False)


def _not_the_failure(clue: Clue) -> Optional[Cause]:
    what = f" ({clue.facts['names']})" if clue.facts.get("names") else ""
    return Cause("not-the-failure", f"a deprecation warning{what}: the program goes on, this is not a failure",
                 ("change the call the warning names when convenient (the warning says what replaces it)",
                  "if the job did fail, its error is elsewhere in the log: `neurondoctor explain` the whole log"),
                 "the warning itself (Python's warnings: DeprecationWarning, FutureWarning)", specific=False)


def _efa_dereg_at_exit(clue: Clue) -> Optional[Cause]:
    return Cause("not-the-failure", "the EFA driver's DEREG_MR failure as a process exits: the Neuron driver and the "
                 "network stack both deregister its buffers; harmless",
                 ("nothing to do; if a job failed, its error is in its own log",),
                 RUNTIME_GUIDE + " (EFA Kernel messages (dmesg) after process termination)", specific=False)


def _instruction_limit(clue: Clue) -> Optional[Cause]:
    count = f" ({clue.facts['instructions']} instructions)" if clue.facts.get("instructions") else ""
    return Cause("compile-failure", f"the graph is too large for one compilation{count}: the compiler's instruction "
                 "limit", ("compile at a lower optimisation level (`-O1` in NEURON_CC_FLAGS or the compiler "
                           "arguments)", "make the graph smaller: tensor or pipeline parallelism, a smaller batch, "
                           "sequence length or context_length_estimate"),
                 "compiler/error-codes (NCC_EBVF030, NCC_EXTP004: the number of instructions exceeds the limit)")


def _neuron_op_unregistered(clue: Clue) -> Optional[Cause]:
    return Cause("missing-import", f"a loaded Neuron model calls {clue.facts.get('operator', 'a neuron:: operator')}, "
                 "which no imported package registered: the script loads a compiled model without importing the "
                 "Neuron framework", ("`import torch_neuronx` (Inf2/Trn) or `import torch_neuron` (Inf1) before "
                                      "`torch.jit.load` of the compiled model",),
                 "the torch-neuron troubleshooting guide (archive/torch-neuron/troubleshooting-guide.rst)")


def _cuda_path(clue: Clue) -> Optional[Cause]:
    return Cause("unsupported-config", "the script or a library took a GPU-only path (CUDA) on a host without NVIDIA "
                 "GPUs: a device of 'cuda', or an option (a Trainer's --bf16/--fp16) whose check asks CUDA",
                 ("use the Neuron device (`torch_xla.device()`, or `torch.device('neuron')` with the native "
                  "backend) and the options the library documents for Neuron",),
                 "torch's CUDA messages; the HF Trainer fine-tuning tutorial's known issues (--bf16)")


def _feature_on_xla(clue: Clue) -> Optional[Cause]:
    return Cause("unsupported-config", f"the library does not support {clue.facts.get('feature') or 'this feature'} "
                 "on XLA devices, which a Neuron device is to it",
                 ("turn the feature off or use the library's XLA alternative; the Neuron tutorial for the library "
                  "lists the settings it needs",), "the library's own message (Accelerate and Transformers on XLA)")


def _k8s_placement(clue: Clue) -> Optional[Cause]:
    return Cause("k8s-scheduling", f"no node matches the pod's placement rules ({clue.facts.get('reason')}), so "
                 "Kubernetes cannot place it; the Neuron resources are not the reason",
                 ("`kubectl describe pod` lists the rules; check the pod's affinity, node selector and tolerations "
                  "against the nodes' labels and taints (`kubectl get nodes --show-labels`)",),
                 "kube-scheduler's FailedScheduling reasons")


def _bootstrap_interface(clue: Clue) -> Optional[Cause]:
    remote = f" ({clue.facts['remote']})" if clue.facts.get("remote") else ""
    return Cause("network-config", f"the collectives' bootstrap found no network interface to reach its peer{remote}",
                 ("a link-local IPv6 address (fe80::) is the documented case: disable IPv6 on the instances or set "
                  "the interface the collectives use", "check that the instances share a subnet and that the "
                  "security group allows all traffic between them"),
                 RUNTIME_GUIDE + " (collectives bootstrap)")


_RULES: dict[str, Callable[[Clue], Optional[Cause]]] = {
    "python-exception": _python, "pip-no-distribution": _no_distribution, "pip-python": _pip_python,
    "pip-conflict": _pip_conflict, "os-package-missing": _os_package, "os-package-version": _os_package,
    "os-repository-key": _os_key, "os-package-held": _os_held, "library-missing": _library,
    "symbol-version-missing": _symbol_version,
    "dkms-headers": _dkms, "dkms-build-failed": _dkms, "dkms-compile-error": _dkms, "dpkg-failed": _dpkg,
    "command-not-found": _command, "cores-unavailable": _cores, "device-open-failed": _device_open,
    "no-device": lambda clue: _NO_DEVICE, "container-device-missing": _container_device, "k8s-insufficient": _k8s,
    "compiler-killed": _compiler_killed, "compiler-failed": _compiler_failed, "rendezvous-failed": _rendezvous,
    "efa-missing": _efa, "memory-exhausted": _memory, "loader-assertion": _loader_assertion,
    "cores-not-contiguous": _cores_not_contiguous, "compiler-error-log": _compiler_error_log,
    "partitioner-subgraphs": _partitioner, "graph-proto-unreadable": _graph_proto,
    "runtime-daemon-unreachable": _runtime_daemon, "profiler-database-unready": _command,
    "execution-out-of-bounds": _out_of_bounds, "execution-bad-input": _bad_input,
    "execution-numerical-error": _numerical,
    "devices-left-running": _devices_left_running, "peer-gone": _peer_gone, "peer-not-ready": _peer_not_ready,
    "deprecation-warning": _not_the_failure, "efa-deregistration-at-exit": _efa_dereg_at_exit,
    "compiler-instruction-limit": _instruction_limit, "neuron-op-unregistered": _neuron_op_unregistered,
    "cuda-path-on-neuron": _cuda_path, "feature-unsupported-on-xla": _feature_on_xla,
    "k8s-placement-rules": _k8s_placement, "bootstrap-no-interface": _bootstrap_interface,
}


def cause_of(clue: Clue) -> Optional[Cause]:
    rule = _RULES.get(clue.kind)
    return rule(clue) if rule else None


def first_cause(clues: list[Clue], specific: bool = False) -> Optional[tuple[Clue, Cause]]:
    """The first specific cause in the text, else (unless `specific`) its first cause of any kind."""
    found = [(clue, cause) for clue in clues if (cause := cause_of(clue)) is not None]
    first = next((pair for pair in found if pair[1].specific), None)
    return first if first is not None or specific else (found[0] if found else None)


def decisive_cause(clues: list[Clue]) -> Optional[tuple[Clue, Cause]]:
    """The first cause the text states in so many words (Cause.decisive), which outranks the release data."""
    return next(((clue, cause) for clue in clues if (cause := cause_of(clue)) is not None and cause.decisive), None)


def other_causes(clues: list[Clue], chosen: Optional[str]) -> list[tuple[Clue, Cause]]:
    """The causes of other categories the text also names, each category once, in the order of the text."""
    seen = {chosen} if chosen else set()
    others = []
    for clue in clues:
        cause = cause_of(clue)
        if cause is not None and cause.category not in seen:
            seen.add(cause.category)
            others.append((clue, cause))
    return others
