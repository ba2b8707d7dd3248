"""shadowing: copies ahead of the environment's own packages on the import path, and duplicate records.

The user site (`~/.local/lib/pythonX.Y/site-packages`) comes *before* a venv's site-packages when the
venv has `include-system-site-packages = true`, and PYTHONPATH comes before both (Python `site` module),
so a stray `pip install --user torch` silently replaces the Neuron-pinned torch.
"""

from __future__ import annotations

from neurondoctor.facts.python_env import SITE_ROLE_PYTHONPATH, SITE_ROLE_USER, Distribution, PythonEnvironment, SiteDir
from neurondoctor.neuron_version import release_tuple
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext, pin, pip_command
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Command, Fix, command, note, unset

TORCH_FAMILY = frozenset({"torch", "torch-xla", "torchvision", "torchaudio"})


def _watched(ctx: RuleContext) -> frozenset[str]:
    return TORCH_FAMILY | ctx.catalog.neuron_pip_packages()


def _removal_commands(site: SiteDir, dists: list[Distribution]) -> Fix:
    if site.role == SITE_ROLE_PYTHONPATH:
        return Fix([note("remove {} from PYTHONPATH (it is searched before the environment)", site.path),
                    unset("PYTHONPATH")])
    paths = []
    for dist in dists:
        paths.append(dist.metadata_dir)
        paths.extend(f"{site.path}/{top}" for top in dist.top_level)
    return Fix([command("rm", "-rf", *paths)])


def shadowing_copies(ctx: RuleContext) -> list[Finding]:
    """ND-SHADOW-001: the user site or PYTHONPATH holds packages that are imported instead of the env's:
    copies of the environment's own packages, and any torch or Neuron package."""
    watched = _watched(ctx)
    findings = []
    for env in ctx.facts.environments:
        own = {dist.name: dist for own_site in env.own_site_dirs() for dist in own_site.judged_distributions()}
        for site in env.site_dirs:
            if site.role not in (SITE_ROLE_USER, SITE_ROLE_PYTHONPATH):
                continue
            shadows = [dist for dist in site.judged_distributions() if (dist.name in own or dist.name in watched)
                       and not dist.placeholder]  # a placeholder is ND-PIP-001's, with its own removal
            if not shadows:
                continue
            critical = any(dist.name in watched for dist in shadows)
            described = [f"{dist.display_name} {dist.version}"
                         + (f" (environment has {own[dist.name].version})" if dist.name in own else "")
                         for dist in shadows]
            where = "user site" if site.role == SITE_ROLE_USER else "PYTHONPATH"
            findings.append(Finding(
                id="ND-SHADOW-001",
                category="shadowing",
                severity=SEVERITY_ERROR if critical else SEVERITY_WARNING,
                title=f"{len(shadows)} package(s) in the {where} {site.path} shadow this environment: "
                      + ", ".join(described[:4]) + (" …" if len(described) > 4 else ""),
                detail=(f"Python imports from the {where} before the environment's site-packages, so these copies "
                        "are the ones loaded. " + ("A torch or Neuron package there replaces the pinned stack."
                                                   if critical else "")),
                evidence={"venv": env.path, "site": site.path, "role": site.role, "packages": described},
                fix=_removal_commands(site, shadows),
            ))
    return findings


def duplicate_records(ctx: RuleContext) -> list[Finding]:
    """ND-SHADOW-002: two dist-infos of one (non-torch) package in one directory; torch is ND-TORCH-004."""
    findings = []
    for env in ctx.facts.environments:
        for site in env.site_dirs:
            by_name: dict[str, list[Distribution]] = {}
            for dist in site.judged_distributions():
                by_name.setdefault(dist.name, []).append(dist)
            duplicates = {name: dists for name, dists in by_name.items() if len(dists) > 1 and name != "torch"}
            if not duplicates:
                continue
            findings.append(Finding(
                id="ND-SHADOW-002",
                category="shadowing",
                severity=SEVERITY_WARNING,
                title=f"duplicate install records in {site.path}: "
                      + ", ".join(f"{name} ({', '.join(d.version for d in dists)})"
                                  for name, dists in sorted(duplicates.items())),
                detail="Which version `importlib.metadata` reports is arbitrary; pip may uninstall the wrong one.",
                evidence={"venv": env.path, "site": site.path,
                          "records": {name: [d.metadata_dir for d in dists] for name, dists in duplicates.items()}},
                fix=Fix([step for dists in duplicates.values() for step in _reinstall_one(env, dists)]),
            ))
    return findings


def _reinstall_one(env: PythonEnvironment, dists: list[Distribution]) -> list[Command]:
    """Remove every record of the package, then reinstall its newest recorded version over the files."""
    newest = max(dists, key=lambda dist: release_tuple(dist.version))
    return [command("rm", "-rf", *(dist.metadata_dir for dist in dists)),
            pip_command(env, "install", "--force-reinstall", "--no-deps",
                        pin(newest.display_name, newest.version))]


RULE_SET = RuleSet(
    rules=(shadowing_copies, duplicate_records),
    findings=(
        FindingSpec("ND-SHADOW-001", "shadowing", SEVERITY_ERROR,
                    "user-site or PYTHONPATH copies imported instead of the environment's", also=(SEVERITY_WARNING,)),
        FindingSpec("ND-SHADOW-002", "shadowing", SEVERITY_WARNING, "duplicate records of one distribution"),
    ),
)
