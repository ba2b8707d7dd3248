"""Collects the host snapshot: every §3 collector, each guarded and timed; commands only on a live host.

A collector that fails leaves its part empty and records a `CollectorFailure` under its name, which the checks
that need it read as "could not collect" (docs/contracts.md §7: the verdict is then unknown, never healthy); a
command that is missing or hangs becomes a `CommandFact`, never a hang (every command has a timeout).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Mapping
from typing import Callable, Optional

from neurondoctor.command_timeouts import COMMAND_TIMEOUT_VARIABLE, duration_from_environ
from neurondoctor.facts import CollectorFailure
from neurondoctor.facts.host import CORE_COUNT_COLLECTOR, ECC_COLLECTOR, CommandFact, HostSnapshot, SysfsDevice
from neurondoctor.facts.mounts import TMP
from neurondoctor.host import (
    compile_cache,
    dkms_state,
    driver_module,
    glibc_version,
    host_tree,
    kernel_modules,
    mount_table,
    neuron_devices,
    neuron_ls,
    node_role,
    os_packages,
    os_release,
    pci_devices,
    runtime_files,
)
from neurondoctor.host.live_view import LiveView
from neurondoctor.host.os_packages import PackageDatabaseUnreadable
from neurondoctor.host.rootfs import RootFS


def _guarded(name: str, action: Callable[[], None], failures: list[CollectorFailure],
             timings: dict[str, float]) -> None:
    started = time.perf_counter()
    try:
        action()
    except PackageDatabaseUnreadable as error:
        failures.append(CollectorFailure(name, str(error)))
    except Exception as error:  # one broken collector must not cost the report
        failures.append(CollectorFailure(name, f"the collector failed: {type(error).__name__}: {error}"))
    timings[f"host:{name}"] = (time.perf_counter() - started) * 1000


def _command_path(environ: Mapping[str, str]) -> str:
    """PATH plus /opt/aws/neuron/bin, where the tools live even when PATH lacks it (gh#447)."""
    return os.pathsep.join([environ.get("PATH", "/usr/bin:/bin"), *neuron_ls.NEURON_LS_PATHS])


def command_timeout(environ: Mapping[str, str], default: float) -> float:
    """`NEURONDOCTOR_COMMAND_TIMEOUT` (seconds, bounded) overrides the per-command timeout, e.g. for a Slurm
    prolog; the command line warns about a value it ignores (`environment_warnings`)."""
    return duration_from_environ(environ, COMMAND_TIMEOUT_VARIABLE, default)[0]


def run_neuron_ls(snapshot: HostSnapshot, environ: Mapping[str, str]) -> None:
    """Runs whenever neuron-ls is installed; its absence is only worth recording when Neuron hardware is here.
    The JSON flag follows the installed tools (neuron_ls.json_flags); the other flag is tried when it fails, and
    the plain table when both do (tools older than `-j`, or a JSON flag a newer tools version dropped)."""
    executable = shutil.which("neuron-ls", path=_command_path(environ))
    tools = snapshot.packages.get("aws-neuronx-tools")
    first, fallback = neuron_ls.json_flags(tools.version if tools else None)
    if executable is None:
        if snapshot.pci or snapshot.device_nodes:
            snapshot.commands.append(CommandFact(["neuron-ls", *first], False, 0.0,
                                                 "not found on PATH or in /opt/aws/neuron/bin"))
        return
    from neurondoctor.command_runner import run_command  # the runner only when a command runs

    for flags in (first, fallback, []):
        if not flags and not (snapshot.pci or snapshot.device_nodes):
            return  # the table is for tools that answer no JSON flag, on a host with devices to list
        result = run_command([executable, *flags], timeout=command_timeout(environ, neuron_ls.NEURON_LS_TIMEOUT),
                             env=dict(environ))
        snapshot.commands.append(CommandFact([executable, *flags], result.ok, round(result.duration_s, 3),
                                             None if result.ok else result.describe_failure(), result.timed_out))
        if result.ok:
            snapshot.neuron_ls = (neuron_ls.parse_neuron_ls_json(result.stdout) if flags else
                                  neuron_ls.parse_neuron_ls_table(result.stdout).devices)
            return
        if result.timed_out:
            return


def _run_rpm(snapshot: HostSnapshot, fs: RootFS, environ: Mapping[str, str]) -> None:
    argv = os_packages.rpm_command(fs)
    if shutil.which("rpm") is None:
        snapshot.commands.append(CommandFact(argv, False, 0.0, "rpm is not installed on this machine"))
        return
    from neurondoctor.command_runner import run_command  # the runner only when a command runs

    result = run_command(argv, timeout=command_timeout(environ, os_packages.RPM_TIMEOUT))
    snapshot.commands.append(CommandFact(argv, result.ok, round(result.duration_s, 3),
                                         None if result.ok else result.describe_failure(), result.timed_out))
    snapshot.packages = os_packages.packages_from_rpm(result)
    snapshot.package_source = "rpm"
    locked = fs.try_read_text(os_packages.DNF_VERSIONLOCK, limit=1 << 20) or ""
    for package in snapshot.packages.values():
        package.held = any(line.strip().startswith(f"{package.name}-") for line in locked.splitlines())
    if result.ok:
        snapshot.glibc = glibc_version.glibc_from_rpm_query(result.stdout)
        snapshot.glibc_source = "rpm glibc" if snapshot.glibc else None


def _names(uid: int, groups: list[int]) -> tuple[Optional[str], list[str]]:
    """The user's and groups' names from the live host's databases (for a finding a person reads)."""
    import grp
    import pwd

    try:
        user: Optional[str] = pwd.getpwuid(uid).pw_name
    except KeyError:
        user = None
    names = []
    for gid in groups:
        try:
            names.append(grp.getgrgid(gid).gr_name)
        except KeyError:
            names.append(str(gid))
    return user, names


def malformed_numbers(devices: list[SysfsDevice]) -> list[CollectorFailure]:
    """A sysfs count or counter that is there but not a number cannot be judged: its collector failed (the checks
    that need it are unknown), one line per collector naming the devices and the first value."""
    failures = []
    for collector, wanted in ((CORE_COUNT_COLLECTOR, ("core_count",)), (ECC_COLLECTOR, neuron_devices.ECC_COUNTERS)):
        found = [(device.name, node, value) for device in devices for node, value in device.malformed.items()
                 if node in wanted]
        if found:
            name, node, value = found[0]
            more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
            failures.append(CollectorFailure(collector, f"sysfs {name}/{node} is {value}{more}"))
    return failures


def collect_host_snapshot(fs: RootFS, environ: Mapping[str, str], failures: list[CollectorFailure],
                          timings: dict[str, float], kernel_log_since: Optional[str] = None,
                          cache_choice: compile_cache.CacheChoice = compile_cache.CacheChoice()) -> HostSnapshot:
    snapshot = HostSnapshot()

    def system() -> None:
        snapshot.os = os_release.read_os_release(fs)
        snapshot.kernel = os_release.read_kernel_release(fs)
        snapshot.container = os_release.is_container(fs)
        snapshot.kubernetes_pod = os_release.is_kubernetes_pod(fs, dict(environ))
        if fs.is_live:
            snapshot.machine = os.uname().machine

    def hardware() -> None:
        snapshot.pci, efa = pci_devices.read_pci_functions(fs)
        snapshot.efa_functions, snapshot.efa_paths = len(efa), [path for path in efa if path]
        snapshot.efa_present = snapshot.efa_functions > 0
        snapshot.device_nodes = neuron_devices.read_device_nodes(fs)
        snapshot.sysfs_devices, snapshot.sysfs_layout = neuron_devices.read_sysfs_devices(
            fs, kernel_modules.read_loaded_driver_version(fs))
        failures.extend(malformed_numbers(snapshot.sysfs_devices))
        if snapshot.sysfs_layout != neuron_devices.LAYOUT_CLASSIC and snapshot.sysfs_devices and not any(
                device.ecc_uncorrected for device in snapshot.sysfs_devices):
            why = ("driver 2.31 moved them" if snapshot.sysfs_layout == neuron_devices.LAYOUT_2_31 else
                   "the loaded driver's version names no release, so where it writes them is not known")
            failures.append(CollectorFailure(ECC_COLLECTOR, (
                f"could not read the ECC counters of {len(snapshot.sysfs_devices)} device(s): {why} "
                f"({', '.join(neuron_devices.ECC_COUNTERS)} are at neither their old paths nor anywhere under "
                f"{neuron_devices.SYSFS_DEVICES}/neuronN)")))

    def driver() -> None:
        try:
            snapshot.modules = kernel_modules.read_modules(fs)
        except OSError as error:
            failures.append(CollectorFailure("driver", f"could not read /proc/modules: {error.strerror or error}"))
        snapshot.loaded_driver_version = kernel_modules.read_loaded_driver_version(fs)
        snapshot.dkms = dkms_state.read_dkms_state(fs, snapshot.kernel)
        snapshot.driver_module = driver_module.read_driver_module(fs, snapshot.kernel)

    def packages() -> None:
        status = os_packages.read_dpkg_status(fs)
        if status is not None:
            snapshot.packages = os_packages.parse_dpkg_status(status)
            snapshot.package_source = "dpkg"
            snapshot.glibc = glibc_version.glibc_from_dpkg_status(status)
            snapshot.glibc_source = f"dpkg libc6 ({os_packages.DPKG_STATUS})" if snapshot.glibc else None
        elif os_packages.rpm_database_present(fs):
            _run_rpm(snapshot, fs, environ)
        if snapshot.glibc is None:
            snapshot.glibc, snapshot.glibc_source = glibc_version.read_glibc_from_library(fs)

    def runtime() -> None:
        snapshot.runtime_libraries, snapshot.collectives_libraries, snapshot.tools = (
            runtime_files.read_runtime_files(fs))
        snapshot.neuron_repo_files = runtime_files.read_neuron_repo_files(fs)

    def node() -> None:  # after packages and runtime: a host that has the runtime is no container node
        snapshot.node_role = node_role.node_role(snapshot, node_role.read_node_markers(fs))
        if snapshot.node_role is not None:
            snapshot.node_role.inf1_pin = node_role.read_inf1_pin(fs, snapshot.node_role.platform)

    def image() -> None:  # inside a container the root is an image: what names it
        if snapshot.container:
            from neurondoctor.host import container_image  # inside a container only

            snapshot.image = container_image.read_container_image(fs)

    def kernel_log() -> None:
        if not snapshot.has_neuron_hardware:  # the driver logs NEURON_HW_ERR only where there is hardware
            return
        from neurondoctor.host.kernel_log import read_kernel_log  # its patterns are for hosts with hardware

        found = read_kernel_log(fs, environ, kernel_log_since)
        snapshot.kernel_hw_errors, snapshot.kernel_log_source, snapshot.kernel_log_problem = (
            found.errors, found.source, found.problem)

    def processes() -> None:
        if snapshot.device_nodes:  # without device nodes nothing can hold one: skip the /proc walk (and its reader)
            from neurondoctor.host import device_holders

            snapshot.holders = device_holders.read_device_holders(fs)

    view = LiveView(fs)

    def mounts() -> None:
        snapshot.mount_table = view.mount_table()
        snapshot.mounts = [found for found in [mount_table.path_mount(fs, snapshot.mount_table, TMP)] if found]

    def resources() -> None:
        snapshot.compile_cache = compile_cache.read_compile_cache(fs, environ, cache_choice, snapshot.mount_table, view)
        if not snapshot.container:  # a container's limit is the runtime's `--ulimit`, not the image's files
            from neurondoctor.host import memlock_limits

            snapshot.memlock_limit, snapshot.memlock_source = memlock_limits.read_memlock_limit(fs)
        if fs.is_live:
            snapshot.uid = os.geteuid()
            snapshot.groups = sorted({os.getegid(), *os.getgroups()})
            snapshot.user_name, snapshot.group_names = _names(snapshot.uid, snapshot.groups)

    collectors = (("system", system), ("hardware", hardware), ("kernel-log", kernel_log), ("driver", driver),
                  ("packages", packages), ("runtime", runtime), ("node", node), ("image", image),
                  ("processes", processes),
                  ("mounts", mounts),
                  ("resources", resources))
    missing = host_tree.missing_host_parts(fs)
    if missing:  # nothing to collect: every area that needs a host is unknown, never judged on an empty snapshot
        reason = f"{fs.root} is not a Linux host tree ({'; '.join(missing)})"
        failures.extend(CollectorFailure(name, reason) for name, _ in (*collectors, (ECC_COLLECTOR, None)))
        return snapshot
    for name, action in collectors:
        _guarded(name, action, failures, timings)
    if fs.is_live:
        _guarded("neuron-ls", lambda: run_neuron_ls(snapshot, environ), failures, timings)
    return snapshot
