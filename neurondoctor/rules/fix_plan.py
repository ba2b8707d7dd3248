"""One fix plan per environment: the fix lines of every finding about one environment, merged into
one ordered sequence that converges.

Four placeholder findings print four `pip install` runs; run one after another, each resolves alone and the last
can move what an earlier one pinned. The plan instead configures first, then removes (files, then one `pip
uninstall` of every name), then runs the replacements that must stay alone (`--force-reinstall`, `--index-url`),
then *one* `pip install` of every other requirement with every extra index they named, so the resolver sees them
together; whatever it cannot merge (environment variables, comments, other tools) follows as printed.

Pure: it merges the findings' fix values (words, never text), which the rules wrote for this environment's
interpreter; a step it does not recognise is kept as it is, never dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Optional

from neurondoctor.python_packaging import canonical_name
from neurondoctor.rules.finding import Finding
from neurondoctor.rules.fix import ALTERNATIVE_PREFIX, Command, Fix, Step, command

# pip install options that make a line a replacement of its own: merged with other requirements they would
# apply to all of them (--no-deps, --force-reinstall) or hide the default index from them (--index-url).
ALONE_OPTIONS = frozenset({"--force-reinstall", "--no-deps", "--index-url", "--default-index", "-i", "-r",
                           "--requirement", "-c", "--constraint", "-e", "--editable", "--target", "-t", "--user"})
# The flags the rules write; any other word is an argument, even one that starts with `-` (data never becomes an
# option of the merged line by the way it is sorted).
FLAG_OPTIONS = frozenset({"-y", "--yes", "--force-reinstall", "--no-deps", "--site", "--user", "--global", "-U",
                          "--upgrade", "--no-cache-dir", "--pre"}) | ALONE_OPTIONS
VALUE_OPTIONS = frozenset({"--extra-index-url", "--index-url", "--default-index", "-i", "--python", "-r", "-c",
                           "--target", "-t", "--find-links", "-f"})


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


def parse_pip_words(words: Sequence[str], interpreter: str) -> Optional[PipLine]:
    """The words as a pip/uv call for this interpreter, or None for anything else."""
    words = list(words)
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
        # rules write an option's value as its own word: `--index-url=…` in one word is data, an argument
        (options if word in FLAG_OPTIONS else arguments).append(word)
        index += 1
    return PipLine(prefix, verb, options, arguments, extras)


def parse_pip_step(step: Step, interpreter: str) -> Optional[PipLine]:
    """A fix step as a pip/uv call for this interpreter: a command of plain words only (no shell syntax)."""
    argv = step.argv if isinstance(step, Command) else None
    return parse_pip_words(argv, interpreter) if argv else None


def requirement_name(requirement: str) -> str:
    for separator in ("==", ">=", "<=", "~=", "!=", "<", ">", "[", ";", " "):
        requirement = requirement.split(separator)[0]
    return canonical_name(requirement)


def _pip_command(prefix: list[str], verb: str, options: Sequence[str], arguments: Sequence[str],
                 extra_indexes: Sequence[str] = ()) -> Command:
    return command(*prefix, verb, *options, *arguments,
                   *(word for url in extra_indexes for word in ("--extra-index-url", url)))


@dataclass
class _Plan:
    """An environment's fix steps sorted by kind, to run in an order that works: configuration, file removals, one
    uninstall, replacements, one install, then the rest."""

    configure: list[Step] = field(default_factory=list)
    remove_files: list[Step] = field(default_factory=list)
    uninstall: dict[str, str] = field(default_factory=dict)  # normalised name -> as printed
    replace: list[Step] = field(default_factory=list)
    install: dict[str, str] = field(default_factory=dict)  # normalised name -> requirement
    extra_indexes: list[str] = field(default_factory=list)
    rest: list[Step] = field(default_factory=list)
    uninstall_prefix: Optional[tuple[list[str], list[str]]] = None
    install_prefix: Optional[tuple[list[str], list[str]]] = None


def _add(plan: _Plan, step: Step, interpreter: str) -> None:
    pip = parse_pip_step(step, interpreter)
    if pip is None:
        if isinstance(step, Command) and step.segments[0][0] == "rm" and len(step.segments) == 1:
            plan.remove_files.append(step)
        else:
            plan.rest.append(step)
        return
    if pip.verb == "config":
        plan.configure.append(step)
    elif pip.verb == "uninstall":
        plan.uninstall_prefix = plan.uninstall_prefix or (pip.prefix, [o for o in pip.options if o != "-y"])
        for name in pip.arguments:
            plan.uninstall.setdefault(canonical_name(name), name)
    elif pip.verb == "install" and not pip.alone:
        plan.install_prefix = plan.install_prefix or (pip.prefix, pip.options)
        for requirement in pip.arguments:
            plan.install[requirement_name(requirement)] = requirement
        plan.extra_indexes += [url for url in pip.extra_indexes if url not in plan.extra_indexes]
    else:
        plan.replace.append(step)


def environment_plan(findings: Sequence[Finding], interpreter: str) -> Fix:
    """The combined, ordered fix of these findings (all about the environment of `interpreter`)."""
    plan = _Plan()
    for finding in findings:
        for step in finding.fix.user_space_way():
            _add(plan, step, interpreter)
    # what an install brings back must not be removed first and what is removed must not be installed
    for name in plan.install:
        plan.uninstall.pop(name, None)
    steps = [*plan.configure, *plan.remove_files]
    if plan.uninstall and plan.uninstall_prefix:
        prefix, options = plan.uninstall_prefix
        steps.append(_pip_command(prefix, "uninstall", options if prefix[0] == "uv" else [*options, "-y"],
                                  list(plan.uninstall.values())))  # uv's uninstall does not ask
    steps += plan.replace
    if plan.install and plan.install_prefix:
        prefix, options = plan.install_prefix
        steps.append(_pip_command(prefix, "install", options, list(plan.install.values()), plan.extra_indexes))
    return Fix(steps + [step for index, step in enumerate(plan.rest) if step not in plan.rest[:index]])


def split_alternatives(lines: Sequence[str]) -> list[list[str]]:
    """A rendered fix (a report's JSON `fix` list) split into its ways out at the `# or …` lines, for tools that
    read reports: each way is run alone, never one after the other."""
    ways: list[list[str]] = [[]]
    for line in lines:
        if line.lstrip().startswith(ALTERNATIVE_PREFIX.rstrip()):
            ways.append([])
        ways[-1].append(line)
    return [way for way in ways if way]
