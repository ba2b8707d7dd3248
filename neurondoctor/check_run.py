"""`check`: collect facts, run the selected checks over them, and build the report.

Collectors and rules are each guarded: a crash becomes a `crashed` check or a recorded problem, and the
other checks still report (flutter doctor's "crashed validator").
"""

from __future__ import annotations

import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Optional

from neurondoctor import __version__
from neurondoctor.facts import Facts, HostFacts, PythonEnvironment
from neurondoctor.host.collect_host import collect_host_snapshot
from neurondoctor.host.instance_identity import read_instance_type
from neurondoctor.host.rootfs import RootFS
from neurondoctor.pyenv.discovery import discover_environments
from neurondoctor.pyenv.static_venv import inspect_venv
from neurondoctor.release_data.catalog import ReleaseCatalog, load_catalog
from neurondoctor.report.model import (
    STATUS_CRASHED,
    STATUS_ERROR,
    STATUS_INFO,
    STATUS_OK,
    STATUS_SKIPPED,
    STATUS_WARNING,
    CheckResult,
    EnvironmentSummary,
    InputProblem,
    Report,
)
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from neurondoctor.rules.registry import Check, finding_selected, select_checks
from neurondoctor.rules.stock_torch_rules import torch_version_shown

ENV_VARIABLE_PREFIXES = ("NEURON_", "XLA_", "PJRT_", "AWS_NEURON_", "PYTHON", "VIRTUAL_ENV", "CONDA_PREFIX",
                         "PT_XLA_", "FI_EFA_", "NCCL_", "LD_LIBRARY_PATH")


@dataclass
class CheckOptions:
    root: str = "/"
    venvs: Sequence[str] = ()
    pythons: Sequence[str] = ()
    release: Optional[str] = None
    select: Sequence[str] = ()
    skip: Sequence[str] = ()
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))


def relevant_environ(environ: Mapping[str, str]) -> dict[str, str]:
    """Neuron/XLA/Python variables only: the report must not carry the rest of a user's environment."""
    from neurondoctor.redaction import redact_secrets

    return {key: redact_secrets(value) for key, value in sorted(environ.items())
            if key.startswith(ENV_VARIABLE_PREFIXES)}


def _timed(timings: dict[str, float], key: str, started: float) -> None:
    timings[key] = (time.perf_counter() - started) * 1000


def collect_host(fs: RootFS, environ: Mapping[str, str], timings: dict[str, float]) -> HostFacts:
    host = HostFacts(root=str(fs.root))
    host.instance_type, host.instance_type_source = read_instance_type(fs)
    host.snapshot = collect_host_snapshot(fs, environ, host.problems, timings)
    return host


def collect_environments(fs: RootFS, options: CheckOptions, timings: dict[str, float],
                         problems: list[str]) -> list[PythonEnvironment]:
    targets = [(path, False, "argument") for path in options.venvs]
    targets += [(path, True, "argument") for path in options.pythons]
    if not targets:
        targets = [(found.path, found.live, found.reason) for found in discover_environments(fs, options.environ)]
    environments = []
    for path, live, reason in targets:
        started = time.perf_counter()
        try:
            if live:
                from neurondoctor.pyenv.live_interpreter import inspect_interpreter

                environments.append(inspect_interpreter(fs, path, options.environ, discovered_by=reason))
            else:
                environments.append(inspect_venv(fs, path, options.environ, discovered_by=reason))
        except Exception as error:  # a collector bug must not cost the whole report
            problems.append(f"inspecting {path} crashed: {type(error).__name__}: {error}")
        _timed(timings, f"python-env:{path}", started)
    return environments


def run_checks(ctx: RuleContext, checks: Sequence[Check], select: Sequence[str],
               skip: Sequence[str]) -> list[CheckResult]:
    results = []
    for check in checks:
        started = time.perf_counter()
        findings: list[Finding] = []
        error: Optional[str] = None
        try:
            applies = check.applies(ctx)
        except Exception as crash:  # a broken predicate is a crashed check, not a lost report
            applies, error = False, f"{check.id} crashed deciding whether it applies: {crash}"
        if not applies and error is None:
            results.append(CheckResult(check.id, check.title, STATUS_SKIPPED, 0.0))
            continue
        for rule in check.rules:
            try:
                findings.extend(rule(ctx))
            except Exception as crash:  # one crashed rule must not hide the others
                error = f"{rule.__name__} crashed: {type(crash).__name__}: {crash}"
        findings = [finding for finding in findings if finding_selected(finding, select, skip)]
        results.append(CheckResult(check.id, check.title, _status(findings, error),
                                   (time.perf_counter() - started) * 1000, findings, error))
    return results


def _status(findings: list[Finding], error: Optional[str]) -> str:
    if error:
        return STATUS_CRASHED
    severities = {finding.severity for finding in findings}
    if SEVERITY_ERROR in severities:
        return STATUS_ERROR
    if SEVERITY_WARNING in severities:
        return STATUS_WARNING
    return STATUS_INFO if findings else STATUS_OK


def summarize_environment(ctx: RuleContext, env: PythonEnvironment) -> EnvironmentSummary:
    verdict = ctx.release_of(env)
    torch = env.effective_distributions().get("torch")
    build = env.torch_build()
    return EnvironmentSummary(
        path=env.path,
        mode=env.mode,
        python=env.python_version,
        release=verdict.release,
        releases=verdict.agreed,
        consistent=verdict.consistent and not verdict.unknown,
        anchor=verdict.anchor.dist.name if verdict.anchor else None,
        torch=torch_version_shown(torch, build) if torch else None,
        torch_flavour=build.flavour if (torch and build) else None,
        neuron_packages={package.dist.display_name: package.dist.version for package in verdict.packages},
        discovered_by=env.discovered_by,
        guarded_release=str(env.neurondoctor_venv.get("release")) if env.neurondoctor_venv else None,
    )


def run_check(options: CheckOptions, catalog: Optional[ReleaseCatalog] = None) -> Report:
    """Everything `neurondoctor check` does short of rendering."""
    started = time.perf_counter()
    timings: dict[str, float] = {}
    internal: list[str] = []
    step = time.perf_counter()
    catalog = catalog or load_catalog()
    _timed(timings, "manifests", step)
    fs = RootFS(options.root)
    step = time.perf_counter()
    host = collect_host(fs, options.environ, timings)
    _timed(timings, "host", step)
    environments = collect_environments(fs, options, timings, internal)
    facts = Facts(host=host, environments=environments, environ=relevant_environ(options.environ))
    ctx = RuleContext(facts, catalog, target_release=options.release)
    checks = run_checks(ctx, select_checks(options.select, options.skip), options.select, options.skip)
    summaries = []
    for env in environments:
        try:
            summaries.append(summarize_environment(ctx, env))
        except Exception as error:  # a summary bug must not cost the report
            internal.append(f"summarising {env.path} crashed: {type(error).__name__}: {error}")
    return Report(
        tool_version=__version__,
        generated_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        root=str(fs.root),
        facts=facts,
        environments=summaries,
        latest_release=catalog.latest,
        checks=checks,
        input_problems=[InputProblem(problem.path, problem.message) for problem in catalog.problems],
        internal_problems=internal,
        collector_timings_ms=timings,
        duration_ms=(time.perf_counter() - started) * 1000,
        target_release=options.release,
        host_release=ctx.host_release().release,
        host_release_versions=ctx.host_release().versions,
        host_release_consistent=not (ctx.host_release().outliers or ctx.host_release().unknown),
        host_agreed_releases=ctx.host_release().agreed,
    )
