"""`neurondoctor venv create`: plan, print or build, then verify the result with `check`.

Progress goes to stderr: a live status line on a terminal, timestamped plain lines otherwise (CI logs,
cloud-init), through the `Progress` observer the builder reports to.
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Optional

from neurondoctor.actions.venv_builder import BuildError, build_commands, build_venv, find_uv
from neurondoctor.actions.venv_plan import PlanError, VenvPlan, plan_venv
from neurondoctor.command_runner import run_command
from neurondoctor.release_data.catalog import load_catalog

EXIT_USAGE = 2
PYTHON_PROBE = "import sys; print('%d.%d' % sys.version_info[:2])"


class PlainProgress:
    """`[12:01:07] step` lines, for logs."""

    def __init__(self) -> None:
        self.started = time.monotonic()

    def step(self, message: str) -> None:
        sys.stderr.write(f"[{time.strftime('%H:%M:%S')}] {message}\n")
        sys.stderr.flush()

    def close(self) -> None:
        self.step(f"done in {time.monotonic() - self.started:.1f} s")


class TerminalProgress:
    """A rich status line with the current step and the elapsed time."""

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(stderr=True)
        self.started = time.monotonic()
        self.status = self.console.status("starting")
        self.status.start()

    def step(self, message: str) -> None:
        self.console.print(f"[dim]{time.monotonic() - self.started:5.1f} s[/dim] {message}")
        self.status.update(message)

    def close(self) -> None:
        self.status.stop()


def interpreter_version(python: str) -> Optional[str]:
    result = run_command([python, "-I", "-c", PYTHON_PROBE], timeout=30)
    return result.stdout.strip() if result.ok else None


def describe_plan(plan: VenvPlan, target: Path, python: str, installer: str) -> str:
    commands = build_commands(plan, target, python, installer, find_uv())
    lines = [f"venv create {target}: Neuron {plan.release}, {plan.framework}, Python {plan.python} ({python}), "
             f"installer {installer}", "", "packages:"]
    lines += [f"  {package.requirement:<40} {package.why}" for package in plan.packages]
    lines += ["", "indexes:"]
    lines += [f"  index-url        {plan.index_url}"] if plan.index_url else ["  index-url        (pip's default)"]
    lines += [f"  extra-index-url  {url}" for url in plan.extra_index_urls]
    lines += [f"  find-links       {directory}" for directory in plan.find_links]
    lines += ["", "commands (in a temporary sibling, renamed into place when they succeed):",
              "  " + shlex.join(commands.create), "  " + shlex.join(commands.install),
              "", "guard: neurondoctor-constraints.txt, pip.conf (constraint + indexes), UV_CONSTRAINT in bin/activate"]
    return "\n".join(lines) + "\n"


def run_venv_create(path: str, release: str, framework: str, torch: Optional[str], python: Optional[str],
                    installer: Optional[str], index_url: Optional[str], extra_index_urls: Sequence[str],
                    find_links: Sequence[str], dry_run: bool, force: bool) -> int:
    catalog = load_catalog()
    python = python or "python3"
    version = interpreter_version(python)
    if version is None:
        sys.stderr.write(f"error: --python {python}: could not run it to read its version\n")
        return EXIT_USAGE
    chosen = installer or ("uv" if find_uv() else "pip")
    if chosen not in ("uv", "pip"):
        sys.stderr.write(f"error: --installer {chosen}: choose uv or pip\n")
        return EXIT_USAGE
    try:
        plan = plan_venv(catalog, release, version, framework=framework, torch=torch)
    except PlanError as error:
        sys.stderr.write(f"error: {error}\n")
        return EXIT_USAGE
    plan.index_url = index_url
    plan.extra_index_urls = list(extra_index_urls)
    plan.find_links = [str(Path(directory).absolute()) for directory in find_links]
    if not (index_url or extra_index_urls or find_links):
        plan.extra_index_urls = [catalog.pip_repository]
    target = Path(path).absolute()
    if dry_run:
        sys.stdout.write(describe_plan(plan, target, python, chosen))
        return 0
    progress = TerminalProgress() if sys.stderr.isatty() else PlainProgress()
    try:
        build_venv(plan, target, python, chosen, force=force, progress=progress)
    except BuildError as error:
        progress.close()
        sys.stderr.write(f"error: {error}\nNothing was left behind at {target}.\n")
        return 1
    except KeyboardInterrupt:
        progress.close()
        sys.stderr.write("interrupted: the partial environment was removed\n")
        return 130
    progress.step(f"built {target}; verifying it with neurondoctor check")
    progress.close()
    from neurondoctor.check_command import run as run_check_command

    return run_check_command(["--python", str(target / "bin" / "python")])
