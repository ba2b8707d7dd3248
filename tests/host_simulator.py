"""A recording package manager and kernel for fixture hosts (host-level fixes; `bootstrap`'s tests reuse it).

Host-level fix lines (`sudo apt-get install …`, `sudo dnf …`, `modprobe`, `rmmod`, `dkms`, `tee /etc/…`,
`kill`) run verbatim in a shell whose PATH starts with fake commands. Each fake records its argv and applies
the operation to the fixture root as the real tool would leave the host, in the files the collectors read:

- apt/dnf resolve `name=VER*` / `name-VER*` against a repository of the versions the release data lists (with
  the deb/rpm suffixes real packages carry, docs/neuron-facts.md §1.4), refuse a held package without
  `--allow-change-held-packages`, and see Neuron packages only when the Neuron repository file exists.
  `aws-neuronx-dkms`'s install does what its postinst does (docs/neuron-facts.md §3 `drv:postinstall`): registers the
  DKMS source, builds the module for the running kernel when its headers are there, writes
  `/etc/modules-load.d/neuron.conf` and the udev rule, unloads a loaded module and loads the new one (the
  driver's `preinstall`/`postinstall`, tests/recorded/sysfs/SOURCES.md); when a process holds a device the unload
  fails and the old module keeps running (driver-stale).
- dpkg status (`var/lib/dpkg/status`) for apt, and a package list the fake `rpm --root R -qa` prints for dnf.
- `modprobe neuron` loads the module built for the running kernel (`proc/modules`, `sys/module/neuron/version`,
  `/dev/neuronN` for each Neuron PCI function, the sysfs device tree); `rmmod` refuses while a process holds a
  device; `dkms install|autoinstall -k K` builds for K when `lib/modules/K/build` exists.

Every fake refuses a path outside the root, so a fix line can never touch the machine running the tests.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
import shutil
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FAKE_COMMANDS = ("sudo", "apt-get", "apt", "dnf", "yum", "rpm", "apt-key", "wget", "modprobe", "rmmod", "dkms",
                 "tee", "kill", "chmod", "udevadm", "ls", "rm", "systemctl", "install", "gpg", "chroot", "apt-mark")
VERSIONLOCK = "etc/dnf/plugins/versionlock.list"
NEURON_DEVICE_IDS = {"0x7064", "0x7164", "0x7264", "0x7364", "0x7464"}  # Inf2/Trn1/Trn2… (docs/neuron-facts.md §3)
RPM_DB = "var/lib/rpm/neurondoctor-simulated.tsv"
DKMS_PACKAGE = "aws-neuronx-dkms"


@dataclass
class HostSimulator:
    """The fake commands for one fixture root; `env()` is the shell environment a fix line runs in."""

    root: Path
    work: Path

    def __post_init__(self) -> None:
        self.bin = self.work / "sim-bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        launcher = (f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(REPO)!r})\n"
                    "from tests.host_simulator import main\nsys.exit(main(sys.argv))\n")
        for name in FAKE_COMMANDS:
            path = self.bin / name
            path.write_text(launcher)
            path.chmod(0o755)
        repository = self.work / "sim-repository.json"
        repository.write_text(json.dumps(simulated_repository()))
        self.log_file = self.work / "sim-log.jsonl"

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """`bash` imports exported functions before builtins: `kill` reaches the fake, never a real process."""
        return {**base, "PATH": f"{self.bin}:{base.get('PATH', '/usr/bin:/bin')}", "ND_SIM_ROOT": str(self.root),
                "ND_SIM_LOG": str(self.log_file), "ND_SIM_REPOSITORY": str(self.work / "sim-repository.json"),
                "BASH_FUNC_kill%%": f"() {{ {self.bin}/kill \"$@\"; }}"}

    def commands(self) -> list[list[str]]:
        if not self.log_file.exists():
            return []
        return [json.loads(line) for line in self.log_file.read_text().splitlines()]


def simulated_repository() -> dict[str, dict[str, list[str]]]:
    """{"deb"|"rpm": {package: [versions]}}: every OS package version the release data lists, as apt and dnf
    show them (deb `2.27.34.0-ec8cd5e8b`, rpm `2.19.7.0_530fb3064-1`, dkms rpm `2.15.9.0-dkms`)."""
    sys.path.insert(0, str(REPO))
    from neurondoctor.release_data.catalog import load_catalog

    catalog = load_catalog()
    deb: dict[str, set[str]] = {}
    rpm: dict[str, set[str]] = {}
    for release in catalog.release_names:
        for entry in catalog.releases[release]:
            name = entry.manifest_name
            if not name.startswith("aws-neuron") or entry.python:
                continue
            plain = name in (DKMS_PACKAGE, "aws-neuronx-tools")
            deb.setdefault(name, set()).add(entry.version if plain else f"{entry.version}-ec8cd5e8b")
            rpm.setdefault(name, set()).add(f"{entry.version}-dkms" if name == DKMS_PACKAGE else
                                            f"{entry.version}_ec8cd5e8b-1")
    for name, version in TOOLCHAIN["deb"].items():
        deb[name] = {version}
    for name, version in TOOLCHAIN["rpm"].items():
        rpm[name] = {version}
    return {"deb": {name: sorted(versions) for name, versions in deb.items()},
            "rpm": {name: sorted(versions) for name, versions in rpm.items()}}


# The distribution's build tools, as Ubuntu 24.04 and AL2023 name their packages: what a DKMS build runs (the
# kernel's own `CC`, which an HWE or mainline kernel can name at a gcc version the host lacks). Installing one
# writes the commands it holds.
TOOLCHAIN = {"deb": {"gcc-12": "12.3.0-17ubuntu1", "gcc-13": "13.3.0-6ubuntu2", "gcc-14": "14.2.0-4ubuntu2",
                     "build-essential": "12.10ubuntu1", "make": "4.3-4.1build2"},
             "rpm": {"gcc": "11.4.1-2.amzn2023.0.2", "make": "4.3-5.amzn2023.0.2"}}
TOOLCHAIN_COMMANDS = {"gcc-12": ("gcc-12",), "gcc-13": ("gcc-13",), "gcc-14": ("gcc-14",),
                      "build-essential": ("gcc", "cc", "make"), "gcc": ("gcc", "cc"), "make": ("make",)}


# ---- inside the fake commands -------------------------------------------------------------------------------------

class Refused(Exception):
    """The fake command fails as the real one would: message to stderr, exit code."""

    def __init__(self, message: str, code: int = 1) -> None:
        super().__init__(message)
        self.code = code


def _root() -> Path:
    return Path(os.environ["ND_SIM_ROOT"])


def inside(path: str) -> Path:
    """An absolute host path as the same path under the root; anything escaping the root is refused."""
    root = _root().resolve()
    mapped = (root / path.lstrip("/")).resolve() if path.startswith("/") else Path(path).resolve()
    if mapped != root and root not in mapped.parents:
        raise Refused(f"simulator: {path} is outside the fixture root", 77)
    return mapped


def kernel() -> str:
    return (_root() / "proc/sys/kernel/osrelease").read_text().strip()


def _repository(kind: str) -> dict[str, list[str]]:
    data: dict[str, dict[str, list[str]]] = json.loads(Path(os.environ["ND_SIM_REPOSITORY"]).read_text())
    return data[kind]


def dpkg_stanzas() -> list[dict[str, str]]:
    text = (_root() / "var/lib/dpkg/status").read_text() if (_root() / "var/lib/dpkg/status").exists() else ""
    stanzas = []
    for block in text.split("\n\n"):
        fields: dict[str, str] = {}
        last = ""
        for line in block.splitlines():
            if line.startswith((" ", "\t")) and last:
                fields[last] += "\n" + line
            elif ":" in line:
                last, _, value = line.partition(":")
                fields[last] = value.strip()
        if fields.get("Package"):
            stanzas.append(fields)
    return stanzas


def write_dpkg(stanzas: list[dict[str, str]]) -> None:
    text = "".join("".join(f"{key}: {value}\n" for key, value in stanza.items()) + "\n" for stanza in stanzas)
    (_root() / "var/lib/dpkg/status").write_text(text)


def rpm_packages() -> dict[str, str]:
    path = _root() / RPM_DB
    lines = path.read_text().splitlines() if path.exists() else []
    return dict(line.split("\t", 1) for line in lines if "\t" in line)


def write_rpm(packages: dict[str, str]) -> None:
    path = _root() / RPM_DB
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{name}\t{version}\n" for name, version in sorted(packages.items())))


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _neuron_repository(kind: str) -> bool:
    if kind == "deb":
        lists = _root() / "etc/apt/sources.list.d"
        return any("neuron" in path.read_text() for path in lists.glob("*.list")) if lists.is_dir() else False
    repos = _root() / "etc/yum.repos.d"
    return any("neuron" in path.read_text() for path in repos.glob("*.repo")) if repos.is_dir() else False


def _choose(kind: str, name: str, pattern: str | None) -> str:
    if name.startswith("aws-neuron") and not _neuron_repository(kind):
        raise Refused(f"E: Unable to locate package {name}" if kind == "deb" else f"No match for argument: {name}",
                      100 if kind == "deb" else 1)
    versions = _repository(kind).get(name, [])
    matching = [version for version in versions if pattern is None or fnmatch.fnmatchcase(version, pattern)]
    if not matching:
        if not versions:
            raise Refused(f"E: Unable to locate package {name}" if kind == "deb" else f"No match for argument: "
                          f"{name}", 100 if kind == "deb" else 1)
        raise Refused(f"E: Version '{pattern}' for '{name}' was not found" if kind == "deb" else
                      f"No match for argument: {name}-{pattern}", 100 if kind == "deb" else 1)
    from neurondoctor.neuron_version import release_tuple

    return max(matching, key=lambda version: release_tuple(re.split(r"[-_]", version)[0]))


def dkms_sources() -> Iterator[tuple[str, Path]]:
    base = _root() / "var/lib/dkms/aws-neuronx"
    for path in sorted(base.iterdir()) if base.is_dir() else []:
        if path.is_dir() and path.name[:1].isdigit():
            yield path.name, path


def build_module(version: str, for_kernel: str) -> None:
    """`dkms install aws-neuronx/VERSION -k KERNEL`: needs that kernel's headers (`lib/modules/K/build`), and the
    compiler the kernel was built with when the fixture's make.log says the last build lacked it."""
    if not (_root() / f"lib/modules/{for_kernel}/build").exists():
        raise Refused(f"Error! Your kernel headers for kernel {for_kernel} cannot be found at "
                      f"/lib/modules/{for_kernel}/build or /lib/modules/{for_kernel}/source.", 1)
    make_log = _root() / f"var/lib/dkms/aws-neuronx/{version}/build/make.log"
    log = make_log.read_text() if make_log.is_file() else ""
    for compiler in ("gcc-12", "gcc-13", "gcc-14"):
        if f": {compiler}: not found" in log and not (_root() / f"usr/bin/{compiler}").exists():
            raise Refused(f"Error! Bad return status for module build on kernel: {for_kernel} (x86_64)\n"
                          f"Consult /var/lib/dkms/aws-neuronx/{version}/build/make.log for more information.", 10)
    _write(_root() / f"var/lib/dkms/aws-neuronx/{version}/{for_kernel}/x86_64/module/neuron.ko.zst", "ELF")
    _write(_root() / f"lib/modules/{for_kernel}/updates/dkms/neuron.ko.zst", "ELF")


def built_version(for_kernel: str) -> str | None:
    """The DKMS version whose module is built and installed for this kernel (what modprobe would load)."""
    installed = list((_root() / f"lib/modules/{for_kernel}/updates/dkms").glob("neuron.ko*"))
    versions = [version for version, path in dkms_sources() if (path / for_kernel).is_dir()]
    return versions[-1] if installed and versions else None


def loaded() -> bool:
    modules = _root() / "proc/modules"
    return modules.exists() and any(line.split()[:1] == ["neuron"] for line in modules.read_text().splitlines())


def _neuron_functions() -> list[str]:
    functions = []
    for device in sorted((_root() / "sys/bus/pci/devices").glob("*")):
        try:
            vendor = (device / "vendor").read_text().strip()
            device_id = (device / "device").read_text().strip()
        except OSError:
            continue
        if vendor == "0x1d0f" and device_id in NEURON_DEVICE_IDS:
            functions.append(device_id)
    return functions


def load_module() -> None:
    """`modprobe neuron`: the module built for the running kernel, with its device nodes and sysfs tree."""
    if loaded():
        return
    built = built_version(kernel())
    if built is None:
        raise Refused(f"modprobe: FATAL: Module neuron not found in directory /lib/modules/{kernel()}", 1)
    from tests.host_fixture import INSTANCES, count_mode, write_device_sysfs

    modules = _root() / "proc/modules"
    _write(modules, "neuron 532480 0 - Live 0x0000000000000000\n" + (modules.read_text() if modules.exists() else ""))
    _write(_root() / "sys/module/neuron/version", built + "\n")
    cores = {device_id: per_device for device_id, _, per_device, _ in INSTANCES.values()}
    for index, device_id in enumerate(_neuron_functions()):
        node = _root() / f"dev/neuron{index}"
        node.parent.mkdir(parents=True, exist_ok=True)
        if not node.exists():
            os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(240, index))
            node.chmod(_udev_mode())
        write_device_sysfs(_root(), index, device_id, cores.get(device_id, 2), {}, count_mode=count_mode(built))


def _udev_mode() -> int:
    """The mode the udev rules give `/dev/neuron*` (the driver's rule: 0666), 0600 without a rule."""
    mode = 0o600
    for rules in ("lib/udev/rules.d", "etc/udev/rules.d"):
        for path in sorted((_root() / rules).glob("*.rules")) if (_root() / rules).is_dir() else []:
            match = re.search(r'KERNEL=="neuron\*".*MODE="(0?[0-7]{3})"', path.read_text())
            if match:
                mode = int(match.group(1), 8)
    return mode


def holders() -> list[int]:
    pids = []
    for fd_dir in (_root() / "proc").glob("[0-9]*/fd"):
        if any(os.readlink(fd).startswith("/dev/neuron") for fd in fd_dir.iterdir() if fd.is_symlink()):
            pids.append(int(fd_dir.parent.name))
    return pids


def unload_module() -> None:
    if not loaded():
        raise Refused("rmmod: ERROR: Module neuron is not currently loaded", 1)
    if holders():
        raise Refused("rmmod: ERROR: Module neuron is in use", 1)
    modules = _root() / "proc/modules"
    modules.write_text("".join(line + "\n" for line in modules.read_text().splitlines()
                               if line.split()[:1] != ["neuron"]))
    shutil.rmtree(_root() / "sys/module/neuron", ignore_errors=True)
    shutil.rmtree(_root() / "sys/devices/virtual/neuron_device", ignore_errors=True)
    shutil.rmtree(_root() / "sys/class/neuron_device", ignore_errors=True)
    for node in (_root() / "dev").glob("neuron*"):
        node.unlink()


def _installed_dkms(version: str) -> None:
    """What aws-neuronx-dkms's postinst leaves: the DKMS tree of this version only, a build for the running kernel
    (when its headers are there), the modules-load and udev files, and the new module loaded. The driver's DKMS
    scripts (aws-neuron-driver 2.24.7.0 `preinstall`/`postinstall`) unload a loaded module before installing for the
    running kernel and `modprobe neuron` after; with a process holding a device the unload fails, DKMS aborts the
    install, and the old module keeps running (driver-stale)."""
    for old, path in list(dkms_sources()):
        if old != version:
            shutil.rmtree(path)
    (_root() / f"var/lib/dkms/aws-neuronx/{version}/source").mkdir(parents=True, exist_ok=True)
    (_root() / f"usr/src/aws-neuronx-{version}").mkdir(parents=True, exist_ok=True)
    _write(_root() / "etc/modules-load.d/neuron.conf", "neuron\n")
    _write(_root() / "lib/udev/rules.d/neuron-udev.rules", 'KERNEL=="neuron*", MODE="0666"\n')
    try:
        build_module(version, kernel())
    except Refused as error:  # dpkg reports the failed build and leaves the package half-configured
        sys.stderr.write(f"{error}\n")
        return
    if loaded():
        try:
            unload_module()
        except Refused as error:
            sys.stderr.write(f"{error}\nError! pre_install failed, aborting install.\n")
            return
    load_module()


def _removed_dkms() -> None:
    for _, path in list(dkms_sources()):
        shutil.rmtree(path)
    for module in (_root() / "lib/modules").glob("*/updates/dkms/neuron.*"):
        module.unlink()


def _package_files(name: str, installing: bool) -> None:
    files = {"aws-neuronx-runtime-lib": ["opt/aws/neuron/lib/libnrt.so.1"],
             "aws-neuronx-collectives": ["opt/aws/neuron/lib/libnccom.so.2"],
             "aws-neuronx-tools": [f"opt/aws/neuron/bin/{tool}" for tool in ("neuron-ls", "neuron-top",
                                                                           "neuron-monitor")]}.get(name, [])
    for relative in files:
        if installing:
            _write(_root() / relative, "ELF")
        elif (_root() / relative).exists():
            (_root() / relative).unlink()


def _headers(kind: str, name: str) -> str | None:
    match = re.fullmatch(r"linux-headers-(.+)", name) if kind == "deb" else re.fullmatch(
        r"kernel-devel-uname-r\s*=\s*(.+)", name)
    return match.group(1).strip() if match else None


def _upstream(version: str) -> tuple[int, ...]:
    """A deb version's upstream part as numbers (`2.23.110.0-9b5179492` → 2, 23, 110, 0), as dpkg orders Neuron's."""
    return tuple(int(part) for part in re.findall(r"\d+", version.split(":")[-1].split("-")[0]))


def _installed_version(kind: str, name: str) -> str | None:
    if kind == "rpm":
        return rpm_packages().get(name)
    return next((stanza["Version"] for stanza in dpkg_stanzas() if stanza["Package"] == name), None)


def _installed_as_is(kind: str, name: str, version: str) -> bool:
    """The package is fully installed at this very version: `apt-get install` and `dnf install` then do nothing
    ("is already the newest version"), however its files look; only a reinstall writes them again."""
    if kind == "rpm":
        return rpm_packages().get(name) == version
    return any(stanza["Package"] == name and stanza.get("Version") == version
               and stanza.get("Status", "").endswith(" ok installed") for stanza in dpkg_stanzas())


def _install(kind: str, specs: list[str], allow_held: bool, allow_downgrades: bool, reinstall: bool = False) -> None:
    for spec in specs:
        headers = _headers(kind, spec)
        if headers is not None:
            (_root() / f"lib/modules/{headers}/build").mkdir(parents=True, exist_ok=True)
            _record_package(kind, f"linux-headers-{headers}" if kind == "deb" else "kernel-devel", headers)
            continue
        if kind == "deb":
            name, _, pattern = spec.partition("=")
        else:
            match = re.fullmatch(r"(aws-neuron[a-z-]*?)-(\d[^\s]*)", spec)
            name, pattern = (match.group(1), match.group(2)) if match else (spec, "")
        installed = _installed_version(kind, name)
        # `dnf reinstall NAME` writes the installed version again; any other install picks from the repository
        version = installed if reinstall and not pattern and installed else _choose(kind, name, pattern or None)
        if not reinstall and _installed_as_is(kind, name, version):
            continue
        if kind == "deb":
            held = any(stanza["Package"] == name and stanza.get("Status", "").startswith("hold")
                       for stanza in dpkg_stanzas())
            if held and not allow_held:
                raise Refused("E: Held packages were changed and -y was used without --allow-change-held-packages.",
                              100)
            previous = next((stanza["Version"] for stanza in dpkg_stanzas() if stanza["Package"] == name), None)
            if previous and _upstream(version) < _upstream(previous) and not allow_downgrades:
                raise Refused("E: Packages were downgraded and -y was used without --allow-downgrades.", 100)
        _record_package(kind, name, version)
        _package_files(name, True)
        for tool in TOOLCHAIN_COMMANDS.get(name, ()):
            _write(_root() / f"usr/bin/{tool}", "ELF")
        if name == DKMS_PACKAGE:
            _installed_dkms(re.split(r"[-_]", version)[0])


def _record_package(kind: str, name: str, version: str) -> None:
    if kind == "rpm":
        packages = rpm_packages()
        packages[name] = version
        write_rpm(packages)
        return
    stanzas = [stanza for stanza in dpkg_stanzas() if stanza["Package"] != name]
    previous = next((stanza for stanza in dpkg_stanzas() if stanza["Package"] == name), {})
    status = "hold ok installed" if previous.get("Status", "").startswith("hold") else "install ok installed"
    stanzas.append({"Package": name, "Status": status, "Priority": "optional", "Section": "kernel",
                    "Architecture": "amd64", "Version": version, "Description": f"{name}\n Neuron package."})
    write_dpkg(stanzas)


def _remove(kind: str, names: list[str]) -> None:
    for name in names:
        if kind == "rpm":
            packages = rpm_packages()
            packages.pop(name, None)
            write_rpm(packages)
        else:
            write_dpkg([stanza for stanza in dpkg_stanzas() if stanza["Package"] != name])
        _package_files(name, False)
        if name == DKMS_PACKAGE:
            _removed_dkms()
        if name == "aws-neuron-dkms":
            shutil.rmtree(_root() / "var/lib/dkms/aws-neuron", ignore_errors=True)


def _check_signed_lists() -> None:
    """`apt-get update` refuses a list whose `signed-by` keyring is not there (NO_PUBKEY: the repository is not
    signed)."""
    lists = _root() / "etc/apt/sources.list.d"
    for path in sorted(lists.glob("*.list")) if lists.is_dir() else []:
        for keyring in re.findall(r"signed-by=([^\s\]]+)", path.read_text()):
            if not inside(keyring).is_file():
                raise Refused(f"E: The repository in {path.name} is not signed (NO_PUBKEY: {keyring} is missing).",
                              100)


def _package_manager(kind: str, args: list[str]) -> None:
    # `-o NAME=VALUE` (apt's configuration option, bootstrap's DPkg::Lock::Timeout) takes the next word as its value
    args = [arg for index, arg in enumerate(args) if arg != "-o" and (index == 0 or args[index - 1] != "-o")]
    words = [arg for arg in args if not arg.startswith("-")]
    if not words:
        raise Refused("simulator: no operation", 2)
    operation, targets = words[0], words[1:]
    if operation in ("update", "makecache", "upgrade") and not targets:
        if kind == "deb":
            _check_signed_lists()
        return
    if kind == "rpm" and operation == "versionlock":  # python3-dnf-plugin-versionlock
        if targets[:1] != ["add"]:
            raise Refused(f"simulator: dnf versionlock {' '.join(targets[:1])} is not simulated", 2)
        lock = _root() / VERSIONLOCK
        lock.parent.mkdir(parents=True, exist_ok=True)
        with lock.open("a") as handle:
            handle.writelines(f"{target}\n" for target in targets[1:])
        return
    if operation == "install" and kind == "rpm" and targets == ["python3-dnf-plugin-versionlock"]:
        return
    if operation in ("install", "upgrade", "reinstall"):
        _install(kind, targets, "--allow-change-held-packages" in args, "--allow-downgrades" in args,
                 reinstall=operation == "reinstall" or "--reinstall" in args)
    elif operation in ("remove", "purge", "erase"):
        _remove(kind, targets)
    else:
        raise Refused(f"simulator: {operation} is not simulated", 2)


def _dkms(args: list[str]) -> None:
    for_kernel = args[args.index("-k") + 1] if "-k" in args else kernel()
    if args[:1] == ["autoinstall"]:
        for version, _ in list(dkms_sources()):
            build_module(version, for_kernel)
    elif args[:1] == ["install"] and len(args) > 1 and args[1].startswith("aws-neuronx/"):
        version = args[1].split("/", 1)[1]
        if not (_root() / f"var/lib/dkms/aws-neuronx/{version}").is_dir():
            raise Refused(f"Error! DKMS tree does not contain: aws-neuronx/{version}", 3)
        build_module(version, for_kernel)
    else:
        raise Refused(f"simulator: dkms {' '.join(args)} is not simulated", 2)


def _tee(args: list[str]) -> None:
    data = sys.stdin.read()
    append = "-a" in args
    for target in [arg for arg in args if not arg.startswith("-")]:
        path = inside(target)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "a" if append else "w") as handle:
            handle.write(data)
    sys.stdout.write(data)


def _chmod(args: list[str]) -> None:
    mode, *targets = [arg for arg in args if not arg.startswith("-")]
    for target in targets:
        inside(target).chmod(int(mode, 8))


def _kill(args: list[str]) -> None:
    for pid in [arg for arg in args if arg.isdigit()]:
        proc = _root() / "proc" / pid
        if not proc.is_dir():
            raise Refused(f"kill: ({pid}) - No such process", 1)
        shutil.rmtree(proc)
        modules = _root() / "proc/modules"
        if modules.exists():  # the module's use count drops with the holder
            modules.write_text(re.sub(r"^neuron (\d+) (\d+)", lambda m: f"neuron {m.group(1)} "
                                      f"{max(0, int(m.group(2)) - 1)}", modules.read_text(), flags=re.M))


def _ls(args: list[str]) -> None:
    for target in [arg for arg in args if not arg.startswith("-")]:
        matches = sorted(inside(target).parent.glob(Path(target).name))
        if not matches:
            raise Refused(f"ls: cannot access '{target}': No such file or directory", 2)
        for match in matches:
            info = match.lstat()
            sys.stdout.write(f"{stat.filemode(info.st_mode)} 1 root root {target}\n")


def as_rpm_host(root: Path) -> None:
    """A fixture host of the rpm family (AL2023, RHEL): its Neuron packages in the simulated rpm database with rpm
    versions, the Neuron yum repository instead of the apt list, no dpkg status."""
    os.environ.setdefault("ND_SIM_ROOT", str(root))
    previous = os.environ["ND_SIM_ROOT"]
    os.environ["ND_SIM_ROOT"] = str(root)
    try:
        packages = {stanza["Package"]: stanza["Version"] for stanza in dpkg_stanzas()
                    if stanza["Package"].startswith("aws-neuron")}
        write_rpm({name: (f"{version}-dkms" if name == DKMS_PACKAGE else f"{version.split('-')[0]}_ec8cd5e8b-1")
                   for name, version in packages.items()})
    finally:
        os.environ["ND_SIM_ROOT"] = previous
    (root / "var/lib/dpkg/status").unlink()
    apt_list = root / "etc/apt/sources.list.d/neuron.list"
    if apt_list.exists():
        apt_list.unlink()
        _write(root / "etc/yum.repos.d/neuron.repo", "[neuron]\nname=Neuron YUM Repository\n"
               "baseurl=https://yum.repos.neuron.amazonaws.com\nenabled=1\nmetadata_expire=0\n")


# The managed images' Inf1 boot services (tests/host_fixture.py IMAGE_INF1_PINS): each installs the
# aws-neuronx-dkms package cached in its folder with `rpm -e` and `rpm -i`, as their scripts do.
IMAGE_INF1_SERVICES = {"neuron-inf1-downgrade.service": "opt/ecs/neuron/inf1-rpms",
                       "neuron-package-install.service": "var/cache/eks/packages"}


def _systemctl(args: list[str]) -> None:
    """`systemctl restart UNIT` of an image's Inf1 service runs what its script does; other units change nothing
    the doctor reads."""
    if args[:1] != ["restart"] or len(args) < 2 or args[1] not in IMAGE_INF1_SERVICES:
        return
    cached = sorted((_root() / IMAGE_INF1_SERVICES[args[1]]).glob(f"{DKMS_PACKAGE}-*.rpm"))
    if not cached:
        raise Refused(f"ERROR: No cached inf1-compatible packages found in /{IMAGE_INF1_SERVICES[args[1]]}", 1)
    version = cached[0].name[len(DKMS_PACKAGE) + 1:].split("-")[0]
    packages = rpm_packages()
    packages[DKMS_PACKAGE] = f"{version}-dkms"
    write_rpm(packages)
    _installed_dkms(version)


def main(argv: list[str]) -> int:
    name, args = Path(argv[0]).name, argv[1:]
    with open(os.environ["ND_SIM_LOG"], "a") as log:
        log.write(json.dumps([name, *args]) + "\n")
    try:
        if name == "sudo":
            if not args or args[0] not in FAKE_COMMANDS:  # a real command as root on the test machine: never
                raise Refused(f"simulator: sudo {' '.join(args)} is not simulated", 77)
            os.execv(str(Path(argv[0]).with_name(args[0])), args)  # noqa: S606 - the fake, never a shell
        elif name == "chroot":  # `chroot ROOT CMD…` into the simulated root: CMD runs with the fakes on PATH
            if not args or Path(args[0]).resolve() != _root().resolve():
                raise Refused(f"simulator: chroot {args[:1]} is not the simulated root", 125)
            os.execvp(args[1], args[1:])  # noqa: S606 - a fixed shell line of the plan, fakes first on PATH
        elif name == "apt-mark":
            if args[:1] != ["hold"]:
                raise Refused(f"simulator: apt-mark {' '.join(args[:1])} is not simulated", 2)
            stanzas = dpkg_stanzas()
            for stanza in stanzas:
                if stanza["Package"] in args[1:]:
                    stanza["Status"] = "hold ok installed"
            write_dpkg(stanzas)
        elif name in ("apt-get", "apt"):
            _package_manager("deb", args)
        elif name in ("dnf", "yum"):
            _package_manager("rpm", args)
        elif name == "rpm":
            if "--import" in args:
                return 0
            sys.stdout.write("".join(f"{package}\t{version}\n" for package, version in rpm_packages().items()))
        elif name == "modprobe":
            if args != ["neuron"]:
                raise Refused(f"simulator: modprobe {' '.join(args)} is not simulated", 2)
            load_module()
        elif name == "rmmod":
            unload_module()
        elif name == "dkms":
            _dkms(args)
        elif name == "tee":
            _tee(args)
        elif name == "chmod":
            _chmod(args)
        elif name == "kill":
            _kill(args)
        elif name == "ls":
            _ls(args)
        elif name == "rm":
            for target in [arg for arg in args if not arg.startswith("-")]:
                path = inside(target)
                shutil.rmtree(path) if path.is_dir() and not path.is_symlink() else path.unlink()
        elif name == "systemctl":
            _systemctl(args)
        elif name == "udevadm":
            if args[:1] == ["trigger"]:
                for node in (_root() / "dev").glob("neuron*"):
                    node.chmod(_udev_mode())
        elif name == "install":  # `install -m 0755 -d /etc/apt/keyrings`
            if "-d" not in args:
                raise Refused(f"simulator: install {' '.join(args)} is not simulated", 2)
            for target in [arg for arg in args if arg.startswith("/")]:
                inside(target).mkdir(parents=True, exist_ok=True)
        elif name == "gpg":  # `gpg --batch --yes --dearmor -o /etc/apt/keyrings/neuron.gpg` < the armored key
            if "--dearmor" not in args or "-o" not in args:
                raise Refused(f"simulator: gpg {' '.join(args)} is not simulated", 2)
            key = sys.stdin.read()
            if "BEGIN PGP PUBLIC KEY BLOCK" not in key:
                raise Refused("gpg: no valid OpenPGP data found.", 2)
            inside(args[args.index("-o") + 1]).write_bytes(b"\x99simulated keyring")
        elif name == "wget":
            sys.stdout.write("-----BEGIN PGP PUBLIC KEY BLOCK-----\n(simulated)\n-----END PGP PUBLIC KEY BLOCK-----\n")
        elif name == "apt-key":  # the older form (apt 2): the key on stdin
            sys.stdin.read()
    except Refused as error:
        sys.stderr.write(f"{error}\n")
        return error.code
    return 0
