"""`neurondoctor venv create` as a library: prepare the plan (refusing what cannot work before anything is
created), print it or build it, then verify the result with `check`'s own run and its health verdict.

Progress goes to the `Progress` observer the caller passes (the command line draws it; a library caller gets
silence).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from dataclasses import dataclass
from neurondoctor import exit_codes
from neurondoctor.actions.check.check_run import CheckOptions, run_check
from neurondoctor.actions.venv.builder import (
    BuildError,
    Progress,
    TargetRefused,
    build_commands,
    build_venv,
    check_target,
    ensurepip_wheels,
    find_uv,
)
from neurondoctor.actions.venv.plan import PlanError, VenvPlan, newest_release_plan, plan_venv
from neurondoctor.command_runner import run_command
from neurondoctor.release_data.catalog import ReleaseCatalog, load_catalog
from neurondoctor.report.model import Report
from neurondoctor.rules.fix import command
from neurondoctor.run_trust import refusal_to_run

PYTHON_PROBE = "import sys; print('%d.%d' % sys.version_info[:2])"
INSTALLERS = ("uv", "pip")


@dataclass
class VenvCreateOptions:
    path: str
    release: Optional[str]  # None: the newest release the data knows for this host and Python
    framework: str = "pytorch"
    torch: Optional[str] = None
    python: Optional[str] = None
    installer: Optional[str] = None
    index_url: Optional[str] = None
    extra_index_urls: Sequence[str] = ()
    find_links: Sequence[str] = ()
    force: bool = False


@dataclass
class PreparedVenv:
    """A plan that can be built: the pinned packages, where, with which interpreter and installer."""

    plan: VenvPlan
    target: Path
    python: str
    installer: str
    force: bool


def host_family(catalog: ReleaseCatalog) -> Optional[str]:
    """This machine's instance family (`trn1`) from its DMI strings and the instance data, None off EC2 or for a
    type the data does not list."""
    from neurondoctor.host.instance_identity import read_instance_type
    from neurondoctor.host.rootfs import RootFS

    instance_type, _ = read_instance_type(RootFS("/"))
    family = catalog.instances.get(instance_type or "", {}).get("family")
    return str(family) if family else None


def interpreter_version(python: str) -> Optional[str]:
    result = run_command([python, "-I", "-c", PYTHON_PROBE], timeout=30)
    return result.stdout.strip() if result.ok else None


def prepare_venv(options: VenvCreateOptions) -> PreparedVenv:
    """The plan, or UserError for an interpreter, installer or release that cannot give a working environment."""
    catalog = load_catalog()
    python = options.python or "python3"
    refusal = refusal_to_run(python)
    if refusal:
        raise exit_codes.UserError(refusal)
    version = interpreter_version(python)
    if version is None:
        raise exit_codes.UserError(f"--python {python}: could not run it to read its version")
    installer = options.installer or ("uv" if find_uv() else "pip")
    if installer not in INSTALLERS:
        raise exit_codes.UserError(f"--installer {installer}: choose {' or '.join(INSTALLERS)}")
    try:
        plan = (plan_venv(catalog, options.release, version, framework=options.framework, torch=options.torch)
                if options.release else
                newest_release_plan(catalog, version, options.framework, options.torch, host_family(catalog)))
    except PlanError as error:
        raise exit_codes.UserError(str(error)) from error
    plan.index_url = options.index_url
    plan.extra_index_urls = list(options.extra_index_urls)
    plan.find_links = [str(Path(directory).absolute()) for directory in options.find_links]
    if not (options.index_url or options.extra_index_urls or options.find_links):
        # The Neuron repository, and the PyTorch CPU index: beside it pip and uv take `torch==2.9.0+cpu` (a local
        # version ranks above PyPI's 2.9.0), not PyPI's x86_64 CUDA build with gigabytes of unused nvidia-* packages
        # (ND-TORCH-002). The guard's pip.conf keeps both, so later installs do the same.
        plan.extra_index_urls = [catalog.pip_repository, str(catalog.compat.get("torch_cpu_index"))]
    target = Path(options.path).absolute()
    try:
        check_target(target, options.force)  # before anything starts: no progress, no "done", exit 2
    except TargetRefused as error:
        raise error.usage_error() from error
    return PreparedVenv(plan, target, python, installer, options.force)


def describe_plan(prepared: PreparedVenv) -> str:
    plan = prepared.plan
    bundled = ensurepip_wheels(prepared.python) if prepared.installer == "uv" else None
    commands = build_commands(plan, prepared.target, prepared.python, prepared.installer, find_uv(), bundled)
    lines = [f"venv create {prepared.target}: Neuron {plan.release}, {plan.framework}, Python {plan.python} "
             f"({prepared.python}), installer {prepared.installer}"]
    lines += [f"release: {plan.release} ({plan.chosen_because})"] if plan.chosen_because else []
    lines += ["", "packages:"]
    lines += [f"  {package.requirement:<40} {package.why}" for package in plan.packages]
    lines += ["", "indexes:"]
    lines += [f"  index-url        {plan.index_url}"] if plan.index_url else ["  index-url        (pip's default)"]
    lines += [f"  extra-index-url  {url}" for url in plan.extra_index_urls]
    lines += [f"  find-links       {directory}" for directory in plan.find_links]
    lines += ["", "commands (in a temporary sibling, renamed into place when they succeed):",
              "  " + command(*commands.create).render(),
              *(["  " + command(*commands.seed).render()] if commands.seed else []),
              "  " + command(*commands.install).render(),
              "", "guard: neurondoctor-constraints.txt, pip.conf (constraint + indexes), UV_CONSTRAINT in bin/activate"]
    return "\n".join(lines) + "\n"


def create_venv(prepared: PreparedVenv, progress: Progress, verbose: bool = False) -> Report:
    """Build the environment, then check it; the report's verdict is the command's. A failed build raises
    UserError (exit 1) after removing everything it made; Ctrl-C propagates after the same clean-up."""
    try:
        build_venv(prepared.plan, prepared.target, prepared.python, prepared.installer, force=prepared.force,
                   progress=progress)
    except TargetRefused as error:  # something appeared at PATH while it built: as refused before
        raise error.usage_error() from error
    except BuildError as error:
        detail = f"\n{error.detail}" if verbose and error.detail else ""
        raise exit_codes.UserError(f"{error.message}. Nothing was left behind at {prepared.target}; next: "
                                   f"{error.next_step}{detail}", exit_codes.FINDINGS) from error
    progress.step(f"built {prepared.target}; verifying it with neurondoctor check")
    return run_check(CheckOptions(pythons=[str(prepared.target / "bin" / "python")]))
