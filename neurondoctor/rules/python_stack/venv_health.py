"""broken-venv: the environment's interpreter is gone, it would not run, it cannot see its own packages, or its
metadata is damaged."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Optional

from neurondoctor.facts.python_env import (
    INSTALLATION_KINDS,
    SITE_ROLE_VENV,
    Distribution,
    PythonEnvironment,
    SiteDir,
)
from neurondoctor.neuron_version import release_tuple
from neurondoctor.pyenv.layouts import PYTHON_DIR
from neurondoctor.rules.check import FindingSpec, RuleSet, environment_check
from neurondoctor.rules.context import RuleContext, pin, pip_command
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Fix, Step, aside_stamp, command, note
from neurondoctor.rules.python_stack import python_support, shadowing

CATEGORY = "broken-venv"


def _reinstall_note(env: PythonEnvironment) -> Fix:
    """An installation's interpreter is its own: no venv command brings it back, the tool that installed it does."""
    python = env.python_major_minor or "3"
    if env.kind == "conda":
        return Fix([note("reinstall Python into it with the conda that made it: conda install --prefix {} {}",
                         env.path, f"python={python}")])
    if env.kind == "pyenv":
        return Fix([note("reinstall it with pyenv: pyenv install --force {}", env.path.rstrip("/").rsplit("/", 1)[-1])])
    return Fix([note("reinstall the Python {} that {} was installed from (the OS package, or the image's build)",
                     python, env.path)])


def _recreate_commands(env: PythonEnvironment) -> Fix:
    """Relink the venv to an installed pythonX.Y, keeping its packages. `venv --upgrade` fails on the dangling links
    themselves (`No such file or directory: …/bin/python3.11`), so they go first; `--clear` would delete the
    packages. An installation (conda, pyenv, system) gets the way its own tool reinstalls it."""
    if env.kind in INSTALLATION_KINDS:
        return _reinstall_note(env)
    python = env.python_major_minor or "3"
    links = [f"{env.path.rstrip('/')}/bin/{name}" for name in dict.fromkeys(("python", "python3", f"python{python}"))]
    return Fix([command("rm", "-f", *links), command(f"python{python}", "-m", "venv", "--upgrade", env.path)])


def missing_interpreter(ctx: RuleContext) -> list[Finding]:
    """ND-VENV-001: bin/python leads nowhere (the base Python was removed or upgraded away)."""
    findings = []
    for env in ctx.facts.environments:
        if env.interpreter_exists:
            continue
        exists = env.exists
        findings.append(Finding(
            id="ND-VENV-001",
            category=CATEGORY,
            severity=SEVERITY_ERROR,
            title=(f"the interpreter of {env.path} is gone" if exists else f"{env.path} does not exist"),
            detail=(("The installation's own interpreter (" + (env.interpreter or "bin/python") + ") is gone. "
                     "Its packages are still listed below, but nothing in it can run.")
                    if exists and env.kind in INSTALLATION_KINDS else
                    (f"{env.interpreter or 'bin/python'} points to {env.interpreter_target or 'nothing'}, which "
                     f"does not exist: the environment's Python {env.python_version or ''} was removed or "
                     "upgraded. Its packages are still listed below, but nothing in it can run. Install "
                     f"Python {env.python_major_minor or ''} again, then repoint the environment.")
                    if exists else "Check the path given with --venv."),
            evidence={"venv": env.path, "interpreter": env.interpreter, "target": env.interpreter_target,
                      "home": env.pyvenv_cfg.get("home")},
            fix=_recreate_commands(env) if exists else Fix(),
        ))
    return findings


NOT_REINSTALLED = frozenset({"pip", "setuptools", "wheel"})  # `python -m venv` brings its own


def _site_version(site: SiteDir) -> Optional[str]:
    """X.Y of a `lib/pythonX.Y/site-packages` (or `dist-packages`) folder; None for one whose name does not say."""
    match = PYTHON_DIR.match(PurePosixPath(site.path).parent.name)
    return match.group(1) if match else None


def _stranded(env: PythonEnvironment, running: str) -> tuple[list[SiteDir], list[Distribution]]:
    """The environment's own folders of another Python minor version than the `running` one that hold packages, and
    their distributions the running Python does not have anywhere on its path (pip, setuptools and wheel aside: a
    new venv brings its own). A package installed again for the running Python is not out of reach."""
    stranded = [site for site in env.site_dirs if site.role == SITE_ROLE_VENV and site.distributions
                and _site_version(site) not in (None, running)]
    out_of_reach = {id(site) for site in stranded}
    reachable = {dist.name for site in env.site_dirs if id(site) not in out_of_reach
                 for dist in site.judged_distributions()}
    missing = {dist.name: dist for site in stranded for dist in site.judged_distributions()
               if dist.name not in reachable and dist.name not in NOT_REINSTALLED}
    return stranded, list(missing.values())


def _built_from_source(dist: Distribution) -> bool:
    """Installed editable, from a folder or from version control: no index has that build, so no pin brings it
    back. A wheel or sdist installed from a file or a URL has its version, which an index can serve again."""
    url = (dist.direct_url or "").split("#", 1)[0].split("?", 1)[0]
    return dist.editable or (bool(url) and not url.endswith((".whl", ".tar.gz", ".zip")))


@dataclass(frozen=True)
class _PackageList:
    """What was installed in the out-of-reach folders: the pins an index can serve again, the ones to redo by
    hand, and the extra indexes they came from (Neuron's repository, PyTorch's CPU index for a CPU torch)."""

    pins: list[str]
    by_hand: list[str]
    indexes: list[str]


def _venv_distributions(env: PythonEnvironment) -> list[Distribution]:
    """Everything a venv rebuild installs again: the distributions of all its own folders, once per name (the one
    the running Python imports where both have it)."""
    by_name: dict[str, Distribution] = {}
    for site in sorted((site for site in env.site_dirs if site.role == SITE_ROLE_VENV),
                       key=lambda site: _site_version(site) == env.interpreter_version):
        by_name.update((dist.name, dist) for dist in site.judged_distributions() if dist.name not in NOT_REINSTALLED)
    return list(by_name.values())


def _package_list(ctx: RuleContext, stranded: list[SiteDir], missing: list[Distribution]) -> _PackageList:
    neuron = any(dist.name in ctx.catalog.neuron_pip_packages() for dist in missing)
    cpu_torch = any(site.torch_build is not None and site.torch_build.flavour == "cpu" for site in stranded)
    return _PackageList(
        pins=sorted({pin(dist.display_name, dist.version) for dist in missing if not _built_from_source(dist)}),
        by_hand=sorted({dist.display_name for dist in missing if _built_from_source(dist)}),
        indexes=([ctx.catalog.pip_repository] if neuron else [])
        + ([str(ctx.catalog.compat.get("torch_cpu_index"))] if cpu_torch else []))


def _extra_indexes(packages: _PackageList) -> list[str]:
    return [word for index in packages.indexes for word in ("--extra-index-url", index)]


def _by_hand_note(packages: _PackageList) -> list[Step]:
    return [note("installed from a folder or a URL, to install again by hand: {}", ", ".join(packages.by_hand))
            ] if packages.by_hand else []


def _poetry_cache_python(env: PythonEnvironment) -> Optional[str]:
    """X.Y a Poetry cache folder's name was made for: Poetry names it `NAME-HASH-pyX.Y`
    (`~/.cache/pypoetry/virtualenvs/demo-wxXJaBmj-py3.10`)."""
    if "/pypoetry/virtualenvs/" not in env.path:
        return None
    found = re.search(r"-py([0-9]{1,3}\.[0-9]{1,3})$", env.path.rstrip("/"))
    return found.group(1) if found else None


def _rebuild_commands(ctx: RuleContext, env: PythonEnvironment, version: str, packages: _PackageList) -> Fix:
    """The environment made again on the Python it now runs, from its own package list: the old folder moved
    aside (kept, never deleted), a new venv in its place, then every distribution pip had installed at the version
    it had (editable and URL installs are the user's to redo, named in a note). A uv venv is made again with uv,
    as its owner made it (`uv venv`, `uv pip install`, which reads no pip.conf and, told `unsafe-best-match`,
    chooses among the indexes as pip does)."""
    path = env.path.rstrip("/")
    interpreter = env.interpreter_target if (env.interpreter_target or "").startswith("/") else f"python{version}"
    kept = f"{path}.neurondoctor-{aside_stamp()}"
    lines: list[Step] = [command("mv", path, kept, note="the old environment, kept")]
    copy_pip_conf = [command("cp", f"{kept}/pip.conf", f"{path}/pip.conf")] if any(
        source.origin == f"{path}/pip.conf" for source in env.pip_config) else []  # its own index settings go along
    if env.kind == "uv":
        lines += [command("uv", "venv", "--python", str(interpreter), path), *copy_pip_conf]
        if packages.pins:
            lines.append(command("uv", "pip", "install", "--python", f"{path}/bin/python", "--index-strategy",
                                 "unsafe-best-match", *packages.pins, *_extra_indexes(packages)))
        return Fix(lines + _by_hand_note(packages))
    lines += [command(str(interpreter), "-m", "venv", path), *copy_pip_conf]
    if packages.pins:
        lines.append(command(f"{path}/bin/python", "-m", "pip", "install", *packages.pins, *_extra_indexes(packages)))
    if _poetry_cache_python(env):
        lines.append(note("Poetry names its folder for the Python it finds: `poetry install` in the project makes a "
                          "new one for Python {} from the lock file, after which this one is not used", version))
    return Fix(lines + _by_hand_note(packages))


def _reinstall_commands(env: PythonEnvironment, version: str, packages: _PackageList, folders: list[str]) -> Fix:
    """An installation keeps its prefix: the packages are installed again for the Python it now runs, with that
    Python's own pip (conda's pip-installed packages stay behind when `conda install python=…` moves it; conda moves
    its own), then the folders no Python of the prefix reads are moved aside (kept, never deleted). The
    distribution's `/usr` refuses pip (externally managed since Debian 12 and Ubuntu 23.04): a venv is the way
    there, in words, as its path is the user's to choose."""
    if _distribution_python(env):
        return Fix([note("the distribution's Python {} takes no pip installs: make a venv with python{} -m venv and "
                         "install them into it: {}", version, version, " ".join(packages.pins)),
                    *_by_hand_note(packages)] if packages.pins else _by_hand_note(packages))
    stamp = aside_stamp()
    lines: list[Step] = [pip_command(env, "install", *packages.pins, *_extra_indexes(packages))
                         ] if packages.pins else []
    lines += [command("mv", folder, f"{folder}.neurondoctor-{stamp}", note="read by no Python here, kept")
              for folder in folders]
    return Fix([*lines, *_by_hand_note(packages)])


def _distribution_python(env: PythonEnvironment) -> bool:
    """The operating system's own Python: the `/usr` prefix (static), or `/usr/bin/python3` (live)."""
    path = env.path.rstrip("/")
    return env.kind == "system" and (path.endswith("/usr") or path == "/usr" or path.startswith("/usr/bin/"))


def _made_with(env: PythonEnvironment) -> Optional[str]:
    """The Python the environment says it was made with: pyvenv.cfg's `version_info`/`version` (uv and virtualenv
    write `version_info`), else a Poetry cache folder's `-pyX.Y`."""
    return env.pyvenv_cfg.get("version_info") or env.pyvenv_cfg.get("version") or _poetry_cache_python(env)


def packages_out_of_reach(ctx: RuleContext) -> list[Finding]:
    """ND-VENV-005: the interpreter the launcher runs is another Python minor version than the one the packages
    were installed for (an OS upgrade moved `python3` from 3.10 to 3.12 under a venv made with it): Python 3.12
    looks in lib/python3.12 only, so nothing installed can be imported although every record is still there. An
    installation (conda, pyenv, a system prefix) is judged on the folders of a Python no longer installed in it
    (pyenv/layouts.py stranded_sites); a patch-level difference (3.12.3 made, 3.12.7 running) changes nothing."""
    findings = []
    for env in ctx.facts.environments:
        launched = env.interpreter_version
        if not env.interpreter_exists or not launched:
            continue
        stranded, missing = _stranded(env, launched)
        if not missing:
            continue
        installation = env.kind in INSTALLATION_KINDS or (env.mode == "live" and env.kind == "system")
        versions = sorted({str(_site_version(site)) for site in stranded}, key=release_tuple)
        packages = _package_list(ctx, stranded, missing if installation else _venv_distributions(env))
        made_with = _made_with(env)
        folders = [site.path for site in stranded]
        findings.append(Finding(
            id="ND-VENV-005", category=CATEGORY, severity=SEVERITY_ERROR,
            title=f"{env.path} now runs Python {launched}, but its packages are installed for Python "
                  f"{' and '.join(versions)}",
            detail=(f"{env.interpreter} leads to {env.interpreter_target} (Python {launched})"
                    + (f"; it says it was made with {made_with}" if made_with else "")
                    + f". Python {launched} looks for packages in its own python{launched} folders only, so none "
                    f"of those in {' and '.join(folders)} can be imported: an upgrade that moved "
                    "python3 to another version does this. "
                    + ("The packages are installed again for the Python it runs, from its own package list."
                       if installation else
                       "The environment is made again on the Python it runs, from its own package list; the old "
                       "folder is kept beside it.")),
            evidence={"venv": env.path, "interpreter": env.interpreter, "target": env.interpreter_target,
                      "interpreter_version": launched, "package_versions": versions, "made_with": made_with,
                      "kind": env.kind, "mode": env.mode},
            fix=(_reinstall_commands(env, launched, packages, folders) if installation
                 else _rebuild_commands(ctx, env, launched, packages))))
    return findings


def interpreter_failed(ctx: RuleContext) -> list[Finding]:
    """ND-VENV-002: the interpreter exists but the live inspection could not run it."""
    findings = []
    for env in ctx.facts.environments:
        if env.mode != "live" or not env.interpreter_exists or env.site_dirs or not env.problems:
            continue
        findings.append(Finding(
            id="ND-VENV-002",
            category=CATEGORY,
            severity=SEVERITY_ERROR,
            title=f"{env.interpreter} did not run a standard-library script",
            detail="; ".join(env.problems),
            evidence={"interpreter": env.interpreter, "problems": env.problems},
            fix=Fix([command(env.interpreter or "python3", "-I", "-c", "import sys; print(sys.version)")]),
        ))
    return findings


def damaged_metadata(ctx: RuleContext) -> list[Finding]:
    """ND-VENV-003: unreadable site-packages, a missing pyvenv.cfg, or dist-infos pip cannot parse."""
    findings = []
    for env in ctx.facts.environments:
        if not env.exists:
            continue
        problems = [problem for problem in env.problems if env.mode == "static"]
        problems += [f"{site.path}: {site.error}" for site in env.site_dirs
                     if site.error and site.error != "missing"]
        damaged = [dist for site in env.site_dirs for dist in site.judged_distributions() if dist.problems]
        problems += [f"{dist.metadata_dir}: {'; '.join(dist.problems)}" for dist in damaged]
        if not problems:
            continue
        findings.append(Finding(
            id="ND-VENV-003",
            category=CATEGORY,
            severity=SEVERITY_WARNING,
            title=f"{len(problems)} damaged or unreadable item(s) in {env.path}",
            detail="What could not be read is left out of the other checks, so they may miss problems there.",
            evidence={"venv": env.path, "problems": problems[:20]},
            fix=Fix([pip_command(env, "install", "--force-reinstall", "--no-deps",
                                 *(pin(dist.display_name, dist.version) for dist in damaged))]
                    if damaged and env.interpreter_exists else []),
        ))
    return findings


INVALID_SUFFIX = ".neurondoctor-invalid"


def invalid_metadata(ctx: RuleContext) -> list[Finding]:
    """ND-VENV-004: install records outside a system site whose name is not a project name or whose version is not
    a version. pip writes neither; whoever placed one can make any command that names it run something else
    (`--index-url=…` as a name), so no rule judges it and no fix names it: the fix moves the record aside, off
    every import path's metadata (pip reads only `*.dist-info`/`*.egg-info`)."""
    findings = []
    for env in ctx.facts.environments:
        for site in env.site_dirs:
            invalid = site.invalid_distributions()
            if not invalid:
                continue
            findings.append(Finding(
                id="ND-VENV-004", category=CATEGORY, severity=SEVERITY_WARNING,
                title=f"{len(invalid)} install record(s) in {site.path} whose name or version is not valid metadata",
                detail="pip never writes such a record: someone placed it, or it is damaged. The checks leave it out, "
                       "and no fix names it; move it aside, then reinstall the package if it is one you need.",
                evidence={"venv": env.path, "site": site.path,
                          "records": [{"metadata": dist.metadata_dir, "name": dist.display_name,
                                       "version": dist.version, "why": dist.invalid_metadata}
                                      for dist in invalid[:20]]},
                fix=Fix([command("mv", "-n", "--", dist.metadata_dir, dist.metadata_dir + INVALID_SUFFIX)
                         for dist in invalid[:20]]),
            ))
    return findings


def python_env_summary(ctx: RuleContext) -> str:
    envs = ctx.facts.environments  # never empty: the area is skipped without one
    pythons = sorted({env.python_version or "?" for env in envs})
    return f"{len(envs)} environment(s), Python {', '.join(pythons)}: interpreters present, nothing shadowed"


RULE_SET = RuleSet(
    rules=(missing_interpreter, packages_out_of_reach, interpreter_failed, damaged_metadata, invalid_metadata),
    findings=(
        FindingSpec("ND-VENV-001", "broken-venv", SEVERITY_ERROR, "the environment's interpreter is gone"),
        FindingSpec("ND-VENV-002", "broken-venv", SEVERITY_ERROR, "the interpreter does not run"),
        FindingSpec("ND-VENV-003", "broken-venv", SEVERITY_WARNING, "unreadable or damaged metadata"),
        FindingSpec("ND-VENV-004", "broken-venv", SEVERITY_WARNING,
                    "an install record whose name or version is not valid metadata"),
        FindingSpec("ND-VENV-005", "broken-venv", SEVERITY_ERROR,
                    "the interpreter is another Python version than the one its packages were installed for (an "
                    "OS upgrade moved python3): none of them can be imported"),
    ),
)
CHECK = environment_check("python-env", "Python environment",
                          (RULE_SET, python_support.RULE_SET, shadowing.RULE_SET), python_env_summary)
