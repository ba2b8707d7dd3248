"""The cluster preflight's area: `check --list` and `explain` show its ids; `fleet check --slurm` runs it, `check`
does not."""

from __future__ import annotations

from neurondoctor.rules.check import Check
from neurondoctor.rules.fleet import collectives, consistency

CHECK = Check("fleet-preflight", "Cluster preflight", (consistency.RULE_SET, collectives.RULE_SET), lambda ctx: "")
