"""`bootstrap`: plans for Ubuntu 22.04/24.04 and AL2023 fixture roots against the install steps of the
Neuron setup pages (docs/neuron-facts.md §2) for the chosen release; `--apply` in a fixture root through the host
simulator's recording apt-get/dnf/modprobe (its commands run in `chroot ROOT`, the simulator's), in order; a second
run changes nothing; a failing step stops the run and the status file says which; non-root `--apply` is refused."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from neurondoctor.release_data.catalog import ReleaseCatalog
from tests.conftest import REPO, cli_env, run_cli
from tests.host_fixture import Holder, HostSpec, build_host
from tests.host_simulator import HostSimulator, as_rpm_host

OS_PACKAGES = ("aws-neuronx-dkms", "aws-neuronx-runtime-lib", "aws-neuronx-collectives", "aws-neuronx-tools")
FRESH = {"package_versions": dict.fromkeys(OS_PACKAGES), "repo_file": False, "headers": False,
         "driver_loaded": False}
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="--apply runs as root only (CI runs the tests as root)")


def pins(catalog: ReleaseCatalog, release: str) -> dict[str, str]:
    return {name: catalog.entries(release, name)[0].version for name in OS_PACKAGES}


def bootstrap(root: Path, release: str, *extra: str, env: dict[str, str] | None = None
              ) -> tuple[int, dict[str, Any], str]:
    result = run_cli(["bootstrap", "--release", release, "--venv", "/opt/aws_neuron_venv_pytorch", "--root",
                      str(root), "--json", *extra], env=env, timeout=300)
    return result.returncode, json.loads(result.stdout), result.stderr


def steps(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {step["name"]: step for step in document["steps"]}


@pytest.mark.parametrize(("os_name", "codename"), [("ubuntu24", "noble"), ("ubuntu22", "jammy")])
def test_ubuntu_plan_is_the_setup_page(tmp_path: Path, catalog: ReleaseCatalog, os_name: str, codename: str) -> None:
    root = build_host(tmp_path / "fresh", HostSpec(instance_type="trn1.32xlarge", os=os_name, **FRESH))
    code, plan, _ = bootstrap(root, "2.33.0")
    assert code == 1  # the health of the host as it is: no driver yet
    found = steps(plan)
    assert found["repository"]["commands"] == [
        "sudo install -m 0755 -d /etc/apt/keyrings",
        "wget -qO - https://apt.repos.neuron.amazonaws.com/GPG-PUB-KEY-AMAZON-AWS-NEURON.PUB | sudo gpg --batch "
        "--yes --dearmor -o /etc/apt/keyrings/neuron.gpg",
        f"echo 'deb [signed-by=/etc/apt/keyrings/neuron.gpg] https://apt.repos.neuron.amazonaws.com {codename} main' "
        "| sudo tee /etc/apt/sources.list.d/neuron.list",
        "sudo apt-get update -y"]
    assert found["headers"]["commands"] == ["sudo apt-get install -y linux-headers-6.8.0-1015-aws"]
    versions = pins(catalog, "2.33.0")
    assert versions["aws-neuronx-dkms"] == "2.31.7.0"  # the 2.33.0 release notes' driver
    assert found["packages"]["commands"] == ["sudo apt-get install -y --allow-change-held-packages " + " ".join(
        f"'{name}={version}*'" for name, version in versions.items())]
    assert found["hold"]["commands"] == ["sudo apt-mark hold " + " ".join(OS_PACKAGES)]
    assert found["driver-reload"]["needed"] and found["venv"]["needed"] is False  # the venv is the instance's
    assert plan["applied"] is False and plan["status_file"] is None  # a plan writes nothing


def test_al2023_plan_is_the_setup_page(tmp_path: Path, catalog: ReleaseCatalog) -> None:
    root = build_host(tmp_path / "fresh", HostSpec(instance_type="trn1.2xlarge", os="al2023", **FRESH))
    as_rpm_host(root)
    simulator = HostSimulator(root, tmp_path / "sim")  # the rpm query of the --root goes to the simulator's rpm
    _, plan, _ = bootstrap(root, "2.31.1", env=simulator.env(cli_env()))
    found = steps(plan)
    assert found["repository"]["commands"] == [
        "printf '[neuron]\\nname=Neuron YUM Repository\\nbaseurl=https://yum.repos.neuron.amazonaws.com\\nenabled=1"
        "\\nmetadata_expire=0\\n' | sudo tee /etc/yum.repos.d/neuron.repo",
        "sudo rpm --import https://yum.repos.neuron.amazonaws.com/GPG-PUB-KEY-AMAZON-AWS-NEURON.PUB"]
    assert found["headers"]["commands"] == ["sudo dnf install -y 'kernel-devel-uname-r = 6.8.0-1015-aws'"]
    versions = pins(catalog, "2.31.1")
    assert found["packages"]["commands"] == ["sudo dnf install -y " + " ".join(
        f"'{name}-{version}*'" for name, version in versions.items())]
    assert found["hold"]["commands"][0] == "sudo dnf install -y python3-dnf-plugin-versionlock"


def _commands(simulator: HostSimulator) -> list[str]:
    return [" ".join(argv) for argv in simulator.commands() if argv[0] not in ("rpm", "chroot")]


@needs_root
@pytest.mark.parametrize("rpm", [False, True], ids=["ubuntu24", "al2023"])
def test_apply_upgrades_a_host_then_a_second_run_changes_nothing(tmp_path: Path, catalog: ReleaseCatalog,
                                                                  rpm: bool) -> None:
    """A 2.31.1 trn1.32xlarge with its driver loaded, set up for 2.33.0: repository present, so the packages and
    their hold. The driver package's own scripts unload the old module and load the new one (its `preinstall` and
    `postinstall`, tests/recorded/sysfs/SOURCES.md), so bootstrap, looking again, has nothing to reload."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge", release="2.31.1",
                                                  os="al2023" if rpm else "ubuntu24"))
    if rpm:
        as_rpm_host(root)
    simulator = HostSimulator(root, tmp_path / "sim")
    env = simulator.env(cli_env())
    status = tmp_path / "bootstrap.json"
    code, applied, stderr = bootstrap(root, "2.33.0", "--apply", "--status-file", str(status), env=env)
    assert code == 0, (stderr, applied)
    versions = pins(catalog, "2.33.0")
    manager = "dnf" if rpm else "apt-get"
    # apt waits for another package manager's dpkg lock (unattended-upgrades at first boot) instead of failing
    install = (f"dnf install -y {' '.join(f'{n}-{v}*' for n, v in versions.items())}" if rpm else
               "apt-get -o DPkg::Lock::Timeout=600 install -y --allow-change-held-packages "
               + " ".join(f"{n}={v}*" for n, v in versions.items()))
    hold = (["dnf install -y python3-dnf-plugin-versionlock",
             "dnf versionlock add " + " ".join(f"{n}-{v}*" for n, v in versions.items())] if rpm else
            ["apt-mark hold " + " ".join(OS_PACKAGES)])
    ran = _commands(simulator)
    assert ran == [install, *hold], ran
    assert all(line.startswith("bootstrap: ") or line.startswith("  | ") for line in stderr.splitlines()
               if line.strip()), stderr  # every command logged with its exit (its output with -v)
    written = json.loads(status.read_text())
    assert written["schema"] == "neurondoctor.status/1" and written["state"] == "ok" and written["release"] == "2.33.0"
    assert [(step["name"], step["status"]) for step in written["steps"] if step["status"] != "unchanged"] == [
        ("packages", "ok"), *[("hold", "ok")] * len(hold), ("check", "ok")]
    assert (root / "sys/module/neuron/version").read_text().strip() == versions["aws-neuronx-dkms"]
    assert all(step["duration_s"] >= 0 and "exit_code" in step for step in written["steps"])
    assert manager in ran[0]

    before = len(simulator.commands())
    code, again, _ = bootstrap(root, "2.33.0", "--apply", "--status-file", str(status), env=env)
    assert code == 0
    assert not any(step["needed"] for step in again["steps"]), again["steps"]
    assert _commands_after(simulator, before) == []
    text = run_cli(["bootstrap", "--release", "2.33.0", "--venv", "/opt/v", "--root", str(root)], env=env).stdout
    assert "Nothing to change: this host already matches Neuron 2.33.0." in text


def _commands_after(simulator: HostSimulator, count: int) -> list[list[str]]:
    return [argv for argv in simulator.commands()[count:] if argv[0] not in ("rpm",)]


@needs_root
def test_an_upgrade_while_a_process_holds_a_device_leaves_the_old_driver_running(tmp_path: Path) -> None:
    """The driver package's `preinstall` cannot unload a module a process holds (a notebook kernel here), DKMS aborts
    the install, and the old driver keeps running: bootstrap installs, defers the reload to when the holder stops
    (naming it), and its closing check says the loaded driver is not the installed one."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge", release="2.31.1", holders=[
        Holder(4242, "python3", "python3 -m ipykernel_launcher -f kernel.json", devices=(0,))]))
    simulator = HostSimulator(root, tmp_path / "sim")
    env = simulator.env(cli_env())
    status = tmp_path / "bootstrap.json"
    code, applied, stderr = bootstrap(root, "2.33.0", "--apply", "--status-file", str(status), env=env)
    assert (root / "sys/module/neuron/version").read_text().strip() == "2.29.0.0"  # the old module, still loaded
    assert not any(argv[0] in ("rmmod", "modprobe") for argv in simulator.commands())
    reload = next(step for step in applied["steps"] if step["name"] == "driver-reload")
    assert not reload["needed"] and reload["why"].startswith(
        "driver 2.29.0.0 stays loaded until the processes holding the devices (4242) stop"), reload
    assert code == 1, (stderr, applied)
    assert "ND-DRV-003" in json.dumps(applied), applied


@needs_root
def test_a_failing_step_stops_and_the_status_file_says_which(tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge", release="2.31.1"))
    simulator = HostSimulator(root, tmp_path / "sim")
    locked = tmp_path / "locked"
    locked.mkdir()
    apt_mark = locked / "apt-mark"  # another apt holds the dpkg lock
    apt_mark.write_text("#!/bin/sh\necho 'E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process "
                        "2841 (apt-get)' >&2\nexit 100\n")
    apt_mark.chmod(0o755)
    env = simulator.env(cli_env())
    env["PATH"] = f"{locked}:{env['PATH']}"
    status = tmp_path / "bootstrap.json"
    result = run_cli(["bootstrap", "--release", "2.33.0", "--venv", "/opt/v", "--root", str(root), "--apply",
                      "--status-file", str(status)], env=env, timeout=300)
    assert result.returncode == 1
    # One line names the step, the command and the cause (apt's lock message), one the next step; the
    # command's output is not in the log without -v, and is in the status file.
    stopped = next(line for line in result.stdout.splitlines() if line.startswith("Stopped at "))
    assert stopped.startswith("Stopped at hold: `sudo apt-mark hold aws-neuronx-dkms") and stopped.endswith(
        "exited with status 100: E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by process 2841 "
        "(apt-get)"), stopped
    next_line = result.stdout.splitlines()[result.stdout.splitlines().index(stopped) + 1]
    assert next_line.startswith("Next: another package manager holds the dpkg lock"), next_line
    assert "Could not get lock" not in result.stderr and "bootstrap: hold: exit 100" in result.stderr
    written = json.loads(status.read_text())
    assert written["state"] == "unhealthy" and written["failed_step"] == stopped.removeprefix("Stopped at ")
    assert written["next_step"] == next_line.removeprefix("Next: ")
    failed_record = next(step for step in written["steps"] if step["status"] == "failed")
    assert failed_record["output_tail"] == ["E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by "
                                            "process 2841 (apt-get)"]
    assert failed_record["next_step"] == written["next_step"]
    assert [step["name"] for step in written["steps"] if step["status"] != "unchanged"] == ["packages", "hold"]
    assert not any(argv[0] in ("rmmod", "modprobe") for argv in simulator.commands())  # nothing after the failure

    # -v logs every command's output; --json carries the same two lines.
    verbose = run_cli(["bootstrap", "--release", "2.33.0", "--venv", "/opt/v", "--root", str(root), "--apply",
                       "--status-file", str(status), "--json", "-v"], env=env, timeout=300)
    assert "  | E: Could not get lock /var/lib/dpkg/lock-frontend" in verbose.stderr
    document = json.loads(verbose.stdout)
    assert (document["failed_step"], document["next_step"]) == (written["failed_step"], written["next_step"])


def test_apply_as_a_user_is_refused(tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec())
    argv = [sys.executable, "-m", "neurondoctor", "bootstrap", "--release", "2.33.0", "--venv", "/opt/v", "--root",
            str(root), "--apply"]
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.skip("needs setpriv to run as another user")
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=cli_env(), cwd=str(REPO))
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("error: --apply installs OS packages and loads the driver: run it as root")
    assert done.stdout == ""


def test_an_image_build_without_devices(tmp_path: Path) -> None:
    """A Packer build instance (no Neuron device, the module not loaded) with the release's packages held: --image
    plans no reload and judges it healthy; the same tree judged as an instance is not."""
    image = build_host(tmp_path / "image", HostSpec(instance_type="c7i.xlarge", release="2.31.1", pci=False,
                                                    driver_loaded=False,
                                                    dpkg_states=dict.fromkeys(OS_PACKAGES, "hold ok installed")))
    code, plan, stderr = bootstrap(image, "2.31.1", "--image")
    assert code == 0, (stderr, plan["health"])
    assert "driver-reload" not in steps(plan) and not any(step["needed"] for step in plan["steps"]), plan["steps"]
    code, plan, _ = bootstrap(image, "2.31.1")
    assert code == 1 and plan["health"]["state"] == "unhealthy", plan["health"]


def test_the_deploy_examples_agree() -> None:
    """The user-data carries the same first-boot unit as deploy/bootstrap's, ordered after cloud-final, and the
    Packer build gates with bootstrap --image."""
    import yaml

    unit = (REPO / "deploy/bootstrap/neurondoctor-firstboot.service").read_text()
    user_data_text = (REPO / "deploy/bootstrap/user-data.yaml").read_text()
    assert user_data_text.startswith("#cloud-config\n")
    user_data = yaml.safe_load(user_data_text)
    [embedded] = [item["content"] for item in user_data["write_files"] if item["path"].endswith("firstboot.service")]
    directives = [line for line in unit.splitlines() if line and not line.startswith("#")]
    assert [line for line in embedded.splitlines() if line] == directives
    assert "After=cloud-final.service network-online.target" in directives
    assert "test $? -ne 1" in unit  # only cloud-init's exit 1 is a failure
    runcmd = [" ".join(item) if isinstance(item, list) else item for item in user_data["runcmd"]]
    assert any("uv tool install" in line for line in runcmd) and not any("pip install" in line for line in runcmd)
    assert any(line.startswith("neurondoctor bootstrap --release 2.33.0") and "--apply" in line for line in runcmd)
    packer = (REPO / "deploy/packer/neuron-ami.pkr.hcl").read_text()
    assert "neurondoctor bootstrap --image --release 2.33.0" in packer and "--apply" in packer
