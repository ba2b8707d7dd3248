"""A failed bootstrap command is one line naming the cause and one next step: the outputs below are
what apt, dpkg, dnf and DKMS print in real reports (aws-neuron-sdk #647, #661, #843, #945 for DKMS builds), whose
last line (`E: Sub-process /usr/bin/dpkg returned an error code (1)`) names nothing."""

from __future__ import annotations

from typing import Optional

import pytest

from neurondoctor.actions.bootstrap.step_failure import OUTPUT_TAIL_LINES, explain_failure
from neurondoctor.command_runner import CommandResult

INSTALL = "sudo apt-get install -y --allow-change-held-packages aws-neuronx-dkms=2.15.9.0*"

# aws-neuron-sdk #843: a GitHub runner's Azure kernel, which the driver of that release did not build for.
DKMS_BUILD = """Preparing to unpack .../aws-neuronx-dkms_2.15.9.0_amd64.deb ...
Unpacking aws-neuronx-dkms (2.15.9.0) ...
Setting up dkms (2.8.7-2ubuntu2.2) ...
Setting up aws-neuronx-dkms (2.15.9.0) ...
Loading new aws-neuronx-2.15.9.0 DKMS files...
Building for 6.5.0-1015-azure
Building for architecture x86_64
Building initial module for 6.5.0-1015-azure
Error! Bad return status for module build on kernel: 6.5.0-1015-azure (x86_64)
Consult /var/lib/dkms/aws-neuronx/2.15.9.0/build/make.log for more information.
dpkg: error processing package aws-neuronx-dkms (--configure):
 installed aws-neuronx-dkms package post-installation script subprocess returned error exit status 10
Errors were encountered while processing:
 aws-neuronx-dkms
E: Sub-process /usr/bin/dpkg returned an error code (1)
"""
# aws-neuron-sdk #661: the pre_install script refuses.
PRE_INSTALL = """Running the pre_install script:
Error! pre_install failed, aborting install.
You may override by specifying --force.
dpkg: error processing package aws-neuron-dkms (--configure):
 installed aws-neuron-dkms package post-installation script subprocess returned error exit status 101
E: Sub-process /usr/bin/dpkg returned an error code (1)
"""
LOCK = ("E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 2841 (unattended-upgr)\n"
        "N: Be aware that removing the lock file is not a solution and may break your system.\n"
        "E: Unable to acquire the dpkg frontend lock (/var/lib/dpkg/lock-frontend), is another process using it?\n")
INTERRUPTED = "E: dpkg was interrupted, you must manually run 'sudo dpkg --configure -a' to correct the problem.\n"
HEADERS = ("Building for 6.8.0-1009-aws\nError! Your kernel headers for kernel 6.8.0-1009-aws cannot be found at "
           "/lib/modules/6.8.0-1009-aws/build or /lib/modules/6.8.0-1009-aws/source.\n")
LOCATE = "Reading package lists...\nBuilding dependency tree...\nE: Unable to locate package aws-neuronx-dkms\n"
VERSION = "E: Version '2.99.0.0*' for 'aws-neuronx-dkms' was not found\n"
DNF_MATCH = ("Last metadata expiration check: 0:01:02 ago.\nNo match for argument: aws-neuronx-dkms-2.99.0.0*\n"
             "Error: Unable to find a match: aws-neuronx-dkms-2.99.0.0*\n")
KEY = ("W: GPG error: https://mirror.internal/neuron noble InRelease: The following signatures couldn't be verified "
       "because the public key is not available: NO_PUBKEY 5749CAD8646D9185\n"
       "E: The repository 'https://mirror.internal/neuron noble InRelease' is not signed.\n")
NETWORK = ("Err:1 https://mirror.internal/neuron noble InRelease\n  Temporary failure resolving 'mirror.internal'\n"
           "E: Failed to fetch https://mirror.internal/neuron/pool/main/a/aws-neuronx-dkms_2.15.9.0_amd64.deb  "
           "Temporary failure resolving 'mirror.internal'\nE: Unable to fetch some archives, maybe run apt-get "
           "update or try with --fix-missing?\n")
DISK = ("E: You don't have enough free space in /var/cache/apt/archives/.\n")
PROXY_SECRET = ("Err:1 http://mirror.internal/neuron noble InRelease\n  Could not connect to "
                "http://builder:hunter2secret@proxy.internal:3128 (10.0.0.1). - connect (111: Connection refused)\n")


def failed(output: str, returncode: Optional[int] = 100, timed_out: bool = False,
           error: Optional[str] = None) -> CommandResult:
    return CommandResult(argv=tuple(INSTALL.split()[1:]), returncode=returncode, stdout=output, stderr="",
                         duration_s=12.0, timed_out=timed_out, error=error)


@pytest.mark.parametrize(("output", "cause", "next_words"), [
    (DKMS_BUILD, "Error! Bad return status for module build on kernel: 6.5.0-1015-azure (x86_64)",
     "/var/lib/dkms/aws-neuronx/2.15.9.0/build/make.log"),
    (PRE_INSTALL, "Error! pre_install failed, aborting install.", "make.log under /var/lib/dkms"),
    (LOCK, "E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 2841 (unattended-upgr)",
     "wait until it finishes"),
    (INTERRUPTED, "E: dpkg was interrupted", "sudo dpkg --configure -a"),
    (HEADERS, "Error! Your kernel headers for kernel 6.8.0-1009-aws cannot be found",
     "sudo apt-get install -y linux-headers-6.8.0-1009-aws"),
    (LOCATE, "E: Unable to locate package aws-neuronx-dkms", "sudo apt-get update"),
    (VERSION, "E: Version '2.99.0.0*' for 'aws-neuronx-dkms' was not found", "--release"),
    (DNF_MATCH, "No match for argument: aws-neuronx-dkms-2.99.0.0*", "sudo dnf makecache"),
    (KEY, "W: GPG error:", "signing key"),
    (NETWORK, "Temporary failure resolving 'mirror.internal'", "cannot reach the package repository"),
    (DISK, "E: You don't have enough free space in /var/cache/apt/archives/.", "df -h"),
])
def test_the_line_that_names_the_cause_and_its_next_step(output: str, cause: str, next_words: str) -> None:
    failure = explain_failure("packages", INSTALL, failed(output),
                              headers="sudo apt-get install -y linux-headers-6.8.0-1009-aws")
    assert failure.summary.startswith(f"packages: `{INSTALL}` exited with status 100: {cause}"), failure.summary
    assert "\n" not in failure.summary and "\n" not in failure.next_step
    assert next_words in failure.next_step, failure.next_step
    assert failure.next_step.endswith("then run bootstrap --apply again (the steps already done are skipped)")
    assert "returned an error code" not in failure.summary  # apt's last line, the same for every cause
    assert list(failure.output_tail) == [line for line in output.splitlines() if line.strip()][-OUTPUT_TAIL_LINES:]


def test_an_unknown_cause_is_the_last_line_and_the_detail_is_kept() -> None:
    output = "\n".join(f"line {index}" for index in range(60)) + "\nsomething nobody has seen\n"
    failure = explain_failure("hold", "sudo apt-mark hold aws-neuronx-dkms", failed(output, returncode=1))
    assert failure.summary == "hold: `sudo apt-mark hold aws-neuronx-dkms` exited with status 1: something nobody " \
                              "has seen"
    assert "status file" in failure.next_step and "-v" in failure.next_step
    assert len(failure.output_tail) == OUTPUT_TAIL_LINES and failure.output_tail[-1] == "something nobody has seen"


def test_a_timeout_and_a_missing_program() -> None:
    timed = explain_failure("packages", INSTALL, failed("Building initial module\n", None, timed_out=True))
    assert timed.summary == f"packages: `{INSTALL}` did not finish within 12 s and was stopped"
    missing = explain_failure("hold", "sudo dnf versionlock add x", failed("", None, error="dnf: not found"))
    assert missing.summary == "hold: `sudo dnf versionlock add x` could not run: dnf: not found"


def test_secrets_in_the_output_are_cut_from_the_line_and_the_tail() -> None:
    failure = explain_failure("repository", "sudo apt-get update", failed(PROXY_SECRET))
    assert "hunter2secret" not in failure.summary and "[REDACTED]" in failure.summary
    assert not any("hunter2secret" in line for line in failure.output_tail)
    assert "cannot reach the package repository" in failure.next_step
