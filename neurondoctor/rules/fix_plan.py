"""One fix plan per environment (issue 13 §3): the fix lines of every finding about one environment, merged into
one ordered sequence that converges.

Four placeholder findings print four `pip install` runs; run one after another, each resolves alone and the last
can move what an earlier one pinned. The plan instead configures first, then removes (files, then one `pip
uninstall` of every name), then runs the replacements that must stay alone (`--force-reinstall`, `--index-url`),
then *one* `pip install` of every other requirement with every extra index they named, so the resolver sees them
together; whatever it cannot merge (environment variables, comments, other tools) follows as printed.

Pure: it reads only the findings' own lines, which the rules wrote for this environment's interpreter; a line it
does not recognise is kept verbatim, never dropped.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from neurondoctor.neuron_version import normalize_package_name
from neurondoctor.rules.context import quoted
from neurondoctor.rules.finding import Finding

# pip install options that make a line a replacement of its own: merged with other requirements they would
# apply to all of them (--no-deps, --force-reinstall) or hide the default index from them (--index-url).
ALONE_OPTIONS = frozenset({"--force-reinstall", "--no-deps", "--index-url", "--default-index", "-i", "-r",
                           "--requirement", "-c", "--constraint", "-e", "--editable", "--target", "-t", "--user"})
VALUE_OPTIONS = frozenset({"--extra-index-url", "--index-url", "--default-index", "-i", "--python", "-r", "-c",
                           "--target", "-t", "--find-links", "-f"})
SHELL_SYNTAX = ("|", ">", "<", "&&", "||", ";", "$(", "`")


@dataclass
class PipLine:
    """`<interpreter> -m pip <verb> …` or `uv pip <verb> … --python <interpreter>`, split into its parts."""

    prefix: list[str]  # everything up to and including `pip`
    verb: str
    options: list[str]  # the interpreter-selecting `--python X` of uv included
    arguments: list[str]
    extra_indexes: list[str] = field(default_factory=list)

    @property
    def alone(self) -> bool:
        return any(option.split("=")[0] in ALONE_OPTIONS for option in self.options)


def _split(line: str) -> Optional[list[str]]:
    if line.lstrip().startswith("#") or any(token in line for token in SHELL_SYNTAX):
        return None
    try:
        return shlex.split(line, comments=True)
    except ValueError:
        return None


def parse_pip_line(line: str, interpreter: str) -> Optional[PipLine]:
    """The line as a pip/uv call for this interpreter, or None for anything else."""
    words = _split(line)
    if not words:
        return None
    if words[:3] == [interpreter, "-m", "pip"] and len(words) > 3:
        prefix, rest = words[:3], words[3:]
    elif words[:2] == ["uv", "pip"] and len(words) > 2 and interpreter in words:
        prefix, rest = words[:2], words[2:]
    else:
        return None
    verb = rest[0]
    options: list[str] = []
    arguments: list[str] = []
    extras: list[str] = []
    index = 1
    while index < len(rest):
        word = rest[index]
        if word in VALUE_OPTIONS and index + 1 < len(rest):
            if word == "--extra-index-url":
                extras.append(rest[index + 1])
            else:
                options += [word, rest[index + 1]]
            index += 2
            continue
        (options if word.startswith("-") else arguments).append(word)
        index += 1
    return PipLine(prefix, verb, options, arguments, extras)


def _requirement_name(requirement: str) -> str:
    for separator in ("==", ">=", "<=", "~=", "!=", "<", ">", "[", ";", " "):
        requirement = requirement.split(separator)[0]
    return normalize_package_name(requirement)


def _render(prefix: list[str], verb: str, options: Sequence[str], arguments: Sequence[str]) -> str:
    words = [*prefix, verb, *options]
    return " ".join([*(quoted(word) for word in words),
                     *("'" + argument + "'" if any(ch in argument for ch in "<>=!~;[ ") else quoted(argument)
                       for argument in arguments)])


@dataclass
class _Plan:
    configure: list[str] = field(default_factory=list)
    remove_files: list[str] = field(default_factory=list)
    uninstall: dict[str, str] = field(default_factory=dict)  # normalised name -> as printed
    replace: list[str] = field(default_factory=list)
    install: dict[str, str] = field(default_factory=dict)  # normalised name -> requirement
    extra_indexes: list[str] = field(default_factory=list)
    rest: list[str] = field(default_factory=list)
    uninstall_prefix: Optional[tuple[list[str], list[str]]] = None
    install_prefix: Optional[tuple[list[str], list[str]]] = None


def _add(plan: _Plan, line: str, interpreter: str) -> None:
    pip = parse_pip_line(line, interpreter)
    if pip is None:
        words = _split(line)
        if words and words[0] == "rm":
            plan.remove_files.append(line)
        else:
            plan.rest.append(line)
        return
    if pip.verb == "config":
        plan.configure.append(line)
    elif pip.verb == "uninstall":
        plan.uninstall_prefix = plan.uninstall_prefix or (pip.prefix, [o for o in pip.options if o != "-y"])
        for name in pip.arguments:
            plan.uninstall.setdefault(normalize_package_name(name), name)
    elif pip.verb == "install" and not pip.alone:
        plan.install_prefix = plan.install_prefix or (pip.prefix, pip.options)
        for requirement in pip.arguments:
            plan.install[_requirement_name(requirement)] = requirement
        plan.extra_indexes += [url for url in pip.extra_indexes if url not in plan.extra_indexes]
    else:
        plan.replace.append(line)


ALTERNATIVE_MARK = "# or"


def split_alternatives(lines: Sequence[str]) -> list[list[str]]:
    """A fix that offers ways out (upgrade the host runtime, or pin the compiler to it) separates them with a
    `# or …` line; each way is run alone, never one after the other."""
    ways: list[list[str]] = [[]]
    for line in lines:
        if line.lstrip().startswith(ALTERNATIVE_MARK):
            ways.append([])
        ways[-1].append(line)
    return [way for way in ways if way]


def user_space_way(lines: Sequence[str]) -> list[str]:
    """The first way out that needs no root (the one an environment's plan can run), else the first."""
    ways = split_alternatives(lines)
    return next((way for way in ways if not any(line.lstrip().startswith("sudo ") for line in way)), ways[0]
                if ways else [])


def environment_plan(findings: Sequence[Finding], interpreter: str) -> list[str]:
    """The combined, ordered fix of these findings (all about the environment of `interpreter`)."""
    plan = _Plan()
    for finding in findings:
        for line in user_space_way(finding.fix):
            _add(plan, line, interpreter)
    # what an install brings back must not be removed first and what is removed must not be installed
    for name in plan.install:
        plan.uninstall.pop(name, None)
    lines = [*plan.configure, *plan.remove_files]
    if plan.uninstall and plan.uninstall_prefix:
        prefix, options = plan.uninstall_prefix
        lines.append(_render(prefix, "uninstall", options if prefix[0] == "uv" else [*options, "-y"],
                             list(plan.uninstall.values())))  # uv's uninstall does not ask
    lines += plan.replace
    if plan.install and plan.install_prefix:
        prefix, options = plan.install_prefix
        extras = [word for url in plan.extra_indexes for word in ("--extra-index-url", url)]
        lines.append(_render(prefix, "install", options, list(plan.install.values())) +
                     "".join(f" {quoted(word)}" for word in extras))
    return lines + [line for index, line in enumerate(plan.rest) if line not in plan.rest[:index]]
