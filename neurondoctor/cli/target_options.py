"""The options that say what a run judges, declared once for `check` and `health`: the tree, the environments,
the release, the checks. Both commands read the same words the same way, and `fleet check` forwards them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Optional

import typer

if TYPE_CHECKING:
    from neurondoctor.actions.health.config import HealthConfig

RootOption = Annotated[Optional[str], typer.Option(
    "--root", metavar="DIR", help="Inspect the Linux tree under DIR (a mounted AMI, a container rootfs); default /.")]
VenvOption = Annotated[Optional[list[str]], typer.Option(
    "--venv", metavar="DIR", help="Inspect this environment statically, without running it (repeatable).")]
PythonOption = Annotated[Optional[list[str]], typer.Option(
    "--python", metavar="EXE", help="Inspect this interpreter's environment live (repeatable).")]
ReleaseOption = Annotated[Optional[str], typer.Option(
    "--release", metavar="X.Y.Z", help="Judge the environments against this Neuron release.")]
SelectOption = Annotated[Optional[list[str]], typer.Option(
    "--select", metavar="ID", help="Only these checks: finding ids (ND-TORCH, ND-PIN-001) or categories "
                                   "(repeatable).")]
SkipOption = Annotated[Optional[list[str]], typer.Option(
    "--skip", metavar="ID", help="Leave out these checks: finding ids or categories (repeatable).")]


@dataclass
class Targets:
    """What the options named; None or empty where the command line said nothing (health.conf may fill it)."""

    root: Optional[str] = None
    venvs: list[str] = field(default_factory=list)
    pythons: list[str] = field(default_factory=list)
    release: Optional[str] = None
    select: list[str] = field(default_factory=list)
    skip: list[str] = field(default_factory=list)

    @classmethod
    def named(cls, root: Optional[str], venvs: Optional[list[str]], pythons: Optional[list[str]],
              release: Optional[str], select: Optional[list[str]], skip: Optional[list[str]]) -> Targets:
        """What the command line named (typer gives None for a repeatable option not given)."""
        return cls(root, list(venvs or []), list(pythons or []), release, list(select or []), list(skip or []))

    def over(self, config: HealthConfig) -> Targets:
        """These options over health.conf's, as `health` and `check --health-conf` both take them: what the command
        line named wins, the file fills the rest."""
        return Targets(self.root or config.root, self.venvs or list(config.venvs),
                       self.pythons or list(config.pythons), self.release or config.release,
                       self.select or list(config.select), self.skip or list(config.skip))

    @property
    def named_any(self) -> bool:
        """Whether the command line named a tree, a release or checks (the options health.conf cannot override)."""
        return bool(self.root or self.release or self.select or self.skip)
