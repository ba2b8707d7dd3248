"""Why a bootstrap command failed, in one line, and what to do next (pure: the command's result in, words out).

A failed `apt-get install` ends with `E: Sub-process /usr/bin/dpkg returned an error code (1)` whatever the cause,
so the last line names nothing. The line that does is found by the messages apt, dpkg, dnf and DKMS print for the
causes that stop an unattended set-up (the aws-neuron-sdk tracker: #647, #843 and #945 are DKMS builds that failed
on a kernel the driver did not support; the dpkg lock is unattended-upgrades at first boot). The last lines of the
output, secrets cut, go to the status file, and with `-v` to the log: the detail is never lost, only moved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from neurondoctor.command_runner import CommandResult
from neurondoctor.log_text import bounded_lines
from neurondoctor.redaction import redact_secrets

OUTPUT_TAIL_LINES = 20
_AGAIN = "then run bootstrap --apply again (the steps already done are skipped)"


@dataclass(frozen=True)
class StepFailure:
    """`summary`: the step, its command and the cause in one line; `next_step`: what to do; `output_tail`: the
    command's last lines, secrets cut (the status file's, and the log's with -v)."""

    summary: str
    next_step: str
    output_tail: tuple[str, ...]


@dataclass(frozen=True)
class _Cause:
    pattern: re.Pattern[str]
    next_step: str  # `{log}` is the DKMS build log the output names, `{headers}` the headers command


_CAUSES = (
    _Cause(re.compile(r"Could not get lock /var/lib/dpkg|Unable to acquire the dpkg (frontend )?lock"),
           "another package manager holds the dpkg lock (at first boot, unattended-upgrades): wait until it "
           f"finishes, {_AGAIN}"),
    _Cause(re.compile(r"dpkg was interrupted"), f"finish the interrupted install with `sudo dpkg --configure -a`, "
           f"{_AGAIN}"),
    _Cause(re.compile(r"Your kernel headers for kernel \S+ cannot be found|Kernel headers .{0,200} not found", re.I),
           f"install the running kernel's headers (`{{headers}}`), {_AGAIN}"),
    _Cause(re.compile(r"Bad return status for module build|pre_install failed|dkms autoinstall .{0,200} failed"),
           "the driver did not build for this kernel; its build log is {log}: a kernel newer than the release's "
           "driver supports is the usual cause (use the kernel of a Neuron DLAMI or a newer release), "
           f"{_AGAIN}"),
    _Cause(re.compile(r"Temporary failure resolving|Could not resolve|Could not connect to|"
                      r"Cannot download repomd\.xml|Failed to download metadata|Curl error|Connection timed out"),
           "the host cannot reach the package repository (DNS, no route from a private subnet, a proxy not set): "
           f"give it a route, a proxy or a mirror, {_AGAIN}"),
    _Cause(re.compile(r"Unable to locate package|No match for argument|Unable to find a match"),
           "the package lists do not have it: the Neuron repository must be configured (the repository step) and "
           f"its lists fresh (`sudo apt-get update`, `sudo dnf makecache`); a mirror must carry it; {_AGAIN}"),
    _Cause(re.compile(r"Version '[^']*' for '[^']*' was not found"),
           "the repository does not carry this version (a mirror behind the release?): update the mirror or "
           f"choose a release it carries with --release, {_AGAIN}"),
    _Cause(re.compile(r"NO_PUBKEY|signatures couldn't be verified|is not signed|GPG check FAILED|"
                      r"public key .{0,200} is not installed", re.I),
           f"the repository's signing key is missing or changed: fetch it again (the repository step), {_AGAIN}"),
    _Cause(re.compile(r"No space left on device|You don't have enough free space|needs \S+ more space", re.I),
           f"the disk is full: free space (`df -h /var /usr`), {_AGAIN}"),
)
_DKMS_LOG = re.compile(r"Consult (/\S+make\.log)")


def output_lines(result: CommandResult) -> list[str]:
    """The command's non-blank output lines, secrets cut from the whole text first (a private key spans lines), each
    cut at log_text.MAX_LINE before the causes' patterns read it."""
    text = f"{result.stdout}\n{result.stderr}" if result.stdout and result.stderr else result.stdout or result.stderr
    return [line.rstrip() for line in bounded_lines(redact_secrets(text)) if line.strip()]


def explain_failure(step: str, line: str, result: CommandResult, headers: str = "", again: str = "") -> StepFailure:
    """The one-line summary and next step of a failed command `line` of `step`; `headers` is the command that
    installs the running kernel's headers (named when DKMS cannot find them); `again` replaces "then run bootstrap
    --apply again" for another command that runs steps (upgrade)."""
    failure = _explain(step, line, result, headers)
    if not again:
        return failure
    return StepFailure(failure.summary, failure.next_step.replace(_AGAIN, again), failure.output_tail)


def _explain(step: str, line: str, result: CommandResult, headers: str) -> StepFailure:
    lines = output_lines(result)
    tail = tuple(text[:500] for text in lines[-OUTPUT_TAIL_LINES:])
    head = f"{step}: `{line}`"
    if result.error is not None:
        return StepFailure(f"{head} could not run: {result.error}", f"install what it needs on this host, {_AGAIN}",
                           tail)
    if result.timed_out:
        return StepFailure(f"{head} did not finish within {result.duration_s:.0f} s and was stopped",
                           f"a slow mirror or a long DKMS build: {_AGAIN}", tail)
    matched: Optional[tuple[_Cause, str]] = None
    for cause in _CAUSES:
        found = next((text for text in lines if cause.pattern.search(text)), None)
        if found is not None:
            matched = (cause, found)
            break
    if matched is None:
        last = lines[-1][:200] if lines else ""
        return StepFailure(f"{head} exited with status {result.returncode}" + (f": {last}" if last else ""),
                           f"its last lines are in the status file (and above with -v); fix what they say, {_AGAIN}",
                           tail)
    cause, found = matched
    log = next((match.group(1) for text in lines for match in [_DKMS_LOG.search(text)] if match),
               "make.log under /var/lib/dkms")
    next_step = cause.next_step.replace("{log}", log).replace("{headers}", headers or "the headers step")
    return StepFailure(f"{head} exited with status {result.returncode}: {found.strip()[:200]}",
                       next_step, tail)
