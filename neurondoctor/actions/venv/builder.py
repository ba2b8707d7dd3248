"""Builds a planned environment: in a temporary sibling, one resolver run, then renamed into place.

A failed or interrupted (Ctrl-C, SIGTERM) build removes the sibling, stops the installer's whole process group and
never touches an existing environment. `--force` replaces only a directory that is a virtual environment
(`pyvenv.cfg` and `bin/python`, or our own marker), and only after the new one is built (the old one is moved
aside, then deleted); anything else at PATH is refused, `--force` or not. A lock beside PATH keeps two builds of
one PATH apart, and PATH is checked again just before the rename, so a directory that appeared meanwhile is
never clobbered. pip comes from the interpreter's own `ensurepip` wheels (offline: `python -m venv` seeds them,
and uv installs the bundled wheel through `--find-links`), so a mirror that carries only the Neuron wheels still
works.
Virtual environments record their own path (script shebangs, `bin/activate`, `pyvenv.cfg`), so after the
rename those mentions of the temporary path are rewritten to the final one.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import secrets
import shutil
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Optional, Protocol

from dataclasses import dataclass
from neurondoctor import exit_codes
from neurondoctor.output_targets import creatable_directory
from neurondoctor.actions.venv.guard import write_guard
from neurondoctor.actions.venv.plan import VenvPlan
from neurondoctor.command_runner import interrupt, run_command
from neurondoctor.facts.guard_files import CONSTRAINTS_FILE, MARKER_FILE

INSTALL_TIMEOUT = 3600.0
VENV_TIMEOUT = 300.0
UV_INDEX_STRATEGY = "unsafe-best-match"  # the Neuron repository + PyPI mix needs it (uv issues 2840, 7831)


class BuildError(Exception):
    """The build failed; nothing was left behind. The message says what failed in one line; `next_step` what to do
    about it; `detail` (the installer's command and the last lines it printed) is for `-v`."""

    def __init__(self, message: str, next_step: str = "", detail: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.next_step = next_step
        self.detail = detail


class TargetRefused(BuildError):
    """What is at PATH may not be replaced: refused before anything starts."""

    def usage_error(self) -> exit_codes.UserError:
        """The one line a user sees (exit 2): nothing was touched, so there is nothing to have left behind."""
        return exit_codes.UserError(f"{self.message}; next: {self.next_step}")


class Progress(Protocol):
    def step(self, message: str) -> None: ...


class SilentProgress:
    def step(self, message: str) -> None:
        return None


@dataclass(frozen=True)
class BuildCommands:
    create: list[str]
    install: list[str]
    seed: Optional[list[str]] = None  # a uv venv without the interpreter's bundled pip wheel: ensurepip seeds it


def find_uv() -> Optional[str]:
    """uv on PATH, or next to the interpreter running the doctor (a venv that installed uv from PyPI)."""
    beside = Path(sys.executable).with_name("uv")
    return shutil.which("uv") or (str(beside) if beside.is_file() else None)


def _index_arguments(plan: VenvPlan) -> list[str]:
    arguments: list[str] = ["--no-index"] if plan.no_index else []
    if plan.index_url:
        arguments += ["--index-url", plan.index_url]
    for url in plan.extra_index_urls:
        arguments += ["--extra-index-url", url]
    for directory in plan.find_links:
        arguments += ["--find-links", directory]
    return arguments


_BUNDLED_WHEELS_PROBE = ("import ensurepip, os; print(os.path.join(os.path.dirname(ensurepip.__file__), "
                         "'_bundled'))")


def ensurepip_wheels(python: str) -> Optional[str]:
    """The directory of the interpreter's bundled pip wheel (ensurepip's `_bundled`), when it has one."""
    result = run_command([python, "-I", "-c", _BUNDLED_WHEELS_PROBE], timeout=30)
    directory = result.stdout.strip()
    if not result.ok or not directory or not any(Path(directory).glob("pip-*.whl")):
        return None
    return directory


def build_commands(plan: VenvPlan, venv: Path, python: str, installer: str, uv: Optional[str],
                   bundled_wheels: Optional[str] = None) -> BuildCommands:
    """The commands a build runs (also what `--dry-run` prints). uv venvs have no pip: it comes from the
    interpreter's bundled wheel in the same resolver run, or from ensurepip when there is none."""
    constraints = str(venv / CONSTRAINTS_FILE)
    requirements = [package.requirement for package in plan.packages]
    interpreter = str(venv / "bin" / "python")
    if installer == "uv":
        tool = uv or "uv"
        return BuildCommands(
            create=[tool, "venv", "--quiet", "--python", python, str(venv)],
            install=[tool, "pip", "install", "--python", interpreter, "--index-strategy", UV_INDEX_STRATEGY,
                     *_index_arguments(plan), *(["--find-links", bundled_wheels] if bundled_wheels else []),
                     "--constraints", constraints, *requirements, *(["pip"] if bundled_wheels else [])],
            seed=None if bundled_wheels else [interpreter, "-m", "ensurepip", "--default-pip"],
        )
    return BuildCommands(
        create=[python, "-m", "venv", str(venv)],
        install=[interpreter, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                 *_index_arguments(plan), "--constraint", constraints, *requirements],
    )


def _rewrite_paths(venv: Path, old: str, new: str) -> None:
    """Replace the temporary path in the files a venv writes it into (scripts, activate, pyvenv.cfg), so the
    environment works once renamed to its final path."""
    old_bytes, new_bytes = old.encode(), new.encode()
    candidates = [venv / "pyvenv.cfg", *[path for path in (venv / "bin").iterdir()
                                         if path.is_file() and not path.is_symlink()]]
    for path in candidates:
        try:
            if path.stat().st_size > 1 << 20:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if old_bytes in data:
            path.write_bytes(data.replace(old_bytes, new_bytes))


def _last_line(text: str) -> str:
    """The installer's last word, which names the cause (`× No solution found …`, `ERROR: Could not find …`)."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:200] if lines else ""


def _run(argv: Sequence[str], timeout: float, what: str, env: Optional[dict[str, str]] = None) -> None:
    result = run_command(argv, timeout=timeout, env=env)
    if not result.ok:
        output = result.stderr or result.stdout
        tail = "\n".join(output.strip().splitlines()[-12:])
        if result.timed_out:
            cause, step = f"it did not finish within {result.duration_s:.0f} s", \
                "check that the indexes answer (a mirror or a proxy), then run it again"
        elif result.error:
            cause, step = f"it could not run: {result.error}", "check the installer named in --installer"
        else:
            cause = _last_line(output) or f"the installer exited with status {result.returncode}"
            step = "run it again with -v for the installer's output; --dry-run prints the plan and its commands"
        raise BuildError(f"{what} failed: {cause}", step, f"{result.describe_failure()}\n{tail}".rstrip())


def _install_environment() -> dict[str, str]:
    """The user's environment minus variables that would redirect the install away from the plan."""
    return {key: value for key, value in os.environ.items()
            if key not in ("PIP_CONSTRAINT", "UV_CONSTRAINT", "VIRTUAL_ENV", "PYTHONPATH", "PIP_REQUIRE_VIRTUALENV")}


def replaceable_environment(path: Path) -> bool:
    """Whether `--force` may replace what is at `path`: a real directory (not a link) that is a virtual
    environment (`pyvenv.cfg` and `bin/python`) or carries the marker of one neurondoctor built."""
    if path.is_symlink() or not path.is_dir():
        return False
    if (path / MARKER_FILE).is_file():
        return True
    python = path / "bin" / "python"
    return (path / "pyvenv.cfg").is_file() and (python.exists() or python.is_symlink())


def check_target(target: Path, force: bool) -> None:
    """Only an environment may be replaced, and only with --force: anything else at PATH is never touched."""
    creatable_directory(target.parent, str(target))  # it builds beside the target: the parent must take files
    if not (target.exists() or target.is_symlink()):
        return
    if not replaceable_environment(target):
        raise TargetRefused(f"{target} exists and is not a virtual environment (no pyvenv.cfg and bin/python); "
                            "neurondoctor replaces only environments, so it was left as it is",
                            "choose another path")
    if not force:
        raise TargetRefused(f"{target} is already an environment; it was left as it is",
                            "pass --force to replace it once the new one is built, or choose another path")


class BuildInterrupted(KeyboardInterrupt):
    """SIGTERM during a build: unwinds like Ctrl-C, so the sibling is removed and the installer stopped."""


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """SIGTERM and Ctrl-C stop the build through command_runner.interrupt: never inside a child's spawn."""
    def on_signal(signum: int, frame: object) -> None:
        interrupt(BuildInterrupted(f"signal {signum}") if signum == signal.SIGTERM else KeyboardInterrupt())

    try:
        previous = {signum: signal.signal(signum, on_signal) for signum in (signal.SIGTERM, signal.SIGINT)}
    except ValueError:  # not the main thread: the caller owns signals
        yield
        return
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def build_lock(target: Path) -> Iterator[None]:
    """An exclusive lock on `.NAME.neurondoctor.lock` beside the target: a second build of the same PATH is
    refused at once instead of racing the first to the rename."""
    lock_path = target.with_name(f".{target.name}.neurondoctor.lock")
    try:
        descriptor = os.open(lock_path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
    except OSError as error:  # a place files cannot be made in (/proc): refused before anything was built
        raise TargetRefused(f"cannot create {target}: {error.strerror or error}", "choose another path") from error
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as error:
            raise BuildError(f"another `neurondoctor venv create` is building {target}",
                             "wait for it to finish") from error
        try:
            yield
        finally:
            os.unlink(lock_path)  # while still holding it: a build that opens it now is refused, never let in
    finally:
        os.close(descriptor)


def build_venv(plan: VenvPlan, target: Path, python: str, installer: str, force: bool = False,
               progress: Optional[Progress] = None) -> Path:
    """Build the planned environment at `target`; raises BuildError and leaves nothing behind on failure."""
    progress = progress or SilentProgress()
    target = target.absolute()
    check_target(target, force)
    uv = find_uv() if installer == "uv" else None
    if installer == "uv" and uv is None:
        raise BuildError("uv is not installed", "use --installer pip, or install uv")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise TargetRefused(f"cannot create {target}: {error.strerror or error}", "choose another path") from error
    with build_lock(target), _terminate_as_interrupt():
        check_target(target, force)
        staging = target.with_name(f".{target.name}.neurondoctor-{secrets.token_hex(4)}")
        commands = build_commands(plan, staging, python, installer, uv,
                                  ensurepip_wheels(python) if installer == "uv" else None)
        try:
            progress.step(f"creating the environment with {installer} ({python})")
            _run(commands.create, VENV_TIMEOUT, "creating the environment", env=_install_environment())
            if commands.seed:
                _run(commands.seed, VENV_TIMEOUT, "seeding pip from ensurepip", env=_install_environment())
            (staging / CONSTRAINTS_FILE).write_text(plan.constraints_text(), encoding="utf-8")
            progress.step(f"installing {len(plan.packages)} pinned packages in one resolver run")
            _run(commands.install, INSTALL_TIMEOUT, "installing the packages", env=_install_environment())
            progress.step("writing the guard (constraints, pip.conf, activate)")
            _rewrite_paths(staging, str(staging), str(target))
            write_guard(plan, staging, installer, final=target)
            check_target(target, force)  # something may have appeared at PATH while we built
            _replace(staging, target)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
    return target


def _replace(staging: Path, target: Path) -> None:
    """Move the new environment into place; an old one is moved aside first and deleted after."""
    old = target.with_name(f".{target.name}.neurondoctor-old-{secrets.token_hex(4)}")
    if target.exists():
        target.rename(old)
    try:
        staging.rename(target)
    except OSError:
        if old.exists():
            old.rename(target)
        raise
    if old.exists():
        shutil.rmtree(old, ignore_errors=True)
