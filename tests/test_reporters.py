"""Terminal, Markdown and JSON renderings of one report; exit codes; select/skip; a crashing rule."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from neurondoctor.actions.check.check_run import CheckOptions, run_check
from neurondoctor.release_data.catalog import ReleaseCatalog
from neurondoctor.report.document import SCHEMA, render_json
from neurondoctor.report.markdown import render_markdown
from neurondoctor.report.terminal import render_terminal
from neurondoctor.rules import registry
from neurondoctor.rules.check import Check, RuleSet
from tests.conftest import make_host_root, run_cli, validated_report
from tests.neuron_envs import HEALTHY_STACKS, cuda_torch_wheels, stack_wheels
from tests.wheelhouse import VenvFactory, venv_python, write_pip_conf


@pytest.fixture(scope="module")
def broken_venv(venvs: VenvFactory) -> Path:
    venv = venvs.create("reporters-broken")
    cuda = cuda_torch_wheels("2.10.0")
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.31.1"], torch=cuda[0]) + cuda[1:])
    write_pip_conf(venv)
    return venv


def test_terminal_report_leads_with_the_verdict_and_the_fix(broken_venv: Path, host_root: Path) -> None:
    result = run_cli(["check", "--root", str(host_root), "--venv", str(broken_venv)])
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("neurondoctor 0.1.0 · trn1.2xlarge · root ")
    assert any(line.startswith(f"Python   {broken_venv} (") and "torch 2.10.0+cu128 (cuda)" in line
               for line in lines)
    stack_line = next(line for line in lines if "PyTorch stack" in line)
    assert stack_line.startswith("[✗] PyTorch stack") and "replaced the torch 2.9" in stack_line
    fix_line = next(line for line in lines if "Fix:" in line)
    assert f"{venv_python(broken_venv)} -m pip install --force-reinstall --no-deps 'torch==2.9.0+cpu'" in fix_line
    assert lines[-1].startswith("Unhealthy: 1 error in 1 area.")
    assert next(line for line in lines if "Python environment" in line).startswith("[✓]")


def test_verbose_adds_facts_and_timings(broken_venv: Path, host_root: Path) -> None:
    result = run_cli(["check", "-v", "--root", str(host_root), "--venv", str(broken_venv)])
    assert "Facts" in result.stdout and " ms]" in result.stdout
    assert "venv: " in result.stdout and "distributions" in result.stdout


def test_markdown_report_for_a_ticket(broken_venv: Path, host_root: Path) -> None:
    result = run_cli(["check", "--format", "markdown", "--root", str(host_root), "--venv", str(broken_venv)])
    assert result.stdout.startswith("## neurondoctor 0.1.0 report")
    assert "| PyTorch stack | error |" in result.stdout
    assert "**ERROR ND-TORCH-001** (stock-torch-conflict)" in result.stdout
    assert "```sh\n" in result.stdout
    assert result.returncode == 1


def test_json_document_shape(broken_venv: Path, host_root: Path, catalog: ReleaseCatalog) -> None:
    report = run_check(CheckOptions(root=str(host_root), venvs=[str(broken_venv)], environ={}), catalog=catalog)
    document = validated_report(render_json(report))
    assert document["schema"] == SCHEMA
    assert set(document) >= {"tool", "generated_at", "root", "release", "checks", "findings", "facts", "summary"}
    for finding in document["findings"]:
        assert set(finding) == {"id", "category", "severity", "title", "detail", "evidence", "fix", "docs"}
    assert document["summary"] == {"errors": 1, "warnings": 0, "info": 0}
    assert {check["id"]: check["status"] for check in document["checks"]}["pytorch-stack"] == "error"
    assert document["facts"]["host"]["instance_type"] == "trn1.2xlarge"
    assert document["facts"]["environments"][0]["site_dirs"][0]["distributions"]


def test_select_and_skip(broken_venv: Path, host_root: Path, catalog: ReleaseCatalog) -> None:
    only_torch = run_check(CheckOptions(root=str(host_root), venvs=[str(broken_venv)], select=["ND-TORCH-001"],
                                        environ={}), catalog=catalog)
    assert [finding.id for finding in only_torch.findings] == ["ND-TORCH-001"]
    assert [check.id for check in only_torch.checks] == ["pytorch-stack"]
    only_pins = run_check(CheckOptions(root=str(host_root), venvs=[str(broken_venv)], select=["pip-index"],
                                       environ={}), catalog=catalog)
    assert only_pins.findings == [] and [check.id for check in only_pins.checks] == ["pip-index"]
    skipped = run_check(CheckOptions(root=str(host_root), venvs=[str(broken_venv)], skip=["stock-torch-conflict"],
                                     environ={}), catalog=catalog)
    assert skipped.findings == [] and skipped.exit_code() == 0


def test_a_crashing_rule_shows_as_crashed_and_the_others_report(broken_venv: Path, host_root: Path,
                                                                 catalog: ReleaseCatalog,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(ctx: object) -> list[object]:
        raise RuntimeError("boom")

    crashing = Check("pip-index", "Package index", (RuleSet((explode,), ()),), lambda ctx: "")
    monkeypatch.setattr(registry, "CHECKS", tuple(crashing if check.id == "pip-index" else check
                                                  for check in registry.CHECKS))
    report = run_check(CheckOptions(root=str(host_root), venvs=[str(broken_venv)], environ={}), catalog=catalog)
    statuses = {check.id: check.status for check in report.checks}
    assert statuses["pip-index"] == "crashed" and statuses["pytorch-stack"] == "error"
    stream = io.StringIO()
    render_terminal(report, stream)
    assert "[☠] Package index" in stream.getvalue() and "explode crashed: RuntimeError: boom" in stream.getvalue()
    assert "## neurondoctor" in render_markdown(report)


def test_non_neuron_machine_gets_a_short_report(tmp_path: Path) -> None:
    result = run_cli(["check", "--root", str(make_host_root(tmp_path / "plain", instance_type=None))])
    assert result.returncode == 0
    assert "no Python environment found" in result.stdout
    assert len(result.stdout.splitlines()) < 12


def test_node_health_formats(broken_venv: Path, host_root: Path, venvs: VenvFactory) -> None:
    npd = run_cli(["check", "--format", "npd", "--root", str(host_root), "--venv", str(broken_venv)])
    assert npd.returncode == 1
    assert npd.stdout.startswith("ND-TORCH-001 torch 2.10.0+cu128 replaced")
    assert len(npd.stdout.strip()) <= 80 and npd.stdout.count("\n") == 1
    nhc = run_cli(["check", "--format", "nhc", "--root", str(host_root), "--venv", str(broken_venv)])
    assert nhc.returncode == 1
    assert nhc.stdout.splitlines()[0].startswith("ERROR: neurondoctor: ND-TORCH-001 ")
    healthy = venvs.create("node-health-ok")
    venvs.install(healthy, stack_wheels(HEALTHY_STACKS["2.30.0"]))
    write_pip_conf(healthy)
    ok = run_cli(["check", "--format", "npd", "--root", str(host_root), "--venv", str(healthy)])
    assert (ok.returncode, ok.stdout) == (0, "Neuron stack OK (0 warnings)\n")
    ok_nhc = run_cli(["check", "--format", "nhc", "--root", str(host_root), "--venv", str(healthy)])
    assert ok_nhc.stdout == "OK: neurondoctor: 9 checks passed\n"


def test_releases_that_share_every_version_are_both_named(venvs: VenvFactory, tmp_path: Path) -> None:
    """The 2.31.1 stack's versions ship in 2.31.0 too: the words name both, never the newer alone,
    while the JSON still judges against the newest."""
    from tests.host_fixture import HostSpec, build_host

    venv = venvs.create("release-words")
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.31.1"]))
    write_pip_conf(venv)
    root = build_host(tmp_path / "host", HostSpec(release="2.31.1"))
    result = run_cli(["check", "--root", str(root), "--venv", str(venv)])
    python_line = next(line for line in result.stdout.splitlines() if line.startswith("Python   "))
    assert "Neuron 2.31.0/2.31.1 packages" in python_line
    assert "Neuron 2.31.1 packages" not in result.stdout
    document = validated_report(run_cli(["check", "--json", "--root", str(root), "--venv", str(venv)]).stdout)
    assert document["release"]["environments"][str(venv)] == "2.31.1"


def test_the_verdict_words_agree_in_text_json_and_markdown(tmp_path: Path) -> None:
    """One host, three formats: each area's word in the markdown table is its JSON `status`, the text's box is that
    status's mark, and the verdict (text's last line, markdown's `verdict:` and last line) is JSON's `health.state`.
    A trn1 whose driver is built but not loaded (docs/neuron-facts.md §7) and a healthy one beside it."""
    from tests.conftest import empty_folder
    from tests.host_fixture import HostSpec, build_host

    marks = {"ok": "[✓]", "info": "[✓]", "warning": "[!]", "error": "[✗]", "unknown": "[?]", "crashed": "[☠]",
             "skipped": "[–]"}
    for name, spec in (("broken", HostSpec(driver_loaded=False)), ("healthy", HostSpec())):
        args = ["check", "--root", str(build_host(tmp_path / name, spec)), "--venv", empty_folder(tmp_path)]
        document = json.loads(run_cli([*args, "--json"]).stdout)
        text = run_cli(args).stdout.splitlines()
        markdown = run_cli([*args, "--format", "markdown"]).stdout.splitlines()
        state = document["health"]["state"]
        assert text[-1].split(":")[0].lower() == state and markdown[-1].split(":")[0].lower() == state
        assert f"- verdict: **{state}**" in markdown
        for check in document["checks"]:
            assert f"| {check['title']} | {check['status']} |" in "\n".join(markdown), check
            shown = [line for line in text if line[4:].startswith(check["title"])]
            assert all(line.startswith(marks[check["status"]]) for line in shown), (check, shown)
