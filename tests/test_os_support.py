"""OS, kernel and GLIBC support per release. The verdict depends on the host's release: the runtime
and driver compatibility tables of release-notes/components/runtime.rst (2.28.0 on), the documented ends (Amazon
Linux 2's runtime after 2.19, Ubuntu 20.04's install guide after 2.21), and what the tools' binaries need
(neuron-ls of aws-neuronx-tools 2.26 fails on GLIBC 2.26 with `GLIBC_2.34' not found: aws/amazon-ecs-ami#539).
Every os-unsupported finding carries a fix."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from neurondoctor.host.glibc_version import glibc_from_dpkg_status, glibc_from_rpm_query, read_glibc_from_library
from neurondoctor.host.rootfs import RootFS
from neurondoctor.release_data.catalog import bundled_manifest_dir
from tests.conftest import check_json, cli_env, findings_by_id
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import outside_venv
from tests.wheelhouse import VenvFactory

AL2_TOOLS_FIX = "sudo yum install -y 'aws-neuronx-tools-2.25.145.0*'"


def _os_findings(root: Path, *extra: str) -> tuple[int, dict[str, list[dict[str, object]]]]:
    code, report, _ = check_json(["--root", str(root), *extra])
    found = findings_by_id(report)
    for finding_id, findings in found.items():
        if finding_id.startswith("ND-OS-"):
            assert all(finding["fix"] for finding in findings), finding_id  # every os-unsupported has a fix
    return code, {key: value for key, value in found.items() if key.startswith("ND-OS-")}


def test_amazon_linux_2_on_a_current_release(tmp_path: Path, venvs: VenvFactory) -> None:
    """The runtime ended with 2.19 (error), and the 2.31 tools cannot start on GLIBC 2.26 (error)."""
    root = build_host(tmp_path / "al2", HostSpec(os="al2", kernel="5.10.228-219.884.amzn2.x86_64"))
    code, found = _os_findings(root, *outside_venv(venvs, "2.31.1"))
    end = found["ND-OS-001"][0]
    assert (end["severity"], end["title"]) == (
        "error", "Amazon Linux 2 is not supported by Neuron 2.31.1: its runtime ends with Neuron 2.19")
    assert end["fix"][0] == "# move this host to Amazon Linux 2023 (Neuron DLAMIs are Ubuntu 24.04 from 2.30)"
    glibc = found["ND-OS-003"][0]
    assert glibc["title"] == "aws-neuronx-tools 2.31.15.0 needs GLIBC 2.34; Amazon Linux 2 has 2.26"
    assert glibc["evidence"]["glibc"] == "2.26" and "/usr/lib64/libc.so.6" not in str(glibc["detail"])
    assert glibc["fix"][-1] == AL2_TOOLS_FIX
    assert "ND-OS-002" not in found and code == 1  # kernel 5.10 is the driver's minimum, not below it


def test_amazon_linux_2_with_its_stock_kernel(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "al2", HostSpec(os="al2", kernel="4.14.355-275.570.amzn2.x86_64"))
    _, found = _os_findings(root, *outside_venv(venvs, "2.31.1"))
    assert found["ND-OS-002"][0]["fix"][0] == "sudo amazon-linux-extras install -y kernel-5.10"


def test_near_miss_a_2022_release_on_amazon_linux_2s_stock_kernel(tmp_path: Path) -> None:
    """Neuron 2.5.0 (November 2022, n2-manifest.json: driver 2.6.33.0, runtime 2.10.27.0) ran on AL2's
    4.14 kernel; the 5.10 minimum of today's drivers is not its rule."""
    root = build_host(tmp_path / "al2", HostSpec(
        os="al2", kernel="4.14.301-224.520.amzn2.x86_64", release=None,
        package_versions={"aws-neuronx-dkms": "2.6.33.0", "aws-neuronx-runtime-lib": "2.10.27.0",
                          "aws-neuronx-collectives": "2.10.34.0", "aws-neuronx-tools": "2.5.19.0"},
        loaded_version="2.6.33.0"))
    assert "ND-OS-002" not in _os_findings(root)[1]


def test_near_miss_tools_from_before_the_glibc_need(tmp_path: Path, venvs: VenvFactory) -> None:
    """aws-neuronx-tools 2.25.145.0 (Neuron 2.25.0) runs on Amazon Linux 2: no GLIBC finding."""
    root = build_host(tmp_path / "al2", HostSpec(os="al2", kernel="5.10.228-219.884.amzn2.x86_64", release="2.26.1",
                                                 package_versions={"aws-neuronx-tools": "2.25.145.0"}))
    assert "ND-OS-003" not in _os_findings(root, *outside_venv(venvs, "2.26.1"))[1]


def test_near_miss_amazon_linux_2023_is_tested(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "al2023", HostSpec(os="al2023", kernel="6.1.115-126.197.amzn2023.x86_64"))
    code, found = _os_findings(root, *outside_venv(venvs, "2.31.1"))
    assert found == {} and code == 0


def test_ubuntu_20_04_after_its_last_release(tmp_path: Path, venvs: VenvFactory) -> None:
    """Install pages for Ubuntu 20.04 stop at 2.21 (warning); the tools need GLIBC 2.34 and focal has 2.31 (error,
    read from dpkg's libc6)."""
    root = build_host(tmp_path / "focal", HostSpec(os="ubuntu20", kernel="5.15.0-1072-aws"))
    _, found = _os_findings(root, *outside_venv(venvs, "2.31.1"))
    end = found["ND-OS-001"][0]
    assert (end["severity"], end["title"]) == (
        "warning", "Ubuntu 20.04.6 LTS is not supported by Neuron 2.31.1: its install guide ends with Neuron 2.21")
    glibc = found["ND-OS-003"][0]
    assert glibc["evidence"]["glibc"] == "2.31" and "dpkg libc6" in str(glibc["detail"])
    assert glibc["fix"][-1] == ("sudo apt-get install -y --allow-change-held-packages --allow-downgrades "
                                "'aws-neuronx-tools=2.25.145.0*'")


def test_the_glibc_of_an_unreadable_c_library_is_what_the_os_ships(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "focal", HostSpec(os="ubuntu20", kernel="5.15.0-1072-aws"))
    status = root / "var/lib/dpkg/status"
    status.write_text("\n\n".join(stanza for stanza in status.read_text().split("\n\n")
                                  if not stanza.startswith("Package: libc6")))
    (root / "usr/lib/x86_64-linux-gnu/libc.so.6").unlink()
    glibc = _os_findings(root, *outside_venv(venvs, "2.31.1"))[1]["ND-OS-003"][0]
    assert glibc["evidence"]["glibc"] == "2.31"
    assert "what Ubuntu 20.04.6 LTS ships (the C library could not be read)" in str(glibc["detail"])


def test_debian_12_before_and_from_the_release_that_tests_it(tmp_path: Path, venvs: VenvFactory) -> None:
    """Debian 12 enters the runtime's table with 2.30.0: a 2.29.1 host is told to upgrade to it."""
    before = build_host(tmp_path / "d12-229", HostSpec(os="debian12", kernel="6.1.0-28-cloud-amd64",
                                                       release="2.29.1"))
    finding = _os_findings(before, *outside_venv(venvs, "2.29.1"))[1]["ND-OS-001"][0]
    assert (finding["severity"], finding["title"]) == (
        "warning", "Debian GNU/Linux 12 (bookworm) is not an OS Neuron 2.29.1 is tested on")
    assert finding["fix"][0] == ("# Neuron 2.30.0 is the first release whose runtime is tested on "
                                 "this OS: upgrade to it")
    from_230 = build_host(tmp_path / "d12-230", HostSpec(os="debian12", kernel="6.1.0-28-cloud-amd64",
                                                         release="2.30.0"))
    assert _os_findings(from_230, *outside_venv(venvs, "2.30.0"))[1] == {}


def test_an_os_only_the_driver_is_tested_on_and_one_nothing_is(tmp_path: Path, venvs: VenvFactory) -> None:
    rhel10 = build_host(tmp_path / "rhel10", HostSpec(os="rhel10", kernel="6.12.0-55.9.1.el10_0.x86_64"))
    finding = _os_findings(rhel10, *outside_venv(venvs, "2.31.1"))[1]["ND-OS-001"][0]
    assert finding["detail"].startswith("The Neuron driver is tested on it, the runtime is not;")
    assert finding["fix"] == ["# Neuron 2.31.1 is tested on Ubuntu 24.04, Ubuntu 22.04, Rocky Linux 9, Debian 12, "
                              "Amazon Linux 2023: move this host to one of them"]
    rhel9 = build_host(tmp_path / "rhel9", HostSpec(os="rhel9", kernel="5.14.0-427.13.1.el9_4.x86_64"))
    rhel9_finding = _os_findings(rhel9, *outside_venv(venvs, "2.31.1"))[1]["ND-OS-001"][0]
    assert rhel9_finding["detail"].startswith("Neither its runtime nor its driver")


def test_near_miss_rocky_9_point_release_on_trn1(tmp_path: Path, venvs: VenvFactory) -> None:
    """VERSION_ID 9.4 is Rocky Linux 9 of the tables; GLIBC 2.34 is read from libc.so.6's banner."""
    root = build_host(tmp_path / "rocky", HostSpec(os="rocky9", kernel="5.14.0-427.13.1.el9_4.x86_64"))
    assert _os_findings(root, *outside_venv(venvs, "2.31.1"))[1] == {}
    assert read_glibc_from_library(RootFS(root)) == ("2.34", "/lib64/libc.so.6")


def test_near_miss_releases_before_the_tables_are_judged_only_by_documented_ends(tmp_path: Path,
                                                                                venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "d12", HostSpec(os="debian12", kernel="6.1.0-28-cloud-amd64", release="2.26.1"))
    assert _os_findings(root, *outside_venv(venvs, "2.26.1"))[1] == {}


@pytest.mark.parametrize(("os_name", "kernel"), [("ubuntu24", "6.8.0-1015-aws"), ("ubuntu22", "6.8.0-1015-aws"),
                                                 ("al2023", "6.1.115-126.197.amzn2023.x86_64")])
@pytest.mark.parametrize("release", ["2.28.1", "2.29.1", "2.30.0", "2.31.1", "2.32.0"])
def test_near_miss_tested_oses_on_every_tabled_release(tmp_path: Path, os_name: str, kernel: str,
                                                       release: str, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "h", HostSpec(os=os_name, kernel=kernel, release=release))
    assert _os_findings(root, *outside_venv(venvs, release))[1] == {}


def test_glibc_parsers_read_what_package_databases_hold() -> None:
    status = ("Package: libc6\nStatus: deinstall ok config-files\nVersion: 2.27-3ubuntu1\n\n"
              "Package: libc6\nStatus: install ok installed\nArchitecture: amd64\nVersion: 2.35-0ubuntu3.8\n")
    assert glibc_from_dpkg_status(status) == "2.35"
    assert glibc_from_dpkg_status("Package: libc6-dev\nStatus: install ok installed\nVersion: 2.35-0\n") is None
    assert glibc_from_dpkg_status("Package: libc6\nStatus: install ok installed\nVersion: 1:2.36-9\n") == "2.36"
    assert glibc_from_rpm_query("bash\t5.2.15-1.amzn2023\nglibc\t2.34-196.amzn2023.0.1\n") == "2.34"
    assert glibc_from_rpm_query("glibc-common\t2.34-196\n") is None


def test_a_corrupt_os_support_file_is_one_error_line_and_the_report_goes_on(tmp_path: Path) -> None:
    manifests = tmp_path / "manifests"
    shutil.copytree(bundled_manifest_dir(), manifests)
    broken = manifests / "os-support.json"
    broken.write_text('{"schema": "neurondoctor.os-support/1", "tables": [{"from_release": "2.28"}]}')
    root = build_host(tmp_path / "al2", HostSpec(os="al2", kernel="5.10.228-219.884.amzn2.x86_64"))
    code, report, stderr = check_json(["--root", str(root)], env=cli_env({"NEURONDOCTOR_MANIFESTS": str(manifests)}))
    assert code == 2 and "Traceback" not in stderr
    assert stderr.strip().splitlines() == [
        f"error: {broken}: unexpected shape: os-support.tables[0].from_release: expected a release like 2.31.1, "
        "got '2.28'"]
    assert "ND-OS-003" not in findings_by_id(report)  # no data, no verdict — and no crash
    assert {check["id"] for check in report["checks"]} >= {"host-env", "driver", "runtime"}
