"""What a bundle collects: each collector is a name and a function returning archive members.

Commands run only on a live host (`--root /`), each with a timeout, and each member starts with the command
line, exit code, start time and duration; a missing tool is recorded as skipped. Files are read under the root,
bounded in size, read-only. Everything passes through the redactor before it becomes a member.
"""

from __future__ import annotations

import gzip
import os
import shutil
import stat
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Callable, Optional

from neurondoctor import json_data
from neurondoctor.command_runner import run_command
from neurondoctor.facts.names import BUNDLE_ENV_PREFIXES, NEURON_OS_PACKAGE_PREFIXES
from neurondoctor.facts.python_env import PythonEnvironment
from neurondoctor.host.os_packages import rpm_command, rpm_database_present
from neurondoctor.host.rootfs import RootFS
from neurondoctor.pyenv.static_venv import filesystem_for
from neurondoctor.redaction import Redactor, redact_variable

FILE_LIMIT = 8 << 20
COPIED_FILES = ("/etc/os-release", "/proc/modules", "/proc/cmdline", "/etc/modules-load.d/neuron.conf",
                "/etc/pip.conf", "/etc/xdg/pip/pip.conf", "/etc/apt/sources.list.d/neuron.list",
                "/etc/yum.repos.d/neuron.repo", "/sys/module/neuron/version")
NEURON_LOG_WORDS = ("neuron", "nrt", "NEURON_HW_ERR")


class Skipped(Exception):
    """The collector does not apply here (a missing tool, not a live host); recorded as skipped."""


class BudgetSpent(Skipped):
    """The total time budget (`--max-time`) ran out: what is left is recorded as skipped."""


@dataclass
class Member:
    name: str
    data: bytes


@dataclass
class BundleContext:
    fs: RootFS
    environ: Mapping[str, str]
    redactor: Redactor
    environments: list[PythonEnvironment] = field(default_factory=list)
    command_timeout: float = 10.0
    since: Optional[str] = None
    deadline: float = float("inf")

    def time_left(self) -> float:
        """Seconds left of the bundle's total budget (time.monotonic based)."""
        return self.deadline - time.monotonic()

    def timeout(self) -> float:
        """A command's timeout: its own, cut to what is left of the total budget."""
        left = self.time_left()
        if left <= 0:
            raise BudgetSpent("the total time budget was spent before it started")
        return min(self.command_timeout, left)


def _text(ctx: BundleContext, text: str) -> bytes:
    return ctx.redactor.text(text).encode("utf-8")


def command_member(ctx: BundleContext, name: str, argv: list[str], keep: Optional[Callable[[str], bool]] = None,
                   ) -> Member:
    """Run argv on the live host; the member records the command line, exit code, start time and duration."""
    if not ctx.fs.is_live:
        raise Skipped("commands run only on a live host (--root /)")
    if shutil.which(argv[0], path=ctx.environ.get("PATH")) is None and not os.path.isabs(argv[0]):
        raise Skipped(f"{argv[0]} is not installed")
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    timeout = ctx.timeout()
    result = run_command(argv, timeout=timeout, env=dict(ctx.environ))
    output = result.stdout + (f"\n--- stderr ---\n{result.stderr}" if result.stderr.strip() else "")
    if keep is not None:
        output = "\n".join(line for line in output.splitlines() if keep(line))
    status = ("timed out" if result.timed_out else "could not run: " + str(result.error) if result.error
              else f"exit {result.returncode}")
    header = (f"$ {' '.join(argv)}\n# {status}; started {started}; took {result.duration_s:.2f} s\n\n")
    member = Member(f"commands/{name}.txt", _text(ctx, header + output))
    if result.timed_out:
        raise CollectorTimeout(member, f"did not finish within {timeout:g} s")
    return member


class PartialCollection(Exception):
    """Some files could not be read (not root, a 0600 file): what was read is kept, the rest is listed."""

    def __init__(self, members: list[Member], unreadable: list[str]) -> None:
        super().__init__("could not read: " + ", ".join(unreadable))
        self.members = members


class CollectorTimeout(Exception):
    """A command hit its timeout: the partial member is kept and the collector is recorded as timed out."""

    def __init__(self, member: Member, message: str) -> None:
        super().__init__(message)
        self.member = member


def _mentions_neuron(line: str) -> bool:
    lowered = line.lower()
    return any(word.lower() in lowered for word in NEURON_LOG_WORDS)


def command_collectors() -> list[tuple[str, Callable[[BundleContext], list[Member]]]]:
    """docs/neuron-facts.md §8: what AWS support asks for, each command once."""
    def single(name: str, argv: list[str], keep: Optional[Callable[[str], bool]] = None
               ) -> Callable[[BundleContext], list[Member]]:
        return lambda ctx: [command_member(ctx, name, argv, keep)]

    def journal(ctx: BundleContext) -> list[Member]:
        argv = ["journalctl", "-k", "--no-pager", "-q"] + (["--since", ctx.since] if ctx.since else [])
        return [command_member(ctx, "journalctl-k-neuron", argv, _mentions_neuron)]

    return [
        ("neuron-ls-json", single("neuron-ls-json", ["neuron-ls", "-j"])),  # to Neuron 2.33
        ("neuron-ls-output-format-json",  # from Neuron 2.34, which drops -j (announce-intent-eos-neuron-ls-json.rst)
         single("neuron-ls-output-format-json", ["neuron-ls", "--output-format", "json"])),
        ("neuron-ls", single("neuron-ls", ["neuron-ls"])),
        ("dkms-status", single("dkms-status", ["dkms", "status"])),
        ("lsmod", single("lsmod", ["lsmod"])),
        ("uname", single("uname-a", ["uname", "-a"])),
        ("dmesg-neuron", single("dmesg-neuron", ["dmesg"], _mentions_neuron)),
        ("journalctl-neuron", journal),
        ("neuron-monitor-status", single("systemctl-status-neuron-monitor",
                                         ["systemctl", "status", "neuron-monitor", "--no-pager"])),
    ]


def _file_members(ctx: BundleContext, files: list[tuple[str, str]], missing_ok: bool, untrusted: bool = False
                  ) -> tuple[list[Member], list[str]]:
    """(members, what could not be read) for (in-root path, member name) pairs, read through the root within the
    time budget; an absent file is skipped when `missing_ok`. `untrusted`: the files are in folders other users
    write (homes, environments), read without following a link and refused when a hard link (RootFS
    `read_untrusted_bytes`)."""
    read = ctx.fs.read_untrusted_bytes if untrusted else ctx.fs.read_bytes
    members: list[Member] = []
    unreadable: list[str] = []
    for inner, name in files:
        if ctx.time_left() <= 0:
            unreadable.append(f"{inner} (the total time budget was spent)")
            continue
        try:
            data = read(inner, FILE_LIMIT)
        except FileNotFoundError:
            if not missing_ok:
                unreadable.append(f"{inner} (gone)")
            continue
        except OSError as error:
            unreadable.append(f"{inner} ({error.strerror or error})")
            continue
        members.append(Member(name, _text(ctx, data.decode("utf-8", errors="replace"))))
    return members, unreadable


def copied_files(ctx: BundleContext) -> list[Member]:
    members, unreadable = _file_members(ctx, [(inner, f"files{inner}") for inner in COPIED_FILES], missing_ok=True)
    if unreadable:
        raise PartialCollection(members, unreadable)
    return members


def pip_configurations(ctx: BundleContext) -> list[Member]:
    """Every pip configuration file the check read for its environments (a user's `~/.config/pip/pip.conf`
    included), redacted like the rest; /etc's and the environments' own are copied by their collectors."""
    own = {f"{filesystem_for(ctx.fs, env.path)[1].rstrip('/')}/pip.conf" for env in ctx.environments}
    wanted: dict[str, str] = {}
    for env in ctx.environments:
        for source in env.pip_config:
            inner = ctx.fs.inner_path(source.origin) if source.origin.startswith("/") else None
            if inner and inner not in COPIED_FILES and inner not in own:
                wanted.setdefault(inner, f"files{inner}")
    members, unreadable = _file_members(ctx, sorted(wanted.items()), missing_ok=True, untrusted=True)
    if unreadable:
        raise PartialCollection(members, unreadable)
    return members


def package_lists(ctx: BundleContext) -> list[Member]:
    """The Neuron packages (readable) and the full dpkg status (compressed), from the root."""
    members = []
    try:
        status = ctx.fs.read_bytes("/var/lib/dpkg/status", 64 << 20).decode("utf-8", errors="replace")
    except FileNotFoundError:
        status = None
    if status is not None:
        from neurondoctor.host.os_packages import parse_dpkg_status

        neuron = parse_dpkg_status(status)
        listing = "".join(f"{package.name}\t{package.version}\n" for package in sorted(neuron.values(),
                                                                                        key=lambda p: p.name))
        members.append(Member("packages/dpkg-neuron.txt", _text(ctx, listing)))
        members.append(Member("packages/dpkg-status.gz", gzip.compress(_text(ctx, status))))
    elif rpm_database_present(ctx.fs) and shutil.which("rpm", path=ctx.environ.get("PATH")):
        result = run_command(rpm_command(ctx.fs), timeout=ctx.timeout(), env=dict(ctx.environ))
        everything = result.stdout if result.ok else f"# {result.describe_failure()}\n"
        neuron_lines = "".join(line + "\n" for line in everything.splitlines()
                               if line.startswith(NEURON_OS_PACKAGE_PREFIXES))
        members.append(Member("packages/rpm-neuron.txt", _text(ctx, neuron_lines)))
        members.append(Member("packages/rpm-all.txt.gz", gzip.compress(_text(ctx, everything))))
    return members


def dkms_build_log(ctx: BundleContext) -> list[Member]:
    """DKMS make.log of the newest registered driver, when the module is not built for the running kernel."""
    from neurondoctor.host.dkms_state import read_dkms_state
    from neurondoctor.host.os_release import read_kernel_release

    state = read_dkms_state(ctx.fs, read_kernel_release(ctx.fs))
    if state.make_log is None or state.built_for_kernel or state.installed_module:
        return []
    return [Member(f"files{state.make_log}", _text(ctx, ctx.fs.read_text(state.make_log, FILE_LIMIT)))]


MAX_LOG_SEARCH_ENTRIES = 200_000
COMPILE_LOG = "log-neuron-cc.txt"
COMPILE_LOG_BYTES = 1 << 20  # the end of a log: the compiler writes its error last
# Where neuronx-cc runs, and so writes its log: torch-neuronx's XLA path calls it in
# `/tmp/<user>/neuroncc_compile_workdir/<uuid>/` (the `Call compiler with cmd:` lines of aws-neuron-sdk#872 and
# aws-neuron-samples#94; `<user>` is `no-user` in containers, optimum-neuron#698); TorchNeuron in the debug
# directory, TORCH_NEURONX_DEBUG_DIR (default /tmp/neuron_backend; torch/reference/env-vars.rst,
# compiler/about-compiler-artifacts.rst). The compile cache holds graphs, NEFFs and a failed entry's `model.log`
# (compile-cache.json takes those), not this log: it is not walked for it.
XLA_WORKDIR = "neuroncc_compile_workdir"
TMP = "/tmp"  # noqa: S108 - the inspected host's folder, only read, and no link in it is followed
DEBUG_DIR_VARIABLE, DEBUG_DIR_DEFAULT = "TORCH_NEURONX_DEBUG_DIR", f"{TMP}/neuron_backend"
_LOG_SEARCH_DEPTH = 6


def _log_roots(ctx: BundleContext) -> list[str]:
    """The in-root folders to search: every `/tmp/<user>/neuroncc_compile_workdir` and the debug directory. In
    /tmp anyone can plant a link: neither a folder that is a link nor one behind a link is searched."""
    roots = []
    try:
        users = ctx.fs.listdir(TMP)[:10_000]
    except OSError:
        users = []
    for user in users:
        workdir = f"{TMP}/{user}/{XLA_WORKDIR}"
        if not ctx.fs.is_link(f"{TMP}/{user}") and not ctx.fs.is_link(workdir) and ctx.fs.is_dir(workdir):
            roots.append(workdir)
    debug = str(ctx.environ.get(DEBUG_DIR_VARIABLE) or DEBUG_DIR_DEFAULT)
    if debug.startswith("/") and "://" not in debug and ctx.fs.is_dir(debug) and not ctx.fs.is_link(debug):
        roots.append(debug.rstrip("/") or "/")
    return roots


def compile_logs(ctx: BundleContext, newest: int = 5) -> list[Member]:
    """The newest `log-neuron-cc.txt` files where neuronx-cc ran (see XLA_WORKDIR), each its last MiB, read with
    `read_untrusted_file` (these folders are the users': a log that is a link, or a hard link, to /etc/shadow is
    refused, not read). The
    search follows no link, stops at the time budget or after MAX_LOG_SEARCH_ENTRIES entries, and says so."""
    from neurondoctor.regular_files import read_untrusted_file

    logs: list[tuple[float, str]] = []
    seen, stopped = 0, None
    for inner_root in _log_roots(ctx):
        base = ctx.fs.resolve(inner_root)
        if base is None:
            continue
        base_depth = str(base).rstrip(os.sep).count(os.sep)
        for directory, subdirectories, files in os.walk(base):  # followlinks=False: links are not entered
            seen += len(subdirectories) + len(files)
            if ctx.time_left() <= 0 or seen > MAX_LOG_SEARCH_ENTRIES:
                stopped = ("the total time budget was spent" if ctx.time_left() <= 0 else
                           f"over {MAX_LOG_SEARCH_ENTRIES} entries")
                break
            if directory.count(os.sep) - base_depth >= _LOG_SEARCH_DEPTH:
                subdirectories[:] = []
            if COMPILE_LOG in files:
                path = os.path.join(directory, COMPILE_LOG)
                try:
                    found = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISREG(found.st_mode):
                    logs.append((found.st_mtime, inner_root.rstrip("/") + "/" + os.path.relpath(path, base)))
        if stopped:
            break
    members, unreadable = [], []
    for _, inner in sorted(logs, reverse=True)[:newest]:
        host = ctx.fs.resolve(inner)
        try:
            if host is None:
                raise FileNotFoundError(inner)
            data = read_untrusted_file(host, COMPILE_LOG_BYTES, tail=True)
        except OSError as error:
            unreadable.append(f"{inner} ({error.strerror or error})")
            continue
        members.append(Member(f"compile-logs{inner}", _text(ctx, data.decode("utf-8", errors="replace"))))
    if stopped:
        unreadable.insert(0, f"the search for {COMPILE_LOG} (stopped: {stopped})")
    if unreadable:
        raise PartialCollection(members, unreadable)
    return members


FAILED_LOGS_PER_CACHE = 5
FAILED_LOG_BYTES = 64 * 1024


def compile_cache_index(ctx: BundleContext) -> list[Member]:
    """`compile-cache.json`: every configured cache counted as `cache status --json` counts it (names, sizes,
    states, locks), and the logs of the first failed entries of each (their last 64 KiB, read without following a
    link). Never a NEFF or a graph: they are the user's model."""

    from neurondoctor.actions.cache.status import cache_status, status_document
    from neurondoctor.regular_files import read_untrusted_file

    locations = cache_status(str(ctx.fs.root), ctx.environ, deadline_s=max(0.1, min(ctx.time_left(), 30.0)))
    members = [Member("compile-cache.json", _text(ctx, json_data.dumps(status_document(str(ctx.fs.root), locations),
                                                                  indent=1) + "\n"))]
    for number, location in enumerate(locations):
        index = location.index
        if index is None or index.host_path is None:
            continue
        failed = [(compiler.name, name) for compiler in index.compilers for name in compiler.failed_entries]
        for compiler, name in failed[:FAILED_LOGS_PER_CACHE]:
            try:
                data = read_untrusted_file(os.path.join(index.host_path, compiler, name, "model.log"),
                                           FAILED_LOG_BYTES, tail=True)
            except OSError:
                continue
            members.append(Member(f"compile-cache/{number}/{compiler}/{name}/model.log",
                                  _text(ctx, data.decode("utf-8", errors="replace"))))
    return members


def environment_packages(ctx: BundleContext) -> list[Member]:
    members = []
    for index, env in enumerate(ctx.environments):
        lines = [f"# {env.path} ({env.mode}, Python {env.python_version or '?'}, interpreter {env.interpreter})"]
        for site in env.site_dirs:
            lines.append(f"## {site.role}: {site.path}")
            lines += [f"{dist.display_name}=={dist.version}\t{dist.installer or '-'}" for dist in site.distributions]
        name = os.path.basename(env.path.rstrip("/")) or f"env{index}"
        members.append(Member(f"environments/{index}-{name}.txt", _text(ctx, "\n".join(lines) + "\n")))
        fs, inner = filesystem_for(ctx.fs, env.path)
        own_config = fs.try_read_untrusted_text(f"{inner}/pip.conf", FILE_LIMIT)
        if own_config is not None:
            members.append(Member(f"environments/{index}-{name}-pip.conf", _text(ctx, own_config)))
        compiler = os.path.join(env.path, "bin", "neuronx-cc")
        if ctx.fs.is_live and os.path.exists(compiler):
            members.append(command_member(ctx, f"neuronx-cc-version-{index}", [compiler, "--version"]))
    return members


def environment_variables(ctx: BundleContext) -> list[Member]:
    """Neuron/XLA/PJRT/Python variables by value (redacted); every other variable by name only."""
    lines = []
    for key in sorted(ctx.environ):
        if key.startswith(BUNDLE_ENV_PREFIXES):
            lines.append(f"{key}={redact_variable(key, ctx.environ[key])}")
        else:
            lines.append(f"{key} (value not collected)")
    return [Member("environment-variables.txt", _text(ctx, "\n".join(lines) + "\n"))]


def file_collectors() -> list[tuple[str, Callable[[BundleContext], list[Member]]]]:
    return [
        ("files", copied_files),
        ("pip-configuration", pip_configurations),
        ("packages", package_lists),
        ("dkms-build-log", dkms_build_log),
        ("compile-logs", compile_logs),
        ("compile-cache", compile_cache_index),
        ("environments", environment_packages),
        ("environment-variables", environment_variables),
    ]
