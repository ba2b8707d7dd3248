"""`neurondoctor explain` as users run it: the error text as the argument or on stdin, and the answer for the host
(`--root`) from the check areas of the failure's category.

The five texts are the ones users paste first (the runtime's and the package managers' own words: aws-neuron-sdk
#1338 for the cores, #452 for apt without the Neuron repository, #89 for a device the runtime could not open);
each is answered on a fixture host that has the fault (the finding and its fix under the explanation) and on a
healthy near miss that must say nothing is wrong there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import REPO, cli_env, run_cli
from tests.host_fixture import Holder, HostSpec, build_host
from tests.neuron_envs import HEALTHY_STACKS, NEURON_REPO, stack_wheels
from tests.wheelhouse import VenvFactory

NO_DEVICE = "RuntimeError: No neuron device found"
CORES = "Logical Neuron Core(s) not available - Requested:1 Available:0"
OPEN_FAILED = "Failed to open /dev/neuron0"
APT = "E: Unable to locate package aws-neuronx-dkms"
PIP = ("ERROR: Could not find a version that satisfies the requirement torch-neuronx (from versions: none)\n"
       "ERROR: No matching distribution found for torch-neuronx\n")


def _explain(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    result = run_cli(["explain", *args, "--json"], env=env)
    assert result.stderr == "", result.stderr
    return result.returncode, json.loads(result.stdout)


def _ids(document: dict[str, Any]) -> list[str]:
    return [finding["id"] for finding in document["host"]["findings"]]


def _tree(root: Path) -> dict[str, tuple[int, int]]:
    """Every file under the root with its size and modification time: what `explain` must leave as it was."""
    return {str(path): (path.lstat().st_size, path.lstat().st_mtime_ns) for path in root.rglob("*")}


def test_no_device_found_is_answered_by_the_driver_on_this_host(tmp_path: Path) -> None:
    broken = build_host(tmp_path / "broken", HostSpec(driver_loaded=False))
    before = _tree(broken)
    code, document = _explain(NO_DEVICE, "--root", str(broken))
    assert code == 0 and document["category"] == "device-missing" and document["kind"] == "Neuron runtime"
    assert document["host"]["areas"] == ["hardware", "driver", "devices"]
    assert "ND-DRV-002" in _ids(document)
    assert _tree(broken) == before  # nothing is written
    healthy = build_host(tmp_path / "healthy", HostSpec())
    code, document = _explain(NO_DEVICE, "--root", str(healthy))
    assert code == 0 and document["category"] == "device-missing" and _ids(document) == []
    assert all(check["status"] == "ok" for check in document["host"]["checks"])
    text = run_cli(["explain", NO_DEVICE, "--root", str(healthy)])
    assert "  nothing wrong here: the cause is not (or no longer) on this host" in text.stdout


def test_cores_not_available_names_the_process_that_holds_them(tmp_path: Path) -> None:
    held = build_host(tmp_path / "held", HostSpec(instance_type="trn1.32xlarge", holders=[
        Holder(4121, "python", "python -m ipykernel_launcher -f kernel.json", (0,))]))
    code, document = _explain(CORES, "--root", str(held))
    assert code == 0 and document["category"] == "cores-busy"
    assert document["facts"] == {"requested": "1", "available": "0"}
    [finding] = [finding for finding in document["host"]["findings"] if finding["id"] == "ND-DEV-003"]
    assert "4121" in finding["title"] or any("4121" in line for line in finding["fix"])
    free = build_host(tmp_path / "free", HostSpec(instance_type="trn1.32xlarge"))
    assert "ND-DEV-003" not in _ids(_explain(CORES, "--root", str(free))[1])


def test_a_device_that_will_not_open_is_answered_by_the_devices_of_this_host(tmp_path: Path) -> None:
    pod = build_host(tmp_path / "pod", HostSpec(instance_type="trn1.32xlarge", container=True, device_nodes=0))
    code, document = _explain(OPEN_FAILED, "--root", str(pod))
    assert code == 0 and document["category"] == "device-missing" and document["facts"]["device"] == "0"
    [finding] = [finding for finding in document["host"]["findings"] if finding["id"] == "ND-DEV-001"]
    assert finding["fix"][0].startswith("docker run --device=/dev/neuron0")
    closed = build_host(tmp_path / "closed", HostSpec(node_mode=0o600))
    code, document = _explain(OPEN_FAILED + ": Permission denied", "--root", str(closed))
    assert code == 0 and document["category"] == "device-permission" and "ND-DEV-002" in _ids(document)
    with_devices = build_host(tmp_path / "with-devices", HostSpec(instance_type="trn1.32xlarge", container=True))
    assert _ids(_explain(OPEN_FAILED, "--root", str(with_devices))[1]) == []


def test_apt_without_the_neuron_package_gets_the_repository_commands_of_this_host(tmp_path: Path) -> None:
    bare = build_host(tmp_path / "bare", HostSpec(package_versions={"aws-neuronx-dkms": None}, driver_loaded=False,
                                                  repo_file=False))
    code, document = _explain(APT, "--root", str(bare))
    assert code == 0 and document["category"] == "driver-missing" and document["kind"] == "apt"
    [finding] = [finding for finding in document["host"]["findings"] if finding["id"] == "ND-DRV-001"]
    assert any("apt.repos.neuron.amazonaws.com" in line for line in finding["fix"]), finding["fix"]
    installed = build_host(tmp_path / "installed", HostSpec())
    assert _ids(_explain(APT, "--root", str(installed))[1]) == []


def test_pip_without_the_neuron_index_is_answered_by_the_environments_pip_configuration(
        tmp_path: Path, venvs: VenvFactory) -> None:
    venv = venvs.create("explain-pip-no-index")
    venvs.install(venv, stack_wheels(HEALTHY_STACKS["2.31.1"]))
    root = build_host(tmp_path / "root", HostSpec())
    (root / "home/ubuntu").mkdir(parents=True)
    env = cli_env({"HOME": str(tmp_path / "support-engineer")})
    code, document = _explain(PIP, "--root", str(root), "--venv", str(venv), env=env)
    assert code == 0 and document["category"] == "wrong-pip-index" and document["kind"] == "pip"
    assert "ND-PIP-002" in _ids(document) and document["host"]["environments"] == [str(venv)]
    conf = root / "home/ubuntu/.config/pip/pip.conf"
    conf.parent.mkdir(parents=True)
    conf.write_text(f"[global]\nextra-index-url = {NEURON_REPO}\n")
    code, document = _explain(PIP, "--root", str(root), "--venv", str(venv), env=env)
    assert code == 0 and "ND-PIP-002" not in _ids(document)


def test_no_host_explains_the_text_only(tmp_path: Path) -> None:
    code, document = _explain(NO_DEVICE, "--no-host")
    assert code == 0 and document["category"] == "device-missing" and document["host"] is None
    text = run_cli(["explain", NO_DEVICE, "--no-host"])
    assert "On this host" not in text.stdout and text.stdout.startswith("What broke: device-missing: ")


def test_the_text_comes_as_an_argument_or_on_stdin_and_a_path_stays_a_path(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "neurondoctor", "explain", "--no-host"], input=CORES.encode(),
                          capture_output=True, env=cli_env(), cwd=str(REPO), timeout=60)
    assert done.returncode == 0 and done.stdout.decode().startswith("What broke: cores-busy: ")
    loader = "/usr/bin/python3: error while loading shared libraries: libnrt.so.1: cannot open shared object file"
    assert _explain(loader, "--no-host")[1]["category"] == "tools-missing"  # a message that starts with a path
    for missing in (str(tmp_path / "job.log"), "logs/job.log", "job.log"):
        result = run_cli(["explain", missing])
        assert result.returncode == 2 and result.stderr.startswith("error: ") and len(result.stderr.splitlines()) == 1
    named = tmp_path / "Failed to open"  # an argument that names an existing file is read as the file
    named.write_text(APT + "\n")
    assert _explain(str(named), "--no-host")[1]["category"] == "driver-missing"


def test_an_unmatched_text_says_what_it_read_and_what_tells_more() -> None:
    text = ("Traceback (most recent call last):\n"
            '  File "/opt/venv/lib/python3.10/site-packages/torch_neuronx/xla_impl/trace.py", line 10, in <module>\n'
            "ValueError: input_ids must be a tensor\n")
    code, document = _explain(text)
    assert code == 3 and document["recognised"] is False and document["kind"] == "Python traceback"
    assert document["read_as"] == "a Python ValueError in /opt/venv for torch-neuronx: input_ids must be a tensor"
    assert document["next"] == "neurondoctor check --venv /opt/venv"
    shown = run_cli(["explain", text])
    assert shown.returncode == 3 and shown.stdout.startswith(
        "Not recognised as a known failure. Read as: a Python ValueError in /opt/venv for torch-neuronx")
    assert "`neurondoctor check --venv /opt/venv` tells what is wrong on this host" in shown.stdout
    nothing = run_cli(["explain", "hello world"])
    assert nothing.returncode == 3 and nothing.stdout.startswith("Not recognised: no known Neuron error signature")


def test_the_environment_a_traceback_names_is_the_one_judged(tmp_path: Path) -> None:
    """A traceback from /opt/venv under the root: without --venv, that environment is the one the answer judges."""
    root = build_host(tmp_path / "root", HostSpec())
    venv = root / "opt/venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\nversion = 3.10.12\n")
    (venv / "lib/python3.10/site-packages").mkdir(parents=True)
    text = ('  File "/opt/venv/lib/python3.10/site-packages/optimum/neuron/__init__.py", line 3, in <module>\n'
            "ModuleNotFoundError: No module named 'torch_neuronx'\n")
    code, document = _explain(text, "--root", str(root))
    assert code == 0 and document["category"] == "framework-missing"
    assert document["facts"]["environment"] == "/opt/venv"
    assert document["host"]["environments"] == [os.path.join(str(root), "opt/venv")]


# The runtime's hang on collectives, in the words of nrt-troubleshoot's hardware errors table.
HANG = ("2026-Nov-20 10:12:01.0412 4321:4400 ERROR  NRT:nrt_infodump (FATAL-RT-UNDEFINED-STATE) missing collectives "
        "status on Neuron Device 0 NC 0, model 0 - suspected hang in collectives operation 0 out of 100")


def test_a_hang_on_the_runtime_whose_release_fixed_one_names_the_fix(tmp_path: Path) -> None:
    """Runtime 2.35.30.0 (Neuron 2.33.0) has the HWDGE DMA race that 2.35.33.0 (2.33.1) fixes, one that "can hang the
    TPB AXI fabric" (the 2.33.1 release notes): a hang explained on such a host names that fix and its upgrade (the
    info `check` gives, ND-RT-006); on a 2.33.1 host the same text gets the hardware area alone."""
    on_the_bug = build_host(tmp_path / "2.33.0", HostSpec(release="2.33.0"))
    _, document = _explain(HANG, "--root", str(on_the_bug))
    assert document["category"] == "hardware-error"
    assert "neuron-release" in document["host"]["areas"] or any(
        check["id"] == "neuron-release" for check in document["host"]["checks"])
    (fix,) = [finding for finding in document["host"]["findings"] if finding["id"] == "ND-RT-006"]
    assert "2.35.33.0" in fix["title"] and fix["fix"]
    text = run_cli(["explain", HANG, "--root", str(on_the_bug)]).stdout
    assert "ND-RT-006" in text
    fixed = build_host(tmp_path / "2.33.1", HostSpec(release="2.33.1"))
    _, document = _explain(HANG, "--root", str(fixed))
    assert "ND-RT-006" not in _ids(document)
