"""broken-venv: the environment's interpreter is gone, it would not run, it cannot see its own packages, or its
metadata is damaged."""

from __future__ import annotations

from pathlib import PurePosixPath

from neurondoctor.facts.python_env import INSTALLATION_KINDS, SITE_ROLE_VENV, Distribution, PythonEnvironment
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


def _package_versions(env: PythonEnvironment) -> list[str]:
    """X.Y of the environment's own `lib/pythonX.Y/site-packages` that hold installed distributions."""
    found = [PYTHON_DIR.match(PurePosixPath(site.path).parent.name) for site in env.site_dirs
             if site.role == SITE_ROLE_VENV and site.distributions]
    return sorted({match.group(1) for match in found if match})


def _built_from_source(dist: Distribution) -> bool:
    """Installed editable, from a folder or from version control: no index has that build, so no pin brings it
    back. A wheel or sdist installed from a file or a URL has its version, which an index can serve again."""
    url = (dist.direct_url or "").split("#", 1)[0].split("?", 1)[0]
    return dist.editable or (bool(url) and not url.endswith((".whl", ".tar.gz", ".zip")))


def _rebuild_commands(ctx: RuleContext, env: PythonEnvironment, version: str) -> Fix:
    """The environment made again on the Python it now runs, from its own package list: the old folder moved
    aside (kept, never deleted), a new venv in its place, then every distribution pip had installed at the version
    it had (editable and URL installs are the user's to redo, named in a note)."""
    path = env.path.rstrip("/")
    interpreter = env.interpreter_target if (env.interpreter_target or "").startswith("/") else f"python{version}"
    own = [dist for site in env.site_dirs if site.role == SITE_ROLE_VENV for dist in site.judged_distributions()
           if dist.name not in NOT_REINSTALLED]
    by_hand = sorted(dist.display_name for dist in own if _built_from_source(dist))
    pins = sorted(pin(dist.display_name, dist.version) for dist in own if not _built_from_source(dist))
    neuron = any(dist.name in ctx.catalog.neuron_pip_packages() for dist in own)
    kept = f"{path}.neurondoctor-{aside_stamp()}"
    lines: list[Step] = [command("mv", path, kept, note="the old environment, kept"),
             command(str(interpreter), "-m", "venv", path)]
    if any(source.origin == f"{path}/pip.conf" for source in env.pip_config):  # its own index settings go along
        lines.append(command("cp", f"{kept}/pip.conf", f"{path}/pip.conf"))
    cpu_torch = any(site.torch_build is not None and site.torch_build.flavour == "cpu"
                    for site in env.site_dirs if site.role == SITE_ROLE_VENV)
    if pins:  # the indexes the old packages came from: Neuron's repository, PyTorch's CPU index for a CPU torch
        lines.append(command(f"{path}/bin/python", "-m", "pip", "install", *pins,
                             *(["--extra-index-url", ctx.catalog.pip_repository] if neuron else []),
                             *(["--extra-index-url", str(ctx.catalog.compat.get("torch_cpu_index"))]
                               if cpu_torch else [])))
    if by_hand:
        lines.append(note("installed from a folder or a URL, to install again by hand: {}", ", ".join(by_hand)))
    return Fix(lines)


def packages_out_of_reach(ctx: RuleContext) -> list[Finding]:
    """ND-VENV-005: the interpreter the launcher runs is another Python minor version than the one the packages
    were installed for (an OS upgrade moved `python3` from 3.10 to 3.12 under a venv made with it): Python 3.12
    looks in lib/python3.12 only, so nothing installed can be imported although every record is still there."""
    findings = []
    for env in ctx.facts.environments:
        launched = env.interpreter_version
        holding = _package_versions(env)
        if (env.kind in INSTALLATION_KINDS or not env.interpreter_exists or not launched or not holding
                or launched in holding):
            continue
        made_with = env.pyvenv_cfg.get("version_info") or env.pyvenv_cfg.get("version")
        findings.append(Finding(
            id="ND-VENV-005", category=CATEGORY, severity=SEVERITY_ERROR,
            title=f"{env.path} now runs Python {launched}, but its packages are installed for Python "
                  f"{' and '.join(holding)}",
            detail=(f"{env.interpreter} leads to {env.interpreter_target} (Python {launched})"
                    + (f"; pyvenv.cfg says it was made with {made_with}" if made_with else "")
                    + f". Python {launched} looks for packages in lib/python{launched}/site-packages only, so none "
                    f"of those in lib/python{holding[0]} can be imported: an upgrade that moved python3 to another "
                    "version does this. The environment is made again on the Python it runs, from its own package "
                    "list; the old folder is kept beside it."),
            evidence={"venv": env.path, "interpreter": env.interpreter, "target": env.interpreter_target,
                      "interpreter_version": launched, "package_versions": holding, "made_with": made_with},
            fix=_rebuild_commands(ctx, env, launched)))
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
