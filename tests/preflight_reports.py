"""Node reports for the cluster preflight's unit tests and benchmark: `neurondoctor.report/1` documents shaped as a
trn1.32xlarge's `check --json` writes them (the facts the preflight compares: the environment's Neuron variables,
PCI, EFA, the compile cache, the environments' packages), each field one way to make a node odd. Versions are the
2.31.1 stack of docs/neuron-facts.md §1.3 (tests/host_fixture.py, tests/neuron_envs.py)."""

from __future__ import annotations

from typing import Any, Optional

from neurondoctor.report.reader import ReportDocument, parse_report
from tests.host_fixture import HOST_STACKS, STACK_PACKAGES
from tests.neuron_envs import HEALTHY_STACKS

BASE_ENV = {"NEURON_CC_FLAGS": "--model-type=transformer --cache_dir=/fsx/neuron-cache",
            "NEURON_RT_ROOT_COMM_ID": "10.0.3.17:62182", "FI_EFA_USE_DEVICE_RDMA": "1", "FI_PROVIDER": "efa"}


def node_document(name: str, *, environ: Optional[dict[str, Optional[str]]] = None, compiler: Optional[str] = None,
                  efa: int = 8, devices: int = 16, instance_type: str = "trn1.32xlarge",
                  findings: tuple[tuple[str, str, str, str], ...] = (), runtime: Optional[str] = None,
                  state: str = "ok", cache: str = "/fsx/neuron-cache") -> dict[str, Any]:
    """One node's report; `environ` values of None unset a base variable; `findings` are (id, category, severity,
    title)."""
    stack = HEALTHY_STACKS["2.31.1"]
    variables = dict(BASE_ENV)
    for key, value in (environ or {}).items():
        if value is None:
            variables.pop(key, None)
        else:
            variables[key] = value
    host_packages = dict(zip(STACK_PACKAGES, HOST_STACKS["2.31.1"]))
    if runtime:
        host_packages["aws-neuronx-runtime-lib"] = runtime
    pci = [{"address": f"0000:{16 + index:02x}:1e.0", "device_id": "0x7164", "family": "trn1"}
           for index in range(devices)]
    return {
        "schema": "neurondoctor.report/1", "tool": {"name": "neurondoctor", "version": "0.1.0"},
        "generated_at": "2026-12-03T04:00:00Z", "root": "/",
        "node": {"hostname": f"ip-10-0-3-{name.rsplit('-', 1)[-1]}", "instance_id": None,
                 "instance_type": instance_type},
        "health": {"state": state, "reasons": [title for _, _, severity, title in findings if severity == "error"]},
        "release": {"host": "2.31.1", "environments": {"/opt/venv": "2.31.1"}, "latest_known": "2.33.0",
                    "target": None, "host_packages": host_packages},
        "environments": [{"path": "/opt/venv", "release": "2.31.1", "torch": stack.torch,
                          "neuron_packages": {"torch-neuronx": stack.torch_neuronx,
                                              "neuronx-cc": compiler or stack.neuronx_cc,
                                              "libneuronxla": stack.libneuronxla, "torch-xla": stack.torch_xla}}],
        "checks": [],
        "findings": [{"id": finding_id, "category": category, "severity": severity, "title": title}
                     for finding_id, category, severity, title in findings],
        "errors": [], "summary": {},
        "facts": {"environ": variables, "host": {"snapshot": {
            "pci": pci, "efa_functions": efa, "efa_present": efa > 0,
            "compile_cache": {"path": cache, "source": "NEURON_CC_FLAGS --cache_dir", "remote": False}}}},
    }


def node_report(name: str, **changes: Any) -> ReportDocument:
    return parse_report(node_document(name, **changes))
