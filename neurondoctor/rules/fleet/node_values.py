"""What the cluster preflight compares between nodes, read from each node's own report (pure).

A multi-node job needs every rank to compile the same graphs with the same compiler and flags (aws-neuron-sdk #779:
"mismatching number of cc ops … check if ranks are using the same neff"), to agree on the logical core config and
the root communicator, and every node to bring the same devices and EFA interfaces. Each reader turns one report
into one comparable string; None means the report cannot tell (an older writer), and that node is left out of
that comparison. The values are data from other nodes: renderers neutralise them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Optional, Protocol

from neurondoctor.rules.host_stack.compile_flags import user_compiler_flags
from neurondoctor.strict_numbers import json_count


class ReportDocument(Protocol):
    """What the preflight reads of a node's report: report/reader.py's ReportDocument (the rules sit below the
    report layer, so they name only the fields they read)."""

    @property
    def release(self) -> Any: ...

    @property
    def node(self) -> Any: ...

    @property
    def environments(self) -> Sequence[Any]: ...

    @property
    def findings(self) -> Sequence[Any]: ...

    @property
    def facts(self) -> Any: ...

NONE = "none"
MAX_EFA_INTERFACES = 1024  # a count above this from a node's report is no count (the node cannot tell)
UNSET = "(unset)"
COMPILER = "neuronx-cc"
ROOT_COMM = "NEURON_RT_ROOT_COMM_ID"
FLAGS = "NEURON_CC_FLAGS"
LNC = "NEURON_LOGICAL_NC_CONFIG"
# The runtime and EFA variables every rank of a job should share (docs/neuron-facts.md §6: runtime.rst, nrt-ts);
# left out: the root communicator (compared alone), the per-process core choice and the log settings.
_PER_PROCESS = ("NEURON_RT_ROOT_COMM_ID", "NEURON_RT_VISIBLE_CORES", "NEURON_RT_NUM_CORES", "NEURON_RT_LOG_")
_SHARED_PREFIXES = ("NEURON_RT_", "FI_EFA_", "FI_PROVIDER")


def as_dict(value: Any) -> dict[str, Any]:
    """An object of a node's report, or {} for anything else it holds there (a list, a number, null)."""
    return value if isinstance(value, dict) else {}


def environ(report: ReportDocument) -> Mapping[str, str]:
    """The Neuron variables the node's check ran with (its task environment: srun's export plus its TaskProlog)."""
    return {str(key): str(value) for key, value in as_dict(as_dict(report.facts).get("environ")).items()}


def snapshot(report: ReportDocument) -> dict[str, Any]:
    return as_dict(as_dict(as_dict(report.facts).get("host")).get("snapshot"))


def _environment_packages(report: ReportDocument) -> dict[str, set[str]]:
    """Neuron pip package (and torch) → the versions the node's environments hold."""
    found: dict[str, set[str]] = {}
    for env in report.environments:
        env = as_dict(env)
        for name, version in as_dict(env.get("neuron_packages")).items():
            found.setdefault(str(name), set()).add(str(version))
        if isinstance(env.get("torch"), str):
            found.setdefault("torch", set()).add(env["torch"])
    return found


def neuron_packages(report: ReportDocument) -> Optional[str]:
    """The node's Neuron release and package set, the compiler left out (compared alone)."""
    parts = [f"Neuron {report.release.host or NONE}"]
    parts += [f"{name} {version}" for name, version in sorted(report.release.host_packages.items())]
    parts += [f"{name} {','.join(sorted(versions))}" for name, versions in sorted(_environment_packages(report).items())
              if name != COMPILER]
    return "; ".join(parts)


def compiler(report: ReportDocument) -> Optional[str]:
    return ",".join(sorted(_environment_packages(report).get(COMPILER, set()))) or NONE


def compiler_flags(report: ReportDocument) -> Optional[str]:
    """The part of NEURON_CC_FLAGS the user sets (the compile wrapper's own flags, the cache among them, left out)."""
    return " ".join(sorted(user_compiler_flags(environ(report).get(FLAGS, "")))) or UNSET


def logical_nc_config(report: ReportDocument) -> Optional[str]:
    return environ(report).get(LNC, "").strip() or UNSET


def root_communicator(report: ReportDocument) -> Optional[str]:
    return environ(report).get(ROOT_COMM, "").strip() or UNSET


def runtime_variables(report: ReportDocument) -> Optional[str]:
    shared = sorted((key, value) for key, value in environ(report).items()
                    if key.startswith(_SHARED_PREFIXES) and not key.startswith(_PER_PROCESS))
    return "; ".join(f"{key}={value}" for key, value in shared) or NONE


def compile_cache(report: ReportDocument) -> Optional[str]:
    cache = as_dict(snapshot(report).get("compile_cache"))
    return str(cache.get("path") or cache.get("url") or NONE) if cache or snapshot(report) else None


def instance_type(report: ReportDocument) -> Optional[str]:
    value = report.node.instance_type
    return value if isinstance(value, str) else None


def efa_interfaces(report: ReportDocument) -> Optional[str]:
    count = json_count(snapshot(report).get("efa_functions"), maximum=MAX_EFA_INTERFACES)
    return str(count) if count is not None else None


def neuron_devices(report: ReportDocument) -> Optional[str]:
    pci = snapshot(report).get("pci")
    return str(len(pci)) if isinstance(pci, list) else None
