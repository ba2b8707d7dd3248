"""Property tests: garbage in every parsed host file yields facts or nothing, never an exception."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurondoctor.actions.check.check_run import CheckOptions, run_check
from neurondoctor.facts.host import OsRelease
from neurondoctor.host.kernel_modules import parse_proc_modules
from neurondoctor.host.neuron_devices import read_sysfs_devices
from neurondoctor.host.neuron_ls import parse_neuron_ls_json
from neurondoctor.host.os_packages import parse_dpkg_status, parse_rpm_query
from neurondoctor.host.os_release import parse_os_release
from neurondoctor.host.rootfs import RootFS
from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.rules.host_stack.env_vars import parse_core_list

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=800)
JSONISH = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=6),
                       lambda children: st.lists(children, max_size=4)
                       | st.dictionaries(st.sampled_from(["neuron_device", "nc_count", "neuroncore_ids",
                                                          "neuron_processes", "x"]), children, max_size=5),
                       max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_dpkg_status_parser(text: str) -> None:
    for package in parse_dpkg_status(text).values():
        assert package.name.startswith(("aws-neuron", "efa")) and package.version


def test_dpkg_status_real_shape() -> None:
    text = ("Package: aws-neuronx-dkms\nStatus: install ok installed\nVersion: 2.29.0.0\n\n"
            "Package: aws-neuronx-tools\nStatus: deinstall ok config-files\nVersion: 2.30.10.0\n\n"
            "Package: aws-neuronx-runtime-lib\nStatus: install ok installed\nVersion: 2.33.10.0-ec8cd5e8b\n")
    parsed = parse_dpkg_status(text)
    assert {name: package.version for name, package in parsed.items()} == {
        "aws-neuronx-dkms": "2.29.0.0", "aws-neuronx-runtime-lib": "2.33.10.0-ec8cd5e8b"}


_STANZA_PIECES = st.lists(st.sampled_from([
    "Package: aws-neuronx-dkms\n", "Package:  aws-neuronx-tools\n", "Package:efa\n", "Package: libc6\n",
    "Package: aws-neuron-dkms", "Status: install ok installed\n", "Status: hold ok installed\n",
    "Version: 2.29.0.0\n", " Package: aws-neuronx-collectives\n", "Description: x\n Package: aws-neuronx-fake\n",
    "\n", "\n\n", "Package:\n", "garbage\n"]), max_size=12).map("".join)


@settings(max_examples=500, deadline=None)
@given(st.one_of(TEXT, _STANZA_PIECES))
def test_the_package_line_search_finds_the_stanzas_the_pattern_finds(text: str) -> None:
    """parse_dpkg_status finds `Package:` lines with `str.find` and matches only Neuron ones: the same stanzas as
    running the stanza pattern over the whole text (which cost 5 ms on a full host's status file)."""
    from neurondoctor.host.os_packages import _STANZA, _neuron_stanzas

    assert [match.span() for match in _neuron_stanzas(text)] == [match.span() for match in _STANZA.finditer(text)]


def test_the_package_line_search_on_this_machines_status_file_and_a_fixture_host(tmp_path: Path) -> None:
    from neurondoctor.host.os_packages import _STANZA, _neuron_stanzas
    from tests.host_fixture import HostSpec, build_host

    texts = [(build_host(tmp_path / "host", HostSpec()) / "var/lib/dpkg/status").read_text()]
    if Path("/var/lib/dpkg/status").is_file():
        texts.append(Path("/var/lib/dpkg/status").read_text(errors="replace"))
    for text in texts:
        assert [match.span() for match in _neuron_stanzas(text)] == [match.span() for match in _STANZA.finditer(text)]
    assert len(_neuron_stanzas(texts[0])) >= 4


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_proc_modules_parser(text: str) -> None:
    for module in parse_proc_modules(text).values():
        assert module.size >= 0


def test_proc_modules_real_shape() -> None:
    modules = parse_proc_modules("neuron 237568 2 - Live 0xffffffffc0a00000\nena 180224 0 - Live 0x0\n")
    assert (modules["neuron"].size, modules["neuron"].used_by) == (237568, 2)


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_os_release_parser(text: str) -> None:
    assert isinstance(parse_os_release(text), OsRelease)


def test_os_release_quotes() -> None:
    parsed = parse_os_release('ID="amzn"\nVERSION_ID="2023"\nPRETTY_NAME="Amazon Linux 2023"\nID_LIKE="fedora"\n')
    assert (parsed.id, parsed.version_id, parsed.package_manager) == ("amzn", "2023", "dnf")


@settings(max_examples=300, deadline=None)
@given(JSONISH)
def test_neuron_ls_parser(document: object) -> None:
    import json

    for device in parse_neuron_ls_json(json.dumps(document)):
        assert isinstance(device.index, int)
    assert parse_neuron_ls_json("not json {") == []


@settings(max_examples=200, deadline=None)
@given(TEXT)
def test_rpm_and_core_list_parsers(text: str) -> None:
    parse_rpm_query(text)
    parse_core_list(text)


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=64), st.binary(max_size=64), st.binary(max_size=64))
def test_sysfs_and_whole_check_on_garbage_files(tmp_path_factory: pytest.TempPathFactory, catalog: ReleaseCatalog,
                                                 core_count: bytes, ecc: bytes, other: bytes) -> None:
    root = tmp_path_factory.mktemp("garbage-host")
    (root / "usr/bin").mkdir(parents=True)  # a host tree: garbage in its files, not a folder that holds no host
    device = root / "sys/class/neuron_device/neuron0"
    (device / "stats/hardware").mkdir(parents=True)
    (device / "info/architecture").mkdir(parents=True)
    (device / "core_count").write_bytes(core_count)
    (device / "stats/hardware/sram_ecc_uncorrected").write_bytes(ecc)
    (device / "info/architecture/arch_type").write_bytes(other)
    for relative in ("var/lib/dpkg/status", "proc/modules", "etc/os-release", "sys/module/neuron/version",
                     "proc/sys/kernel/osrelease", "sys/devices/virtual/dmi/id/product_name"):
        path = Path(root, relative)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(other + core_count + b"\n" + ecc)
    devices, layout = read_sysfs_devices(RootFS(root), (other + core_count).decode("utf-8", "replace"))
    assert len(devices) == 1 and layout in ("classic", "driver-2.31", "unknown")
    report = run_check(CheckOptions(root=str(root), environ={}), catalog=catalog)
    # Garbage where a counter belongs under a driver that reads as 2.31 or newer (or as no release) is "could not
    # read", no crash; a core_count or counter that is there but not a number is "could not read" too, never a guess.
    assert report.internal_problems == [] and {failure.collector for failure in
                                               report.facts.host.collector_failures} <= {"ecc-counters", "core-counts"}
