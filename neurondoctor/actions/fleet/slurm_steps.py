"""The cluster preflight's Slurm side: which nodes, one `srun` step per node, and the node addresses.

Slurm is the engine: no ssh, no agent. Every node gets a step of its own (`srun --nodes=1 --nodelist=NODE`) with
its own deadline, because one `srun -N…` step aborts as a whole when a single node cannot be reached; inside an
allocation the steps `--overlap` whatever else runs there. The step runs the node's own doctor, which takes its
options from that node's health.conf (`check --health-conf`) and judges the task's environment: srun's default
`--export=ALL` plus what the node's TaskProlog exports. A node is its Slurm NodeName (ParallelCluster's names are
not host names), never dropped: no answer in time, or a step that cannot start there, is `unreachable`.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Mapping, Sequence

from neurondoctor import exit_codes, json_data
from neurondoctor.command_runner import run_command
from neurondoctor.report.health import STATE_UNKNOWN
from neurondoctor.report.preflight import STATE_UNREACHABLE, NodeAnswer
from neurondoctor.report.reader import ReportFormatError, parse_report

SCONTROL_TIMEOUT_S = 30.0
# srun, sent SIGTERM at a step's deadline, asks slurmctld to cancel the step ("Job step aborted: Waiting up to N
# seconds for job step to finish"); killed at once, it leaves the step running on the node until the allocation ends.
SRUN_STOP_GRACE_S = 5.0
# What a Slurm NodeName looks like; anything else from scontrol or sinfo is refused before it reaches argv.
NODE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
# srun's line for a task that ran and exited non-zero: the doctor answered (its own error is on the lines before).
_TASK_EXITED = re.compile(r"srun: error: \S+: task \d+: Exited with exit code \d+")
_SRUN_LINE = re.compile(r"^srun: ")


def _names(text: str, source: str) -> list[str]:
    names: list[str] = []
    for line in text.split():
        if not NODE_NAME.match(line):
            raise exit_codes.UserError(f"{source} gave {line[:60]!r}, which is not a Slurm node name")
        if line not in names:
            names.append(line)
    return names


def expand_nodes(expression: str, env: Mapping[str, str]) -> list[str]:
    """A Slurm host list (`trn-[1-4],trn-9`) as node names, through `scontrol show hostnames`."""
    result = run_command(["scontrol", "show", "hostnames", expression], timeout=SCONTROL_TIMEOUT_S, env=env)
    if not result.ok:
        raise exit_codes.UserError(f"cannot expand the node list {expression!r}: {result.describe_failure()}")
    return _names(result.stdout, "scontrol show hostnames")


def partition_nodes(partition: str, env: Mapping[str, str]) -> list[str]:
    result = run_command(["sinfo", "--noheader", "--Node", f"--partition={partition}", "--format=%N"],
                         timeout=SCONTROL_TIMEOUT_S, env=env)
    if not result.ok:
        raise exit_codes.UserError(f"cannot list partition {partition!r}: {result.describe_failure()}")
    names = _names(result.stdout, "sinfo")
    if not names:
        raise exit_codes.UserError(f"partition {partition!r} has no nodes")
    return names


def node_addresses(nodes: Sequence[str], env: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """NodeName → (NodeAddr, NodeHostName), from `scontrol -o show node` ({} when it cannot tell)."""
    result = run_command(["scontrol", "--oneliner", "show", "node"], timeout=SCONTROL_TIMEOUT_S, env=env)
    wanted = set(nodes)
    addresses: dict[str, tuple[str, str]] = {}
    for line in result.stdout.splitlines() if result.ok else []:
        fields = dict(token.split("=", 1) for token in line.split() if "=" in token)
        name = fields.get("NodeName", "")
        if name in wanted and fields.get("NodeAddr"):
            addresses[name] = (fields["NodeAddr"], fields.get("NodeHostName") or fields["NodeAddr"])
    return addresses


def one_host(nodes: Sequence[str], addresses: Mapping[str, tuple[str, str]]) -> bool:
    """Whether every node is on one machine (a test cluster of several slurmd): one NodeHostName, or only loopback
    addresses. Then a loopback root communicator is right; anywhere else it is not."""
    if not nodes or set(nodes) - set(addresses):
        return False
    hosts = {addresses[node][1] for node in nodes}
    return len(hosts) == 1 or all(addresses[node][0].startswith("127.") for node in nodes)


def srun_argv(node: str, remote: Sequence[str], in_allocation: bool) -> list[str]:
    argv = ["srun", "--nodes=1", "--ntasks=1", f"--nodelist={node}", "--job-name=neurondoctor-preflight"]
    if in_allocation:
        argv.append("--overlap")  # beside the allocation's other steps (a job already running there)
    return [*argv, "--", *remote]


def _doctor_error(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not _SRUN_LINE.match(line)]
    return lines[-1][:200] if lines else "no output"


def node_answer(node: str, stdout: str, stderr: str, timed_out: bool, deadline_s: float, seconds: float,
                command_error: str = "") -> NodeAnswer:
    """What one step's output says about its node (pure): a report, or why there is none."""
    text = stdout.strip()
    if text.startswith("{"):
        collecting = gc.isenabled()
        gc.disable()  # a report is a tree of fresh objects with no cycle: collecting during the parse only costs
        try:          # (256 large reports: 40% of the preflight's time)
            report = parse_report(json_data.loads(text))
        except (ValueError, RecursionError, ReportFormatError) as error:
            return NodeAnswer(node, None, STATE_UNKNOWN, [f"answered, but not with a report: {str(error)[:160]}"],
                              seconds)
        finally:
            if collecting:
                gc.enable()
        return NodeAnswer(node, report, report.health.state, list(report.health.reasons), seconds)
    if text:
        return NodeAnswer(node, None, STATE_UNKNOWN, [f"answered, but not with a report: {text[:80]!r}"], seconds)
    if command_error:
        raise exit_codes.UserError(f"srun could not run here: {command_error}")
    if timed_out:
        return NodeAnswer(node, None, STATE_UNREACHABLE, [f"no answer within {deadline_s:g} s"], seconds)
    if _TASK_EXITED.search(stderr) or "execve" in stderr:
        return NodeAnswer(node, None, STATE_UNKNOWN, [f"its doctor gave no report: {_doctor_error(stderr)}"],
                          seconds)
    srun_errors = [line.strip() for line in stderr.splitlines() if _SRUN_LINE.match(line)]
    why = srun_errors[0][len("srun: "):][:200] if srun_errors else _doctor_error(stderr)
    return NodeAnswer(node, None, STATE_UNREACHABLE, [f"the step did not start there: {why}"], seconds)


def run_step(node: str, remote: Sequence[str], deadline_s: float, env: Mapping[str, str],
             in_allocation: bool) -> tuple[NodeAnswer, str]:
    """(the node's answer, the report text it printed) for one node, within its deadline."""
    result = run_command(srun_argv(node, remote, in_allocation), timeout=deadline_s, env=env,
                         stop_grace_s=SRUN_STOP_GRACE_S)
    answer = node_answer(node, result.stdout, result.stderr, result.timed_out, deadline_s, result.duration_s,
                         result.error or "")
    return answer, result.stdout if answer.report is not None else ""
