"""`check` as a library: collect facts, run the selected checks over them, judge the verdict, build the report.

Collectors and rules are each guarded: a crash becomes a `crashed` check, a collector that could not read what a
check needs makes that check `unknown`, and the other checks still report (flutter doctor's "crashed
validator"). The verdict is judged once here, from all of it (report/health.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Optional

from neurondoctor import __version__, exit_codes
from neurondoctor.facts import CollectorFailure, Facts, HostFacts, ListedEnvironment
from neurondoctor.facts.names import NEURON_ENV_PREFIXES
from neurondoctor.facts.python_env import PythonEnvironment
from neurondoctor.host.collect_host import collect_host_snapshot
from neurondoctor.host.compile_cache import CacheChoice
from neurondoctor.host.host_tree import missing_host_parts
from neurondoctor.host.instance_identity import read_hostname, read_instance_id, read_instance_type
from neurondoctor.host.mount_table import mounts_of
from neurondoctor.host.rootfs import RootFS
from neurondoctor.pyenv.layouts import holds_any
from neurondoctor.pyenv.static_venv import filesystem_for, inspect_venv
from neurondoctor.release_data.catalog import ReleaseCatalog, load_catalog
from neurondoctor.report.health import judge_health
from neurondoctor.report.model import (
    STATUS_CRASHED,
    STATUS_ERROR,
    STATUS_INFO,
    STATUS_OK,
    STATUS_SKIPPED,
    STATUS_UNKNOWN,
    STATUS_WARNING,
    UNJUDGED_STATUSES,
    CheckResult,
    EnvironmentSummary,
    InputProblem,
    NodeIdentity,
    Report,
)
from neurondoctor.rules.check import Check
from neurondoctor.rules.context import RuleContext, neuron_host
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import quote_word
from neurondoctor.rules.fix_plan import environment_plan
from neurondoctor.rules.python_stack.labels import environment_label
from neurondoctor.rules.python_stack.torch_build import torch_version_shown
from neurondoctor.rules.registry import finding_selected, known_selector, select_checks

ENVIRONMENTS_COLLECTOR = "environments"


@dataclass
class CheckOptions:
    """What `check` (and every action that checks: venv create, health, bootstrap) is asked to judge."""

    root: str = "/"
    venvs: Sequence[str] = ()
    pythons: Sequence[str] = ()
    release: Optional[str] = None
    select: Sequence[str] = ()
    skip: Sequence[str] = ()
    environ: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    kernel_log_since: Optional[str] = None  # the kernel log window (default: this boot)
    # Unattended health judges what root or the operator controls: with no environment named, only root-owned ones
    # under /opt; the default compile cache only where root controls the way to it.
    operator_environments: bool = False
    compile_cache: Optional[str] = None  # the cache health.conf names: judged instead of the environment's


def validate_options(options: CheckOptions, catalog: ReleaseCatalog) -> None:
    """Raises UserError for a root that is not a directory, an unknown selector or release."""
    if not os.path.isdir(options.root):
        raise exit_codes.UserError(f"--root {options.root}: not a directory")
    for item in [*options.select, *options.skip]:
        if not known_selector(item):
            raise exit_codes.UserError(f"--select/--skip {item!r}: not a check, finding id or category "
                                       "(see `neurondoctor check --list`)")
    if options.release is not None and options.release not in catalog.releases:
        published = next((item for item in catalog.end_of_support.get("releases_without_package_data", [])
                          if isinstance(item, dict) and item.get("release") == options.release), None)
        if published is not None:
            raise exit_codes.UserError(f"--release {options.release}: published on {published.get('date')}, but its "
                                       "package lists are not in neurondoctor's data (see `neurondoctor manifests "
                                       f"status`); newest in the data: {catalog.latest}")
        raise exit_codes.UserError(f"--release {options.release}: not a known Neuron release (newest known: "
                                   f"{catalog.latest}; see `neurondoctor manifests list`)")
    for python in options.pythons:  # `--python` runs the interpreter: never one another user controls, as root
        from neurondoctor.run_trust import refusal_to_run

        refusal = refusal_to_run(python)
        if refusal:
            raise exit_codes.UserError(f"--python {refusal}")


ENV_VALUE_LIMIT = 4096


def relevant_environ(environ: Mapping[str, str], named: Collection[str] = ()) -> dict[str, str]:
    """Neuron/XLA/Python variables only, plus the ones the release data names (`NEURONCORE_GROUP_SIZES`,
    `FI_PROVIDER`, `BUCKET_CAP_MB`: env-vars.json), so the rules see what the docs name; the report must not carry
    the rest of a user's environment. Redacted, each cut to ENV_VALUE_LIMIT characters (a megabyte value must not
    make a megabyte report)."""
    from neurondoctor.redaction import redact_variable

    return {key: redact_variable(key, value[:ENV_VALUE_LIMIT]) for key, value in sorted(environ.items())
            if key.startswith(NEURON_ENV_PREFIXES) or key in named}


def _timed(timings: dict[str, float], key: str, started: float) -> None:
    timings[key] = (time.perf_counter() - started) * 1000


def collect_host(fs: RootFS, environ: Mapping[str, str], timings: dict[str, float],
                 kernel_log_since: Optional[str] = None, cache_choice: CacheChoice = CacheChoice()) -> HostFacts:
    host = HostFacts(root=str(fs.root))
    host.instance_type, host.instance_type_source = read_instance_type(fs)
    host.instance_id = read_instance_id(fs)
    host.hostname = read_hostname(fs)
    host.snapshot = collect_host_snapshot(fs, environ, host.collector_failures, timings, kernel_log_since,
                                          cache_choice)
    if host.snapshot.compile_cache is not None and host.snapshot.compile_cache.index is not None:
        from neurondoctor.actions.cache.failure_meanings import explain_failures

        explain_failures(host.snapshot.compile_cache.index)
    return host


def _judging_names(catalog: ReleaseCatalog) -> frozenset[str]:
    """What makes a discovered environment worth judging: torch, or any Neuron pip package of any line."""
    return catalog.neuron_pip_packages() | {"torch"}


def collect_environments(fs: RootFS, options: CheckOptions, timings: dict[str, float],
                         failures: list[CollectorFailure], catalog: ReleaseCatalog,
                         listed: list[ListedEnvironment]) -> tuple[list[PythonEnvironment], bool]:
    """The environments the rules judge, and whether discovery was cut at its bound. Named ones are always judged;
    a discovered one outside the Neuron places only when it holds torch or a Neuron package (a look at its folder
    names, before any metadata is read); the others go to `listed`."""
    targets: list[tuple[str, bool, str, Optional[str]]] = [(path, False, "argument", None) for path in options.venvs]
    targets += [(path, True, "argument", None) for path in options.pythons]
    cut = False
    if not targets:  # discovery (its walk and its record classes) only when no environment is named
        from neurondoctor.pyenv.discovery import discover_environments, operator_environments, path_interpreter

        if options.operator_environments:
            discovered = operator_environments(fs)
        else:
            discovery = discover_environments(fs, options.environ)
            discovered, cut = discovery.found, discovery.cut
        names = _judging_names(catalog)
        for found in discovered:
            if found.live or found.always_judged:
                targets.append((found.path, found.live, found.reason, found.kind))
                continue
            view, inner = filesystem_for(fs, found.path)
            if holds_any(view, inner, names):
                targets.append((found.path, False, found.reason, found.kind))
            else:
                listed.append(ListedEnvironment(found.path, found.kind or "venv", found.reason))
        fallback = path_interpreter(options.environ) if fs.is_live and not targets else None
        if fallback is not None:
            targets.append((fallback.path, True, fallback.reason, None))
    environments = []
    for path, live, reason, kind in targets:
        started = time.perf_counter()
        try:
            if live:
                from neurondoctor.pyenv.live_interpreter import inspect_interpreter

                environments.append(inspect_interpreter(fs, path, options.environ, discovered_by=reason))
            else:
                environments.append(inspect_venv(fs, path, options.environ, discovered_by=reason, kind=kind))
        except Exception as error:  # a collector bug must not cost the whole report
            failures.append(CollectorFailure(ENVIRONMENTS_COLLECTOR,
                                             f"inspecting {path} crashed: {type(error).__name__}: {error}"))
        _timed(timings, f"python-env:{path}", started)
    judged = {_prefix_of(env) for env in environments}
    listed[:] = [item for item in listed if os.path.realpath(item.path) not in judged]  # judged live: not twice
    return environments, cut


def _prefix_of(env: PythonEnvironment) -> str:
    """Where an environment lives: its folder, or for a live interpreter the prefix its executable is in."""
    if env.mode == "live" and env.interpreter_target:
        return os.path.dirname(os.path.dirname(os.path.realpath(env.interpreter_target)))
    return os.path.realpath(env.path)


def _status(findings: list[Finding]) -> str:
    severities = {finding.severity for finding in findings}
    if SEVERITY_ERROR in severities:
        return STATUS_ERROR
    if SEVERITY_WARNING in severities:
        return STATUS_WARNING
    return STATUS_INFO if findings else STATUS_OK


def _describe(failures: list[CollectorFailure]) -> str:
    """`could not collect: hardware, ecc-counters: REASON; packages: OTHER`: a reason shared by several collectors
    (a tree that is not a host fails them all) is said once."""
    by_reason: dict[str, list[str]] = {}
    for failure in failures:
        by_reason.setdefault(failure.reason, []).append(failure.collector)
    return "could not collect: " + "; ".join(f"{', '.join(names)}: {reason}" for reason, names in by_reason.items())


def run_one_check(ctx: RuleContext, check: Check, select: Sequence[str], skip: Sequence[str]) -> CheckResult:
    """One area: unknown when what it needs could not be collected, skipped when it does not apply, else its
    rules' findings (a crashed rule makes it crashed and the other rules still run)."""
    started = time.perf_counter()

    def result(status: str, findings: list[Finding], error: Optional[str], summary: str = "") -> CheckResult:
        return CheckResult(check.id, check.title, status, (time.perf_counter() - started) * 1000, findings,
                           error, summary)

    failed = ctx.facts.failed(check.needs)
    if failed:
        return result(STATUS_UNKNOWN, [], _describe(failed))
    try:
        applies = check.applies(ctx)
    except Exception as crash:  # a broken predicate is a crashed check, not a lost report
        return result(STATUS_CRASHED, [], f"{check.id} crashed deciding whether it applies: {crash}")
    if not applies:
        return result(STATUS_SKIPPED, [], None, check.not_applicable(ctx) if check.not_applicable else "")
    findings: list[Finding] = []
    errors: list[str] = []
    for rule in check.rules:
        try:
            findings.extend(rule(ctx))
        except Exception as crash:  # one crashed rule must not hide the others
            errors.append(f"{rule.__name__} crashed: {type(crash).__name__}: {crash}")
    undeclared = check.undeclared(findings)
    if undeclared:  # a rule emitting what its check does not declare is a bug that --list and explain would miss
        errors.append(f"{check.id} emitted undeclared finding(s): {', '.join(undeclared)}")
    findings = [finding for finding in findings if finding_selected(finding, select, skip)]
    if errors:
        return result(STATUS_CRASHED, findings, "; ".join(errors))
    try:
        summary = check.summary(ctx)
    except Exception as crash:  # the healthy line is decoration: its bug must not turn a verdict
        summary = f"(no summary: {type(crash).__name__}: {crash})"
    return result(_status(findings), findings, None, summary)


def run_checks(ctx: RuleContext, checks: Sequence[Check], select: Sequence[str],
               skip: Sequence[str]) -> list[CheckResult]:
    return [run_one_check(ctx, check, select, skip) for check in checks]


def summarize_environment(ctx: RuleContext, env: PythonEnvironment) -> EnvironmentSummary:
    verdict = ctx.release_of(env)
    torch = env.effective_distributions().get("torch")
    build = env.torch_build()
    return EnvironmentSummary(
        path=env.path,
        mode=env.mode,
        kind=env.kind if env.exists else None,
        holds=environment_label(env, ctx.catalog),
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
        placeholders={dist.display_name: dist.version for dist in env.effective_distributions().values()
                      if dist.placeholder},
    )


def plan_environment(summary: EnvironmentSummary, env: PythonEnvironment, findings: Sequence[Finding]) -> None:
    """The environment's one combined fix, from the findings whose evidence names it."""
    own = [finding for finding in findings if finding.evidence.get("venv") == env.path and finding.fix]
    if own and env.interpreter:
        summary.fix_plan = environment_plan(own, env.interpreter)
        summary.fix_plan_findings = [finding.id for finding in own]


def next_steps(ctx: RuleContext) -> list[str]:
    """Off Neuron hardware and without --release, a torch environment is a porting start, not a finding: one
    line with the probe that lists CPU fallbacks and the venv that runs on Trainium."""
    if ctx.target_release or neuron_host(ctx):
        return []
    for env in ctx.facts.environments:
        stack = ctx.torch_stack(env)
        if stack.torch is not None and stack.framework is None:
            target = quote_word(f"{env.path.rstrip('/')}-neuron")
            return [f"neurondoctor probe ops mymodel.py:build (which ops would fall back to CPU on Trainium) · "
                    f"neurondoctor venv create {target} --release {ctx.catalog.whole_latest} (the environment for it)"]
    return []


def unchecked_reasons(checks: Sequence[CheckResult], input_problems: Sequence[InputProblem],
                      internal_problems: Sequence[str]) -> list[str]:
    """Everything that kept the run from judging something: crashed and unknown checks, unusable input. Input that
    held nothing to judge (a `--root` that is no host) is the one reason: every area's own is that one again."""
    nothing = [f"{problem.source}: {problem.message}" for problem in input_problems if problem.judged_nothing]
    if nothing:
        return nothing + list(internal_problems)
    reasons = [f"{check.title}: {check.error}" for check in checks if check.status in UNJUDGED_STATUSES]
    reasons += [f"{problem.source}: {problem.message}" for problem in input_problems]
    return reasons + list(internal_problems)


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
    host = collect_host(fs, options.environ, timings, options.kernel_log_since,
                        CacheChoice(options.compile_cache, unattended=options.operator_environments))
    _timed(timings, "host", step)
    listed: list[ListedEnvironment] = []
    step = time.perf_counter()
    environments, cut = collect_environments(fs, options, timings, host.collector_failures, catalog, listed)
    host.snapshot.mounts += mounts_of(fs, host.snapshot.mount_table, [env.path for env in environments])
    _timed(timings, "environments", step)
    environ = relevant_environ(options.environ, catalog.env_var_names)
    facts = Facts(host=host, environments=environments, environ=environ, listed_environments=listed,
                  environments_cut_at=len(environments) + len(listed) if cut else None)
    ctx = RuleContext(facts, catalog, target_release=options.release)
    checks = run_checks(ctx, select_checks(options.select, options.skip), options.select, options.skip)
    summaries = []
    for env in environments:
        try:
            summaries.append(summarize_environment(ctx, env))
        except Exception as error:  # a summary bug must not cost the report
            internal.append(f"summarising {env.path} crashed: {type(error).__name__}: {error}")
    input_problems = [InputProblem(problem.path, problem.message) for problem in catalog.problems]
    missing = missing_host_parts(fs)
    if missing:
        input_problems.append(InputProblem(str(fs.root), f"not a Linux host tree: {'; '.join(missing)}; nothing "
                                                         "about a host was judged", judged_nothing=True))
    findings = [finding for check in checks for finding in check.findings]
    by_path = {env.path: env for env in environments}
    for summary in summaries:
        plan_environment(summary, by_path[summary.path], findings)
    host_release = ctx.host_release()
    return Report(
        tool_version=__version__,
        generated_at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        root=str(fs.root),
        facts=facts,
        environments=summaries,
        latest_release=catalog.latest,
        checks=checks,
        health=judge_health(findings, unchecked_reasons(checks, input_problems, internal)),
        node=NodeIdentity(host.hostname, host.instance_id, host.instance_type),
        input_problems=input_problems,
        internal_problems=internal,
        collector_timings_ms=timings,
        duration_ms=(time.perf_counter() - started) * 1000,
        target_release=options.release,
        host_release=host_release.release,
        host_release_versions=host_release.versions,
        host_release_consistent=not (host_release.outliers or host_release.unknown),
        host_agreed_releases=host_release.agreed,
        next_steps=next_steps(ctx),
    )
