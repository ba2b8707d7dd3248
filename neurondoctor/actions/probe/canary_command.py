"""`neurondoctor probe canary`: does this environment's torch-neuronx compile and run on a NeuronCore?

The run is judged by rules/probes/canary.py; an import failure is explained further by `check` on the same
interpreter (its errors join the report). No device (unless `--cpu-backend`) or no torch-neuronx is Skipped
(exit 4); a canary that gave no document raises UserError with exit 3.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Optional

from neurondoctor import exit_codes
from neurondoctor.actions.check.check_run import CheckOptions, run_check
from neurondoctor.actions.probe.probe_runner import default_python, probe_document, probe_health, run_probe
from neurondoctor.host.neuron_devices import read_device_nodes
from neurondoctor.host.rootfs import RootFS
from neurondoctor.release_data.probe_data import load_error_signatures
from neurondoctor.report.probe_report import ProbeReport, new_probe_report
from neurondoctor.rules.finding import SEVERITY_ERROR
from neurondoctor.rules.probes.canary import failure_findings, result_findings


@dataclass
class CanaryOptions:
    python: Optional[str] = None
    root: str = "/"
    cpu_backend: bool = False
    runs: int = 100
    timeout: float = 1800.0
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    progress: Optional[Callable[[str], None]] = None  # what the probe is doing, for the person waiting
    perf: bool = False  # the performance canary: a matmul and a copy timed on every NeuronCore
    quick: bool = False  # with perf: small sizes, a look in seconds per core instead of a measure


# Device name in sysfs -> family (drv:neuron_device.h strings, tests/host_fixture.py ARCH)
_FAMILIES = {"Trainium1": "trn1", "Trainium2": "trn2", "Trainium3": "trn3", "Inferentia2": "inf2"}
QUICK_SIZES = ["--size", "512", "--iters", "3", "--copy-mib", "8"]


def run_perf(options: CanaryOptions) -> ProbeReport:
    """`probe canary --perf`: every NeuronCore of the node, each in a process pinned to it."""
    from neurondoctor.host.kernel_modules import read_loaded_driver_version
    from neurondoctor.host.neuron_devices import read_sysfs_devices
    from neurondoctor.rules.probes.perf import logical_cores, perf_findings

    interpreter = options.python or default_python(options.environ)
    fs = RootFS(options.root)
    if not read_device_nodes(fs):
        raise exit_codes.Skipped(f"no Neuron device under {options.root} (/dev/neuron*): the performance canary "
                                 "measures devices")
    devices, _ = read_sysfs_devices(fs, read_loaded_driver_version(fs))
    family = next((_FAMILIES[device.device_name] for device in devices if device.device_name in _FAMILIES), None)
    lnc = str(options.environ.get("NEURON_LOGICAL_NC_CONFIG", ""))
    cores = logical_cores([device.core_count or 0 for device in devices], family, lnc)
    if cores < 1:
        raise exit_codes.Skipped(f"the driver under {options.root} shows no NeuronCore (sysfs core_count)")
    try:
        signatures = load_error_signatures()
    except (OSError, ValueError) as error:
        raise exit_codes.UserError(f"error signatures unusable: {error}", exit_codes.UNKNOWN) from error
    arguments = ["--cores", str(cores), "--timeout", str(int(options.timeout))] + (QUICK_SIZES if options.quick else [])
    started = time.perf_counter()
    outcome = run_probe(interpreter, "perf_canary.py", arguments, timeout=options.timeout + 60,
                        env=dict(options.environ), progress=options.progress)
    document = probe_document(outcome, "the performance canary")
    findings = perf_findings(document, family, lnc, signatures)
    return new_probe_report("canary", interpreter, findings, probe_health(findings),
                            (time.perf_counter() - started) * 1000,
                            {**document, "python": interpreter, "family": family})


def run_canary(options: CanaryOptions) -> ProbeReport:
    if options.perf:
        return run_perf(options)
    interpreter = options.python or default_python(options.environ)
    if not options.cpu_backend and not read_device_nodes(RootFS(options.root)):
        raise exit_codes.Skipped(f"no Neuron device under {options.root} (/dev/neuron*); `--cpu-backend` compiles "
                                 "without one")
    try:
        signatures = load_error_signatures()
    except (OSError, ValueError) as error:
        raise exit_codes.UserError(f"error signatures unusable: {error}", exit_codes.UNKNOWN) from error
    arguments = ["--runs", str(options.runs)] + (["--cpu-backend"] if options.cpu_backend else [])
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="neurondoctor-canary-") as workdir:
        outcome = run_probe(interpreter, "canary.py", [*arguments, "--workdir", workdir], timeout=options.timeout,
                            env=dict(options.environ), progress=options.progress)
    document = probe_document(outcome, "the canary")
    if document.get("status") == "error":
        findings = failure_findings(document, interpreter, signatures)
        if document.get("stage") == "import":
            explained = run_check(CheckOptions(pythons=[interpreter], environ=options.environ))
            findings += [finding for finding in explained.findings if finding.severity == SEVERITY_ERROR]
    else:
        findings = result_findings(document)
    return new_probe_report("canary", interpreter, findings, probe_health(findings),
                            (time.perf_counter() - started) * 1000, {**document, "python": interpreter})
