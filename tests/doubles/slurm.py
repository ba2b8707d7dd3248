"""A recording `scontrol` for the health tests and bench_health.py: `show node` prints the node as Slurm 22.05
does, every call is appended to a log. The real daemons run in tests/test_slurm_integration.py."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path
from typing import Optional

from tests.conftest import cli_env

# `scontrol show node` of Slurm 22.05 (Debian 12), as the integration test's slurmd prints it
SHOW_NODE = textwrap.dedent("""\
    NodeName=trn1-a Arch=x86_64 CoresPerSocket=1
       CPUAlloc=0 CPUEfctv=2 CPUTot=2 CPULoad=0.06
       AvailableFeatures=(null)
       ActiveFeatures=(null)
       Gres=(null)
       NodeAddr=127.0.0.1 NodeHostName=localhost Version=22.05.8
       RealMemory=1 AllocMem=0 FreeMem=20811 Sockets=2 Boards=1
       State={state} ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A
       Partitions=debug
       CfgTRES=cpu=2,mem=1M,billing=2
    {reason}""")


def node_text(state: str, reason: Optional[str] = None) -> str:
    return SHOW_NODE.format(state=state, reason=f"   Reason={reason} [root@2026-12-01T21:50:01]\n" if reason else "")



class FakeSlurm:
    """`scontrol` on PATH: prints the node as `show node` would and records every call."""

    def __init__(self, tmp_path: Path, state: str, reason: Optional[str] = None) -> None:
        self.bin = tmp_path / "bin"
        self.bin.mkdir(exist_ok=True)
        self.log = tmp_path / "scontrol.log"
        self.node = tmp_path / "node.txt"
        self.node.write_text(node_text(state, reason))
        script = self.bin / "scontrol"
        script.write_text(f'#!/bin/sh\necho "$@" >> {self.log}\n[ "$1" = show ] && cat {self.node}\nexit 0\n')
        script.chmod(0o755)

    def env(self, **extra: str) -> dict[str, str]:
        return cli_env({"PATH": f"{self.bin}:{os.environ['PATH']}", "SLURMD_NODENAME": "trn1-a", **extra})

    def calls(self) -> list[str]:
        return self.log.read_text().splitlines() if self.log.exists() else []
