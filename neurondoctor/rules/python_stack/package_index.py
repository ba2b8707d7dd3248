"""wrong-pip-index: PyPI placeholders installed, or pip configured without the Neuron repository.

The real torch-neuronx, neuronx-cc, libneuronxla and transformers-neuronx live on the Neuron pip
repository; PyPI holds placeholders (`torch-neuronx 1.0`, `transformers-neuronx 0.1`) whose import raises
`ImportError("WRONG PACKAGE. ...")` (docs/measured.md). The docs configure the Neuron repository as an
*extra* index (setup/pytorch/manual.rst: `pip config set global.extra-index-url …`).
"""

from __future__ import annotations

from typing import Optional

from neurondoctor.facts.guard_files import CONSTRAINTS_FILE
from neurondoctor.facts.python_env import (
    SITE_ROLE_PYTHONPATH,
    SITE_ROLE_USER,
    Distribution,
    PipConfigSource,
    PythonEnvironment,
    SiteDir,
)
from neurondoctor.python_packaging import canonical_name
from neurondoctor.release_data.catalog import PackageEntry
from neurondoctor.rules.check import FindingSpec, RuleSet, environment_check
from neurondoctor.rules.context import RuleContext, made_by_uv_without_pip, pin, pip_command
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_INFO, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Command, Fix, Step, command, export, note, unset
from neurondoctor.rules.python_stack.torch_build import is_cuda_build

CATEGORY = "wrong-pip-index"


def _is_neuron_repository(url: str, repository: str) -> bool:
    host = repository.split("://", 1)[-1].rstrip("/")
    return host in url


def placeholder_words(placeholders: dict[str, str]) -> str:
    """`2 PyPI placeholders (torch-neuronx 1.0, neuronx-cc 1.0.post1)`."""
    listed = ", ".join(f"{name} {version}" for name, version in placeholders.items())
    return f"{len(placeholders)} PyPI placeholder{'s' if len(placeholders) > 1 else ''} ({listed})"


def _placeholder_import(ctx: RuleContext, dist: Distribution) -> str:
    """What importing this placeholder really does (compat.json `placeholders`, read from PyPI's wheels)."""
    for entry in ctx.catalog.compat.get("placeholders", []):
        if canonical_name(str(entry.get("name", ""))) == dist.name and entry.get("imports"):
            return str(entry["imports"])
    module = dist.top_level[0] if dist.top_level else dist.name.replace("-", "_")
    return f"`import {module}` raises `ImportError: WRONG PACKAGE. Please install the package from Neuron Repository`"


def _capitalized(text: str) -> str:
    return text[:1].upper() + text[1:]


def placeholder_release(ctx: RuleContext, env: PythonEnvironment) -> Optional[str]:
    """The one release every placeholder of an environment is replaced from: --release, the environment's, the
    host's, else the newest whose torch-neuronx has wheels for this Python. Each placeholder choosing its own
    newest version mixed releases (transformers-neuronx from 2.26 beside a 2.31 torch-neuronx: ND-PIN-001)."""
    release = ctx.target_release or ctx.release_of(env).release or ctx.host_release().release
    if release:
        return release
    for name in ctx.catalog.release_names:
        entry = ctx.catalog.framework_entry(name, "torch-neuronx")
        if entry is not None and (env.python_major_minor is None or not entry.python
                                  or env.python_major_minor in entry.python):
            return name
    return ctx.catalog.whole_latest


def _torch_for(ctx: RuleContext, env: PythonEnvironment, framework_version: str) -> list[str]:
    """The CPU torch a torch-neuronx needs, when the environment lacks it (or has another X.Y.Z, or a CUDA build):
    left to the resolver, its `torch==X.Y.*` is PyPI's CUDA build with the nvidia-* packages (ND-TORCH-002)."""
    wanted = ctx.catalog.framework_torch("torch-neuronx", framework_version)
    torch = env.effective_distributions().get("torch")
    if wanted is None or (torch is not None and torch.version.split("+")[0] == wanted
                          and not is_cuda_build(torch, env.torch_build())):
        return []
    return [pin("torch", f"{wanted}+cpu")]


def _site_of(env: PythonEnvironment, dist: Distribution) -> Optional[SiteDir]:
    return next((site for site in env.site_dirs if dist in site.judged_distributions()), None)


def placeholder_packages(ctx: RuleContext) -> list[Finding]:
    """ND-PIP-001: a PyPI placeholder (`WRONG PACKAGE`) on the import path instead of the Neuron package — in the
    environment, the user site or PYTHONPATH alike. Outside the environment pip cannot uninstall it
    ("outside environment"): its files are removed instead."""
    findings = []
    for env in ctx.facts.environments:
        for dist in env.effective_distributions().values():
            if not dist.placeholder:
                continue
            release = placeholder_release(ctx, env)
            entry = ctx.catalog.framework_entry(release, dist.name) if release else None
            site = _site_of(env, dist)
            outside = site is not None and site.role in (SITE_ROLE_USER, SITE_ROLE_PYTHONPATH)
            removal = (command("rm", "-rf", *placeholder_paths(site, dist)) if outside and site is not None
                       else pip_command(env, "uninstall", "-y", dist.display_name))
            where = f" It lies in the {'user site' if site and site.role == SITE_ROLE_USER else 'PYTHONPATH'} " \
                    f"{site.path}, which is imported before the environment." if outside and site else ""
            findings.append(Finding(
                id="ND-PIP-001",
                category=CATEGORY,
                severity=SEVERITY_ERROR,
                title=f"{dist.display_name} {dist.version} is PyPI's placeholder, not the Neuron package",
                detail=(f"{_capitalized(_placeholder_import(ctx, dist))}. pip found it on PyPI because the Neuron "
                        "repository was "
                        f"not configured.{where}"),
                evidence={"venv": env.path, "package": dist.display_name, "version": dist.version,
                          "metadata": dist.metadata_dir, "site": site.path if site else None},
                fix=Fix([removal, _placeholder_install(ctx, env, dist, release, entry)]),
            ))
    return findings


def _placeholder_install(ctx: RuleContext, env: PythonEnvironment, dist: Distribution, release: Optional[str],
                         entry: Optional[PackageEntry]) -> Step:
    if entry is None:
        last = next((name for name in ctx.catalog.release_names if ctx.catalog.entries(name, dist.name)), None)
        return note("{} is not part of Neuron " + f"{release}" + (f" (its last release is {last})" if last else "")
                    + ": nothing to install instead", dist.display_name)
    torch = _torch_for(ctx, env, entry.version) if dist.name in ctx.catalog.compat.get("torch_frameworks", {}) else []
    indexes = ["--extra-index-url", ctx.catalog.pip_repository]
    if torch:
        indexes += ["--extra-index-url", str(ctx.catalog.compat.get("torch_cpu_index"))]
    return pip_command(env, "install", pin(dist.display_name, entry.version), *torch, *indexes)


def placeholder_paths(site: SiteDir, dist: Distribution) -> list[str]:
    """The dist-info and the top-level folders a placeholder wheel installs (neuronx-cc's is `neuronx-cc/`)."""
    return [dist.metadata_dir, *(f"{site.path}/{top}" for top in dist.top_level)]


def _neuron_sources(sources: list[PipConfigSource], repository: str) -> tuple[list[str], list[str]]:
    """(origins naming the repository as an extra index, origins naming it as *the* index)."""
    as_extra = [s.origin for s in sources if any(_is_neuron_repository(u, repository) for u in s.extra_index_urls)]
    as_index = [s.origin for s in sources if s.index_url and _is_neuron_repository(s.index_url, repository)]
    return as_extra, as_index


def _replace_index_commands(origin: str, repository: str) -> list[Command]:
    if origin == "environment":
        return [unset("PIP_INDEX_URL"), export("PIP_EXTRA_INDEX_URL", repository)]
    pattern = f"s#^index-url *= *{repository}.*#extra-index-url = {repository}#"
    return [command("sed", "-i", pattern, origin)]


def repository_not_configured(ctx: RuleContext) -> list[Finding]:
    """ND-PIP-003: pip's only index is the Neuron repository, in any environment: it matters most before anything
    is installed, when `pip install torch-neuronx` cannot resolve torch. ND-PIP-002: a Neuron
    environment whose pip cannot reach the Neuron repository."""
    repository = ctx.catalog.pip_repository
    findings = []
    for env in ctx.facts.environments:
        as_extra, as_index = _neuron_sources(env.pip_config, repository)
        if as_index:
            findings.append(Finding(
                id="ND-PIP-003",
                category=CATEGORY,
                severity=SEVERITY_WARNING,
                title="pip uses the Neuron repository as its only index (index-url), replacing PyPI",
                detail=("torch, torch-xla, transformers and most dependencies are not on the Neuron repository: "
                        "`pip install torch-neuronx` fails to resolve torch, and upgrades pick stale copies. The "
                        "docs add it with extra-index-url."),
                evidence={"venv": env.path, "configured_in": as_index},
                fix=Fix([step for origin in as_index for step in _replace_index_commands(origin, repository)]),
            ))
            continue
        if not ctx.neuron_env(env):
            continue
        mirrors = _mirrors(env.pip_config, repository, ctx.catalog.pypi_index)
        if not as_extra and mirrors:
            findings.append(Finding(
                id="ND-PIP-002",
                category=CATEGORY,
                severity=SEVERITY_INFO,
                title="pip uses a mirror index and names no Neuron repository: the mirror must proxy it",
                detail=("Artifactory, CodeArtifact and similar mirrors can serve the Neuron packages; if this one "
                        "does not, upgrades of torch-neuronx/neuronx-cc get PyPI's `WRONG PACKAGE` placeholders."),
                evidence={"venv": env.path, "mirrors": mirrors},
            ))
        elif not as_extra:
            image = ctx.facts.host.snapshot.container or ctx.facts.host.snapshot.kubernetes_pod
            findings.append(Finding(
                id="ND-PIP-002",
                category=CATEGORY,
                severity=SEVERITY_INFO if image else SEVERITY_WARNING,
                title="no pip configuration for this environment names the Neuron repository",
                detail=("The next `pip install -U torch-neuronx` (or a dependency resolution) reaches only PyPI, "
                        "whose torch-neuronx/neuronx-cc/libneuronxla are `WRONG PACKAGE` placeholders."
                        + (" In a container image this matters only for installs inside the running container: "
                           "images are rebuilt from their Dockerfile, which names the repository on its pip "
                           "command lines (the Neuron DLC Dockerfiles do)." if image else "")),
                evidence={"venv": env.path, "pip_config": [source.origin for source in env.pip_config]},
                fix=_repository_config_commands(env, repository),
            ))
    return findings


def _configured_extra_indexes(env: PythonEnvironment) -> list[str]:
    """The extra indexes pip's files give this environment today. The venv's own pip.conf outranks the user's and
    the global one for the same key, so setting it to the Neuron repository alone would hide them: they are kept,
    in order, before it (a fix never drops user configuration)."""
    kept: list[str] = []
    for source in env.pip_config:
        if source.origin == "environment":
            continue  # PIP_EXTRA_INDEX_URL still applies on its own
        kept.extend(url for url in source.extra_index_urls if url not in kept)
    return kept


def _repository_config_commands(env: PythonEnvironment, repository: str) -> Fix:
    """Add the Neuron repository to the environment's own pip configuration, keeping the extra indexes already
    there. A uv venv has no pip and uv reads no pip configuration: there the way is uv's own index option."""
    if made_by_uv_without_pip(env):
        return Fix([note("uv reads no pip configuration: give `uv pip install` --extra-index-url {}, or set "
                         "UV_INDEX={} where this environment is used", repository, repository)])
    return Fix([pip_command(env, "config", "--site", "set", "global.extra-index-url",
                            " ".join([*_configured_extra_indexes(env), repository]))])


def _mirrors(sources: list[PipConfigSource], repository: str, pypi: str) -> list[str]:
    """Index URLs that replace PyPI with something else (PyPI spelled out is not a mirror)."""
    return [source.index_url for source in sources
            if source.index_url and not _is_neuron_repository(source.index_url, repository)
            and source.index_url.rstrip("/") != pypi.rstrip("/")]


def incomplete_guard(ctx: RuleContext) -> list[Finding]:
    """ND-PIP-004: an environment built by neurondoctor whose guard (constraints + pip.conf) is gone."""
    findings = []
    for env in ctx.facts.environments:
        marker = env.neurondoctor_venv
        if marker is None:
            continue
        constraints = f"{env.path.rstrip('/')}/{CONSTRAINTS_FILE}"
        # The path in pip.conf is as the environment sees it (inside an image it differs from the machine path):
        # the guard is configured when some pip configuration names the environment's constraints file.
        configured = any(source.constraint and source.constraint.rstrip().endswith(f"/{CONSTRAINTS_FILE}")
                         for source in env.pip_config)
        if env.guard_pins is not None and configured:
            continue
        missing = ([] if env.guard_pins is not None else [constraints]) + ([] if configured else [
            f"{env.path.rstrip('/')}/pip.conf constraint"])
        findings.append(Finding(
            id="ND-PIP-004",
            category=CATEGORY,
            severity=SEVERITY_WARNING,
            title=f"the guard of this neurondoctor environment (Neuron {marker.get('release')}) is incomplete",
            detail="Without it a later `pip install` can replace the pinned torch and Neuron packages.",
            evidence={"venv": env.path, "missing": missing},
            fix=Fix([command("neurondoctor", "venv", "create", env.path, "--release", str(marker.get("release")),
                             "--force")]),
        ))
    return findings


def pip_index_summary(ctx: RuleContext) -> str:
    envs = ctx.facts.environments  # never empty: the area is skipped without one
    if any(ctx.release_of(env).packages for env in envs):
        return "pip reaches the Neuron repository; no PyPI placeholders"
    return "no PyPI placeholders installed"


RULE_SET = RuleSet(
    rules=(placeholder_packages, repository_not_configured, incomplete_guard),
    findings=(
        FindingSpec("ND-PIP-001", "wrong-pip-index", SEVERITY_ERROR,
                    "a PyPI placeholder (`WRONG PACKAGE`) instead of the Neuron package"),
        FindingSpec("ND-PIP-002", "wrong-pip-index", SEVERITY_WARNING,
                    "pip cannot reach the Neuron repository (info in a container image or with a mirror)",
                    also=(SEVERITY_INFO,)),
        FindingSpec("ND-PIP-003", "wrong-pip-index", SEVERITY_WARNING,
                    "the Neuron repository is pip's only index, replacing PyPI"),
        FindingSpec("ND-PIP-004", "wrong-pip-index", SEVERITY_WARNING,
                    "the guard of a neurondoctor-built environment is incomplete"),
    ),
)
CHECK = environment_check("pip-index", "Package index", (RULE_SET,), pip_index_summary)
