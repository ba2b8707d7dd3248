"""The structure every later feature builds on: one health verdict, checks that declare themselves,
the report document and its reader, a layering that holds, output that survives a closed or full stdout, and
terminal text that reads well at any width."""

from __future__ import annotations

import ast
import io
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from neurondoctor.actions.check.check_run import CheckOptions, run_check
from neurondoctor.cli import main as cli
from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.report.document import render_json
from neurondoctor.report.health import STATE_DEGRADED, STATE_OK, STATE_UNHEALTHY, STATE_UNKNOWN, judge_health
from neurondoctor.report.reader import ReportFormatError, load_report
from neurondoctor.report.terminal import render_terminal
from neurondoctor.report.text_layout import wrap_command
from neurondoctor.rules import registry
from neurondoctor.rules.check import Check, FindingSpec, RuleSet
from neurondoctor.rules.finding import CATEGORIES, Finding
from neurondoctor.rules.fix import command
from tests.conftest import REPO, check_json, cli_env, run_cli, validated_report, without_read_privileges
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import HEALTHY_STACKS, cuda_torch_wheels, stack_wheels
from tests.wheelhouse import VenvFactory, venv_python, write_pip_conf


def _finding(severity: str) -> Finding:
    return Finding(id="ND-TORCH-001", category="stock-torch-conflict", severity=severity, title="t")


@pytest.mark.parametrize(("severities", "unchecked", "state"), [
    ((), (), STATE_OK),
    (("info",), (), STATE_OK),
    (("warning",), (), STATE_DEGRADED),
    (("warning", "error"), (), STATE_UNHEALTHY),
    (("warning",), ("Driver: could not collect",), STATE_UNKNOWN),
    ((), ("a check crashed",), STATE_UNKNOWN),
    (("error",), ("a check crashed",), STATE_UNHEALTHY),  # a proven error outranks what is unknown
])
def test_health_verdict(severities: tuple[str, ...], unchecked: tuple[str, ...], state: str) -> None:
    health = judge_health([_finding(severity) for severity in severities], list(unchecked))
    assert health.state == state
    assert bool(health.reasons) == (state != STATE_OK)


@pytest.fixture(scope="module")
def trn1_host(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_host(tmp_path_factory.mktemp("structure") / "trn1", HostSpec())


@pytest.fixture(scope="module")
def healthy_venv(venvs: VenvFactory) -> Path:
    venv = venvs.create("structure-healthy")
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.31.1"]))
    write_pip_conf(venv)
    return venv


def _exploding_checks() -> tuple[Check, ...]:
    def explode(ctx: object) -> list[Finding]:
        raise RuntimeError("boom")

    return tuple(Check(check.id, check.title, (RuleSet((explode,), check.findings),), check.summary,
                       check.applies, check.needs, check.not_applicable) for check in registry.CHECKS)


def test_every_rule_crashing_is_unknown_in_every_format(trn1_host: Path, healthy_venv: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(registry, "CHECKS", _exploding_checks())
    arguments = ["--root", str(trn1_host), "--venv", str(healthy_venv)]
    outputs = {}
    for output_format in ("text", "json", "nhc", "npd"):
        assert cli.run(["check", *arguments, "--format", output_format], environ={}) == 3
        outputs[output_format] = capsys.readouterr().out
    assert "Unknown: 0 errors; 9 areas could not be checked" in outputs["text"]
    assert "[☠] Driver" in outputs["text"] and "OK" not in outputs["nhc"]
    assert outputs["nhc"].startswith("UNKNOWN: neurondoctor: Neuron hardware: ")
    assert outputs["npd"].startswith("neurondoctor could not check: ") and "OK" not in outputs["npd"]
    assert len(outputs["npd"].encode()) <= 81
    assert validated_report(outputs["json"])["health"]["state"] == STATE_UNKNOWN


def _assert_driver_not_collected(code: int, document: dict[str, Any]) -> None:
    driver = next(check for check in document["checks"] if check["id"] == "driver")
    assert code == 3 and document["health"]["state"] == STATE_UNKNOWN
    assert driver["status"] == "unknown"
    assert driver["error"].startswith("could not collect: packages: could not read the package database "
                                      "/var/lib/dpkg/status")
    assert "ND-DRV-001" not in {finding["id"] for finding in document["findings"]}  # not "no driver installed"


def test_an_unreadable_package_database_is_could_not_collect(tmp_path: Path, healthy_venv: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec())
    status = root / "var/lib/dpkg/status"
    status.unlink()
    status.mkdir()  # a directory where the file belongs: unreadable for root too
    code, document, _ = check_json(["--root", str(root), "--venv", str(healthy_venv)])
    _assert_driver_not_collected(code, document)
    text = run_cli(["check", "--root", str(root), "--venv", str(healthy_venv)])
    driver_line = next(line for line in text.stdout.splitlines() if "Driver" in line)
    assert driver_line.startswith("[?] Driver") and "could not collect" in driver_line
    assert text.returncode == 3


def test_a_package_database_this_user_cannot_read(tmp_path: Path, healthy_venv: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec())
    (root / "var/lib/dpkg/status").chmod(0)
    code, document, _ = check_json(["--root", str(root), "--venv", str(healthy_venv)],
                                   prefix=without_read_privileges())
    _assert_driver_not_collected(code, document)


def test_a_closed_or_full_stdout_is_exit_3_without_a_traceback(tmp_path: Path) -> None:
    command = [sys.executable, "-m", "neurondoctor", "check", "--json", "--root", str(tmp_path)]
    closed = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", *command], capture_output=True, text=True,
                            env=cli_env(), cwd=str(REPO), timeout=60)
    assert closed.returncode == 3 and "Traceback" not in closed.stderr
    assert "standard output is closed" in closed.stderr
    with open("/dev/full", "w") as full:
        filled = subprocess.run(command, stdout=full, stderr=subprocess.PIPE, text=True, env=cli_env(),
                                cwd=str(REPO), timeout=60)
    assert filled.returncode == 3 and "Traceback" not in filled.stderr
    assert "closed or full" in filled.stderr
    typer_command = subprocess.run([sys.executable, "-m", "neurondoctor", "manifests", "list"],
                                   stdout=open("/dev/full", "w"), stderr=subprocess.PIPE, text=True,  # noqa: SIM115
                                   env=cli_env(), cwd=str(REPO), timeout=60)
    assert typer_command.returncode == 3 and "Traceback" not in typer_command.stderr


def test_list_prints_every_declared_id() -> None:
    result = run_cli(["check", "--list"])
    assert result.returncode == 0
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert all(len(row) == 4 for row in rows)
    listed = {row[0] for row in rows}
    declared = {spec.id for _, spec in registry.all_finding_specs()}
    assert declared <= listed and {check.id for check in registry.CHECKS} <= listed
    assert {"ND-DRV-001", "ND-TORCH-001", "ND-OP-001", "ND-CAN-001"} <= declared
    assert all(row[1] in CATEGORIES for row in rows if row[1] != "check")
    document = json.loads(run_cli(["check", "--list", "--json"]).stdout)
    assert document["schema"] == "neurondoctor.checks/1"
    assert {finding["id"] for check in document["checks"] for finding in check["findings"]} == declared
    listed_severities = {finding["id"]: finding["severities"] for check in document["checks"]
                         for finding in check["findings"]}
    assert listed_severities["ND-REQ-003"] == ["error", "warning"]  # documented, or only reported
    assert listed_severities["ND-PIP-002"] == ["warning", "info"]
    assert {row[0]: row[2] for row in rows}["ND-REQ-003"] == "error|warning"
    # A full main-tier run fails when an id is printed at a severity this list does not declare (tests/conftest.py).


def test_declared_ids_are_unique_and_every_check_owns_its_prefixes() -> None:
    specs = [spec for _, spec in registry.all_finding_specs()]
    assert len({spec.id for spec in specs}) == len(specs)


def test_selectors_must_name_something_that_exists() -> None:
    for bad in ("ND-PIN-999", "ND-NOPE", "no-such-check"):
        result = run_cli(["check", "--select", bad])
        assert result.returncode == 2 and "not a check, finding id or category" in result.stderr
    for good in ("ND-PIN-001", "ND-PIN", "driver", "shadowing"):
        assert registry.known_selector(good)


def test_a_rule_that_emits_an_undeclared_id_crashes_its_check(trn1_host: Path, healthy_venv: Path,
                                                             catalog: ReleaseCatalog,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    def stray(ctx: object) -> list[Finding]:
        return [Finding(id="ND-PIP-999", category="wrong-pip-index", severity="warning", title="stray")]

    pip_check = next(check for check in registry.CHECKS if check.id == "pip-index")
    patched = Check(pip_check.id, pip_check.title, (*pip_check.rule_sets, RuleSet((stray,), ())), pip_check.summary)
    monkeypatch.setattr(registry, "CHECKS", tuple(patched if check.id == "pip-index" else check
                                                  for check in registry.CHECKS))
    report = run_check(CheckOptions(root=str(trn1_host), venvs=[str(healthy_venv)], environ={}), catalog=catalog)
    result = next(check for check in report.checks if check.id == "pip-index")
    assert result.status == "crashed" and "undeclared finding(s): ND-PIP-999" in (result.error or "")
    assert report.health.state == STATE_UNKNOWN and report.exit_code() == 3


def test_a_severity_its_spec_does_not_list_crashes_the_check(trn1_host: Path, healthy_venv: Path,
                                                             catalog: ReleaseCatalog,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """`check --list --json` is the one source of every id and severity: a rule that prints a declared id at a
    severity its spec does not list is a bug, and its
    check is crashed, never a verdict reached on it."""
    pip_check = next(check for check in registry.CHECKS if check.id == "pip-index")
    spec = pip_check.findings[0]
    wrong = next(severity for severity in ("info", "warning", "error") if severity not in spec.severities)

    def stray(ctx: object) -> list[Finding]:
        return [Finding(id=spec.id, category=spec.category, severity=wrong, title="stray")]

    patched = Check(pip_check.id, pip_check.title, (*pip_check.rule_sets, RuleSet((stray,), ())), pip_check.summary)
    monkeypatch.setattr(registry, "CHECKS", tuple(patched if check.id == "pip-index" else check
                                                  for check in registry.CHECKS))
    report = run_check(CheckOptions(root=str(trn1_host), venvs=[str(healthy_venv)], environ={}), catalog=catalog)
    result = next(check for check in report.checks if check.id == "pip-index")
    assert result.status == "crashed" and f"undeclared finding(s): {spec.id} as {wrong}" in (result.error or "")
    listed = json.loads(run_cli(["check", "--list", "--json"]).stdout)
    declared = {finding["id"]: finding["severities"] for check in listed["checks"] for finding in check["findings"]}
    assert wrong not in declared[spec.id] and declared[spec.id] == list(spec.severities)


def test_finding_specs_refuse_unknown_categories() -> None:
    with pytest.raises(ValueError, match="unknown category"):
        FindingSpec("ND-X-001", "not-a-category", "error", "x")
    schema = json.loads((REPO / "neurondoctor/report/report.schema.json").read_text())
    assert set(schema["properties"]["findings"]["items"]["properties"]["category"]["enum"]) == CATEGORIES


def test_load_report_tolerates_unknown_fields_and_names_missing_ones(trn1_host: Path, healthy_venv: Path,
                                                                    catalog: ReleaseCatalog,
                                                                    tmp_path: Path) -> None:
    report = run_check(CheckOptions(root=str(trn1_host), venvs=[str(healthy_venv)], environ={}), catalog=catalog)
    document = json.loads(render_json(report))
    document["from_a_newer_writer"] = {"anything": [1, 2]}
    document["checks"][0]["new_field"] = True
    document["findings"].append({"id": "ND-NEW-001", "category": "resource", "severity": "info", "title": "new",
                                 "future": "field"})
    path = tmp_path / "report.json"
    path.write_text(json.dumps(document))
    read = load_report(path)
    assert read.node.instance_type == "trn1.2xlarge" and read.health.state == STATE_OK
    assert read.release.host == "2.31.1" and read.findings[-1].id == "ND-NEW-001"
    assert isinstance(read.facts, dict) and "host" in read.facts
    del document["health"]
    with pytest.raises(ReportFormatError, match="missing field 'health'"):
        load_report(json.dumps(document))
    with pytest.raises(ReportFormatError, match="not JSON"):
        load_report("{" * 100_000)
    with pytest.raises(ReportFormatError, match="cannot read"):
        load_report(tmp_path / "absent.json")


LAYERS = {"facts": 0, "redaction": 0, "neuron_version": 0, "command_runner": 0, "command_timeouts": 0, "exit_codes": 0,
          "regular_files": 0, "log_text": 0, "python_packaging": 0, "output_text": 0, "run_trust": 0,
          "typed_paths": 0, "strict_numbers": 0, "json_data": 0, "output_targets": 0, "color_choice": 0, "": 0,
          "release_data": 1, "host": 2, "pyenv": 2, "rules": 3, "report": 4, "finding_pages": 4, "actions": 5,
          "cli": 6, "__main__": 6}


def _layer(module: str) -> int:
    parts = module.split(".")
    return LAYERS[parts[1] if len(parts) > 1 else ""]


def test_no_module_imports_a_higher_layer() -> None:
    """docs/contracts.md §2: facts, redaction, neuron_version, command_runner < release_data < host, pyenv < rules
    < report < actions < cli."""
    package = REPO / "neurondoctor"
    violations = []
    for path in package.rglob("*.py"):
        if "scripts" in path.relative_to(package).parts:
            continue  # probe scripts run inside target environments and import nothing of the doctor
        module = ".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__")
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([node.module] if isinstance(node, ast.ImportFrom) and node.module else
                     [alias.name for alias in node.names] if isinstance(node, ast.Import) else [])
            for name in names:
                if name.startswith("neurondoctor") and _layer(name) > _layer(module):
                    violations.append(f"{module} imports {name}")
    assert violations == []


def _module_files() -> dict[str, Path]:
    """Every module of the package by its dotted name (the probe scripts, which run inside target environments and
    import nothing of the doctor, left out)."""
    package = REPO / "neurondoctor"
    return {".".join(path.relative_to(REPO).with_suffix("").parts).removesuffix(".__init__"): path
            for path in package.rglob("*.py") if "scripts" not in path.relative_to(package).parts}


def _runtime_imports(tree: ast.AST) -> list[ast.AST]:
    """The import statements that run: at module level or inside a function, never under `if TYPE_CHECKING:`."""
    skipped = {id(child) for node in ast.walk(tree) if isinstance(node, ast.If)
               and "TYPE_CHECKING" in ast.unparse(node.test) for body in node.body for child in ast.walk(body)}
    return [node for node in ast.walk(tree) if isinstance(node, (ast.Import, ast.ImportFrom))
            and id(node) not in skipped]


def _import_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports (a name taken from a package counts as its submodule when it is
    one), whether the import is at the top or deferred into a function: both make one file depend on another."""
    modules = _module_files()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in _runtime_imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                base = node.module or ""
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names]
            graph[name].update(target for target in targets if target in modules and target != name)
    from neurondoctor.cli.app import COMMAND_MODULES  # imported by name when a command is run

    graph["neurondoctor.cli.app"].update(COMMAND_MODULES.values())
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_two_files_depend_on_each_other() -> None:
    """A module that imports another which imports it back, at the top or inside a function, has no place of its
    own: the shared piece belongs in a third module both import."""
    graph = _import_graph()
    assert graph["neurondoctor.cli.main"] >= {"neurondoctor.cli.app", "neurondoctor.cli.invocation"}
    assert graph["neurondoctor.cli.app"] >= {"neurondoctor.cli.check_command", "neurondoctor.cli.health_command"}
    assert _cycles(graph) == []
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]  # the finder finds


@pytest.fixture(scope="module")
def broken_venv(venvs: VenvFactory) -> Path:
    venv = venvs.create("structure-broken")
    cuda = cuda_torch_wheels("2.10.0")
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.31.1"], torch=cuda[0]) + cuda[1:])
    write_pip_conf(venv)
    return venv


@pytest.mark.parametrize("width", [80, 120])
def test_terminal_text_wraps_to_the_width_and_keeps_fixes_whole(trn1_host: Path, broken_venv: Path,
                                                               catalog: ReleaseCatalog, width: int) -> None:
    report = run_check(CheckOptions(root=str(trn1_host), venvs=[str(broken_venv)], environ={}), catalog=catalog)
    stream = io.StringIO()
    render_terminal(report, stream, color=False, width=width)
    lines = stream.getvalue().splitlines()
    fix = next(finding.fix_lines[0] for finding in report.findings if finding.id == "ND-TORCH-001")
    start = next(index for index, line in enumerate(lines) if line.lstrip().startswith("Fix: "))
    pasted = [lines[start].split("Fix: ", 1)[1]]
    while pasted[-1].endswith(" \\"):
        pasted[-1] = pasted[-1][:-2]
        pasted.append(lines[start + len(pasted)].strip())
    assert " ".join(pasted) == fix  # continued with ` \` at word boundaries: pastes back as the same command
    too_long = [line for line in lines if len(line) > width and not line.lstrip().startswith("Fix:")
                and len(line.removesuffix(" \\").split()) > 1]  # one word longer than the width cannot wrap
    assert too_long == []
    detail = next(index for index, line in enumerate(lines) if "ND-TORCH-001" in line)
    assert lines[detail + 1].startswith("      ") and lines[detail + 2].startswith("      ")  # hanging indent
    assert lines[-1].startswith("Unhealthy: 1 error") or lines[-2].startswith("Unhealthy: 1 error")


def test_a_command_keeps_quoted_words_and_comments_whole() -> None:
    step = command("python", "-m", "ipykernel_launcher", "-f", "/root/a b.json", "--HistoryManager.enabled=False",
                   note="a note ends the line")
    lines = wrap_command(step, 60, "Fix: ", "     ")
    assert "'/root/a b.json'" in "".join(lines) and lines[-1].endswith("  # a note ends the line")
    assert all("#" not in line for line in lines[:-1]) and len(lines) >= 2  # continued between words, note last
    assert shlex.split(" ".join(line.removesuffix(" \\") for line in lines).removeprefix("Fix: "),
                       comments=True) == step.argv


def test_help_texts_list_every_value() -> None:
    check_help = run_cli(["check", "--help"]).stdout
    assert "nhc" in check_help and "npd" in check_help and "--list" in check_help
    ops_help = run_cli(["probe", "ops", "--help"]).stdout
    assert "xla" in ops_help and "inventory" in ops_help


def test_help_texts_show_plain_metavars() -> None:
    """`--root DIR`, `Usage: … venv create [OPTIONS] DIR`, never `{path}`, `<str>` or `<list[str]>`."""
    commands = [["bundle"], ["explain"], ["bootstrap"], ["upgrade"], ["fleet", "summarize"], ["manifests", "show"],
                ["manifests", "status"], ["manifests", "update"], ["probe", "ops"], ["probe", "shapes"],
                ["probe", "canary"], ["venv", "create"]]
    for words in commands:
        shown = run_cli([*words, "--help"]).stdout
        assert shown.startswith("Usage: neurondoctor " + " ".join(words)), words
        assert not re.search(r"<[a-z][a-z\[\]]*>|\{[A-Za-z_.]+\}", shown), (words, shown)
    assert "Usage: neurondoctor venv create [OPTIONS] DIR\n" in run_cli(["venv", "create", "--help"]).stdout
    assert "--root DIR" in run_cli(["bundle", "--help"]).stdout


def test_verbose_shows_pip_settings_from_the_environment(tmp_path: Path, healthy_venv: Path) -> None:
    result = run_cli(["check", "-v", "--python", str(venv_python(healthy_venv))],
                     env=cli_env({"PIP_FIND_LINKS": str(tmp_path / "wheels"), "PIP_INDEX_URL": "http://127.0.0.1:9/x"}))
    assert f"pip config environment: index-url http://127.0.0.1:9/x, find-links {tmp_path / 'wheels'}" in (
        result.stdout)
