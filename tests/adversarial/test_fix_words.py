"""Attack class: data that becomes code when a fix is pasted.

A distribution's name or version, a directory's name, a path: whatever they hold (shell syntax, quotes, newlines,
controls, non-ASCII), a printed fix line carries each as exactly one word. Three readers must agree on the words of
every line: `shlex.split`, a real `bash -c` (with recording `pip` and `sudo` first on PATH), and `check --fix`,
which runs the value's words as argv with no shell. Merged plans are held to the same.
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from neurondoctor.actions.check.fix_apply import RUN, SKIP, apply_step, classify
from neurondoctor.command_runner import CommandResult
from neurondoctor.facts.host import HostSnapshot, OsRelease
from neurondoctor.facts.python_env import PythonEnvironment
from neurondoctor.rules.context import pin, pip_command
from neurondoctor.rules.finding import Finding
from neurondoctor.rules.fix import Command, Fix, Shell, command, note, pipeline
from neurondoctor.rules.fix_plan import environment_plan, requirement_name
from neurondoctor.rules.host_stack.os_commands import install_command, reinstall_command

HOSTILE = [*"$`'\"\\ \n\t;|&<>(){}[]*?!#~=%^,:@+-./\x1b\x07\x7f\u0085\u202e\u2028", "é", "€", "文", "$(id)", "`id`",
           "'; rm -rf /;'", "--index-url=x"]
# A word as hostile as a name, version or path can be; argv cannot hold NUL, so neither can a word.
WORD = st.lists(st.one_of(st.sampled_from(HOSTILE), st.characters(blacklist_categories=("Cs",),
                                                                     blacklist_characters="\x00")),
                min_size=1, max_size=12).map("".join)
EXAMPLES = settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def recorders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`pip`, `sudo` and a fake interpreter that write their argv (NUL-separated) to $RECORD, and do nothing else."""
    folder = tmp_path_factory.mktemp("recorders")
    for name in ("pip", "sudo", "python"):
        script = folder / name
        script.write_text('#!/bin/sh\nprintf "%s\\0" "$0" "$@" >> "$RECORD"\n')
        script.chmod(0o755)
    return folder


def _bash_argv(line: str, recorders: Path, record: Path) -> list[str]:
    """What bash runs for the line: the argv its first command receives, as the recorder wrote it."""
    record.unlink(missing_ok=True)
    subprocess.run(["bash", "-c", line], env={"PATH": f"{recorders}:/usr/bin:/bin", "RECORD": str(record)},
                   check=True, timeout=30, capture_output=True)
    words = record.read_bytes().decode("utf-8", "surrogateescape").split("\0")[:-1]
    return [Path(words[0]).name, *words[1:]]


def _env(interpreter: str) -> PythonEnvironment:
    return PythonEnvironment(path=str(Path(interpreter).parent.parent), mode="static", interpreter=interpreter)


def _assert_words(step: Command, recorders: Path, record: Path) -> None:
    line = step.render()
    words = step.argv
    assert words is not None
    assert shlex.split(line) == words, line
    assert _bash_argv(line, recorders, record) == [Path(words[0]).name, *words[1:]], line


@given(name=WORD, version=WORD)
@EXAMPLES
def test_a_pip_line_carries_a_name_and_version_as_one_word(recorders: Path, tmp_path: Path, name: str,
                                                          version: str) -> None:
    interpreter = str(recorders / "python")
    step = pip_command(_env(interpreter), "install", pin(name, version), "--extra-index-url", version)
    _assert_words(step, recorders, tmp_path / "record")
    assert step.argv == [interpreter, "-m", "pip", "install", f"{name}=={version}", "--extra-index-url", version]


@given(paths=st.lists(WORD, min_size=1, max_size=3))
@EXAMPLES
def test_a_removal_names_each_path_as_one_word(recorders: Path, tmp_path: Path, paths: list[str]) -> None:
    step = command("sudo", "rm", "-rf", *paths)  # the recording sudo keeps anything from being removed
    _assert_words(step, recorders, tmp_path / "record")
    assert step.argv == ["sudo", "rm", "-rf", *paths]


@given(package=WORD, version=WORD, manager=st.sampled_from(["apt", "dnf"]))
@EXAMPLES
def test_an_os_package_pin_is_one_word(recorders: Path, tmp_path: Path, package: str, version: str,
                                       manager: str) -> None:
    snapshot = HostSnapshot(os=OsRelease(id="ubuntu" if manager == "apt" else "amzn", version_id="2023"))
    step = install_command(snapshot, [(package, version)])
    _assert_words(step, recorders, tmp_path / "record")
    assert step.argv is not None and step.argv[-1] == f"{package}{'=' if manager == 'apt' else '-'}{version}*"


@given(package=WORD, version=WORD, manager=st.sampled_from(["apt", "dnf"]))
@EXAMPLES
def test_a_reinstall_names_the_installed_version_as_one_word(recorders: Path, tmp_path: Path, package: str,
                                                              version: str, manager: str) -> None:
    """ND-RT-003's reinstall takes the version the package database lists: host data, never more than one word."""
    snapshot = HostSnapshot(os=OsRelease(id="ubuntu" if manager == "apt" else "amzn", version_id="2023"))
    step = reinstall_command(snapshot, [(package, version)])
    _assert_words(step, recorders, tmp_path / "record")
    assert step.argv is not None and step.argv[-1] == (f"{package}={version}*" if manager == "apt" else package)


@given(names=st.lists(st.tuples(WORD, WORD), min_size=1, max_size=4), removed=st.lists(WORD, max_size=3),
       remark=WORD)
@EXAMPLES
def test_a_merged_plan_keeps_every_word(recorders: Path, tmp_path: Path, names: list[tuple[str, str]],
                                        removed: list[str], remark: str) -> None:
    interpreter = str(recorders / "python")
    env = _env(interpreter)
    findings = [Finding("ND-PIN-001", "framework-pin-mismatch", "error", "t",
                        fix=Fix([pip_command(env, "install", pin(name, version))])) for name, version in names]
    findings += [Finding("ND-PIP-001", "wrong-pip-index", "error", "t",
                         fix=Fix([note("{} is data in a note", remark), pip_command(env, "uninstall", "-y", name)]))
                 for name in removed]
    plan = environment_plan(findings, interpreter)
    for step in plan:
        line = step.render()
        if isinstance(step, Command):
            _assert_words(step, recorders, tmp_path / "record")
        else:  # a note is one comment line: the shell runs nothing of it
            assert shlex.split(line, comments=True) == [] and "\n" not in line
            assert subprocess.run(["bash", "-c", line], env={"PATH": f"{recorders}:/usr/bin:/bin",
                                                             "RECORD": str(tmp_path / "r")},
                                  timeout=30).returncode == 0 and not (tmp_path / "r").exists()
    installed = [word for step in plan if isinstance(step, Command) and step.argv and "install" in step.argv
                 for word in step.argv]
    # one requirement per distribution: of two that name the same one, the later stays, word for word
    wanted = {requirement_name(f"{name}=={version}"): f"{name}=={version}" for name, version in names}
    assert all(requirement in installed for requirement in wanted.values())


@given(name=WORD, version=WORD)
@example(name="--index-url=http://127.0.0.1:9/simple", version="1")  # pip would take it for its index
@example(name="torch; rm -rf ~", version="2.9.0\n--extra-index-url x")
@EXAMPLES
def test_fix_runs_exactly_the_words(recorders: Path, name: str, version: str) -> None:
    """`check --fix` classifies the plan's step and hands its words to the runner as argv, with no shell."""
    interpreter = str(recorders / "python")
    env = _env(interpreter)
    step = pip_command(env, "install", pin(name, version))
    planned = classify(step, env, {})
    if name.startswith("-"):  # pip would take it for an option (`--index-url=…`): never run
        assert planned.action == SKIP and "option" in planned.why
        return
    assert planned.action == RUN and planned.argv == step.argv
    ran: list[list[str]] = []

    def runner(argv: list[str], **_: object) -> CommandResult:
        ran.append(list(argv))
        return CommandResult(argv=tuple(argv), returncode=0, stdout="", stderr="", duration_s=0.0)

    assert apply_step(planned, "stamp", {}, runner=runner).ok
    assert ran == [[interpreter, "-m", "pip", "install", f"{name}=={version}"]]


def test_a_step_that_needs_a_shell_is_not_run_by_fix() -> None:
    """A glob or a pipe has no argv: `--fix` leaves it to the user instead of handing it to a shell."""
    env = _env("/v/bin/python")
    for step in (command("rm", "-rf", ("/v/lib/python3.11/site-packages/torch", Shell("*"))),
                 pipeline(["/v/bin/python", "-m", "pip", "freeze"], ["tee", "/v/x"])):
        assert step.argv is None
        assert classify(step, env, {}).action == SKIP
