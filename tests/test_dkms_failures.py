"""The driver package is installed but its build failed: dkms-build with the first real error of
make.log, the kernel and the fix, never driver-missing; every dpkg `Status:` state read as dpkg means it.

The make.log lines are the shapes users posted (aws-neuron-sdk gh#647: gcc `-Werror=zero-length-bounds` on
kernel 5.19 with driver 2.8.4.0; gh#843: DKMS's `Error! Bad return status` after a kernel the driver predates).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from neurondoctor.host.dkms_state import first_error, missing_build_tool
from neurondoctor.host.os_packages import parse_dpkg_status
from tests.conftest import check_json, findings_by_id
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import outside_venv
from tests.wheelhouse import VenvFactory

GCC_FAILURE = """DKMS make.log for aws-neuronx-2.8.4.0 for kernel 5.19.0-1022-aws (x86_64)
Mon Apr  3 10:11:12 UTC 2023
make: Entering directory '/usr/src/linux-headers-5.19.0-1022-aws'
  CC [M]  /var/lib/dkms/aws-neuronx/2.8.4.0/build/neuron_module.o
  CC [M]  /var/lib/dkms/aws-neuronx/2.8.4.0/build/udma/udma_iofic.o
/var/lib/dkms/aws-neuronx/2.8.4.0/build/udma/udma_iofic.c: In function 'udma_iofic_error_ints_unmask_one':
""" "/var/lib/dkms/aws-neuronx/2.8.4.0/build/udma/udma_iofic.c:250:9: error: array subscript 0 is outside the "
"bounds of an interior zero-length array 'struct iofic_grp_ctrl[0]' [-Werror=zero-length-bounds]\n" """\
cc1: all warnings being treated as errors
make[2]: *** [scripts/Makefile.build:249: /var/lib/dkms/aws-neuronx/2.8.4.0/build/udma/udma_iofic.o] Error 1
make: *** [Makefile:1856: /var/lib/dkms/aws-neuronx/2.8.4.0/build] Error 2
make: Leaving directory '/usr/src/linux-headers-5.19.0-1022-aws'
"""


@pytest.mark.parametrize(("status", "present", "state"), [
    ("install ok installed", True, "installed"),
    ("hold ok installed", True, "installed"),
    ("install ok half-configured", True, "half-configured"),
    ("install reinstreq half-installed", True, "half-installed"),
    ("install ok unpacked", True, "unpacked"),
    ("install ok triggers-pending", True, "triggers-pending"),
    ("deinstall ok config-files", False, None),
    ("purge ok not-installed", False, None),
])
def test_every_dpkg_state_is_read_as_dpkg_means_it(status: str, present: bool, state: str | None) -> None:
    text = f"Package: aws-neuronx-dkms\nStatus: {status}\nVersion: 2.29.0.0\n\n"
    packages = parse_dpkg_status(text)
    assert ("aws-neuronx-dkms" in packages) == present
    if present:
        assert packages["aws-neuronx-dkms"].state == state


def test_the_first_real_error_of_a_make_log() -> None:
    assert first_error(GCC_FAILURE).startswith("/var/lib/dkms/aws-neuronx/2.8.4.0/build/udma/udma_iofic.c:250:9: "
                                               "error: array subscript 0")
    headers_gone = "make[1]: *** /lib/modules/6.8.0-1015-aws/build: No such file or directory.  Stop.\n"
    assert first_error(headers_gone) == headers_gone.strip()
    assert first_error("Building module:\nDone.\n") is None


def _half_configured_host(tmp_path: Path, **fields: object) -> Path:
    spec = {"module_built": False, "driver_loaded": False, "make_log": GCC_FAILURE,
            "dpkg_states": {"aws-neuronx-dkms": "install ok half-configured"}, **fields}
    return build_host(tmp_path / "root", HostSpec(**spec))  # type: ignore[arg-type]


def test_a_half_configured_driver_is_a_dkms_build_failure(tmp_path: Path) -> None:
    code, report, _ = check_json(["--root", str(_half_configured_host(tmp_path))])
    found = findings_by_id(report)
    assert "ND-DRV-001" not in found  # the package is there; its build failed
    finding = found["ND-DKMS-001"][0]
    assert finding["category"] == "dkms-build" and finding["severity"] == "error"
    assert "half-configured, its post-install DKMS build failed" in finding["title"]
    assert "6.8.0-1015-aws" in finding["title"] and "udma_iofic.c:250:9: error:" in finding["detail"]
    assert finding["evidence"]["package_state"] == "half-configured"
    assert finding["fix"] == ["sudo dkms install aws-neuronx/2.29.0.0 -k 6.8.0-1015-aws", "sudo dpkg --configure -a",
                              "sudo modprobe neuron"]
    assert code == 1


def test_a_half_configured_driver_without_headers_gets_the_headers_fix(tmp_path: Path, venvs: VenvFactory) -> None:
    root = _half_configured_host(tmp_path, headers=False,
                                 make_log="make[1]: *** /lib/modules/6.8.0-1015-aws/build: No such file or "
                                          "directory.  Stop.\n")
    _, report, _ = check_json(["--root", str(root), *outside_venv(venvs)])
    finding = findings_by_id(report)["ND-DKMS-002"][0]
    assert finding["fix"][0] == "sudo apt-get install -y linux-headers-6.8.0-1015-aws"
    assert "sudo dpkg --configure -a" in finding["fix"] and "No such file or directory" in finding["detail"]


def test_near_miss_a_held_driver_that_is_built_and_loaded_is_healthy(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "root", HostSpec(dpkg_states={"aws-neuronx-dkms": "hold ok installed"}))
    code, report, _ = check_json(["--root", str(root), *outside_venv(venvs)])
    assert not [finding for finding in report["findings"] if finding["category"] in ("dkms-build",
                                                                                    "driver-missing")]
    assert next(check for check in report["checks"] if check["id"] == "driver")["status"] == "ok"
    assert code == 0


def test_near_miss_a_removed_driver_with_config_files_is_missing_not_broken(tmp_path: Path, venvs: VenvFactory) -> None:
    root = build_host(tmp_path / "root", HostSpec(module_built=False, driver_loaded=False,
                                                  dpkg_states={"aws-neuronx-dkms": "deinstall ok config-files"}))
    _, report, _ = check_json(["--root", str(root), *outside_venv(venvs)])
    found = findings_by_id(report)
    assert "ND-DRV-001" in found and "ND-DKMS-001" not in found


# The shape kbuild prints when the compiler the kernel was built with is not installed (a public DKMS report of
# 2025-05 on an Ubuntu mainline kernel 6.14 built by gcc-14, here with the Neuron driver's paths).
GCC_MISSING = """DKMS make.log for aws-neuronx-2.29.0.0 for kernel 6.8.0-1015-aws (x86_64)
Thu May  8 09:15:12 PM EDT 2025
make: Entering directory '/usr/src/linux-headers-6.8.0-1015-aws'
warning: the compiler differs from the one used to build the kernel
  The kernel was built by: x86_64-linux-gnu-gcc-14 (Ubuntu 14.2.0-4ubuntu2) 14.2.0
  You are using:
  CC [M]  /var/lib/dkms/aws-neuronx/2.29.0.0/build/neuron_module.o
/bin/sh: 1: gcc-14: not found
make[3]: *** [scripts/Makefile.build:243: /var/lib/dkms/aws-neuronx/2.29.0.0/build/neuron_module.o] Error 127
make: Leaving directory '/usr/src/linux-headers-6.8.0-1015-aws'
"""


@pytest.mark.parametrize(("line", "tool"), [
    ("/bin/sh: 1: gcc-14: not found", "gcc-14"),
    ("make[2]: gcc-12: No such file or directory", "gcc-12"),
    ("/bin/sh: line 1: x86_64-linux-gnu-gcc-13: command not found", "x86_64-linux-gnu-gcc-13"),
    ("make: cc: No such file or directory", "cc"),
    ("make[1]: *** /lib/modules/6.8.0-1015-aws/build: No such file or directory.  Stop.", None),  # headers, not a tool
    ("error: gcc-14: not founded in the path", None),
])
def test_the_build_tool_a_make_log_could_not_find(line: str, tool: str | None) -> None:
    assert missing_build_tool(f"make: Entering directory\n{line}\n") == tool


def test_a_missing_kernel_compiler_is_installed_before_the_driver_is_rebuilt(tmp_path: Path,
                                                                             venvs: VenvFactory) -> None:
    root = _half_configured_host(tmp_path, make_log=GCC_MISSING)
    _, report, _ = check_json(["--root", str(root), *outside_venv(venvs)])
    [finding] = findings_by_id(report)["ND-DKMS-001"]
    assert finding["title"].endswith("the build tool gcc-14 is not installed (dpkg: half-configured, its post-install "
                                     "DKMS build failed)"), finding["title"]
    assert "`/bin/sh: 1: gcc-14: not found`" in finding["detail"]
    assert finding["fix"] == ["sudo apt-get install -y gcc-14",
                              "sudo dkms install aws-neuronx/2.29.0.0 -k 6.8.0-1015-aws", "sudo dpkg --configure -a",
                              "sudo modprobe neuron"]
