"""broken-venv: the environment's interpreter is gone, it would not run, or its metadata is damaged."""

from __future__ import annotations

from neurondoctor.facts.python_env import INSTALLATION_KINDS, PythonEnvironment
from neurondoctor.rules.check import FindingSpec, RuleSet, environment_check
from neurondoctor.rules.context import RuleContext, pin, pip_command
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Fix, command, note
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
    rules=(missing_interpreter, interpreter_failed, damaged_metadata, invalid_metadata),
    findings=(
        FindingSpec("ND-VENV-001", "broken-venv", SEVERITY_ERROR, "the environment's interpreter is gone"),
        FindingSpec("ND-VENV-002", "broken-venv", SEVERITY_ERROR, "the interpreter does not run"),
        FindingSpec("ND-VENV-003", "broken-venv", SEVERITY_WARNING, "unreadable or damaged metadata"),
        FindingSpec("ND-VENV-004", "broken-venv", SEVERITY_WARNING,
                    "an install record whose name or version is not valid metadata"),
    ),
)
CHECK = environment_check("python-env", "Python environment",
                          (RULE_SET, python_support.RULE_SET, shadowing.RULE_SET), python_env_summary)
