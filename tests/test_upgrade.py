"""`upgrade`: plans between the releases of tests/host_fixture.py HOST_STACKS (docs/neuron-facts.md §1.3, written out
there, not read from the manifests under test) for Trn1, Inf2, Trn2 and Inf1 hosts; `--apply` and `--rollback` in
the host simulator (its apt, dnf, dkms, modprobe, rmmod, pip and scontrol record every command, in order) on Ubuntu
22.04/24.04 and AL2023; hosts a real upgrade left half-done, from the trackers, whose plan repairs them.

Every pair of consecutive releases (both ways) and the long jump 2.24.1 -> 2.33.1 is planned in process (one host
per release and family, planned to each neighbour); apply and rollback run for a representative case per OS and
family, and for the long jump.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Optional

import jsonschema
import pytest

from neurondoctor.actions.upgrade.plan import UpgradePlan, plan_upgrade
from neurondoctor.actions.upgrade.upgrade_run import UpgradeOptions, UpgradeOutcome, collect_facts
from neurondoctor.cli.upgrade_output import upgrade_document
from neurondoctor.release_data.catalog import ReleaseCatalog
from tests.conftest import REPO, cli_env, run_cli
from tests.host_fixture import HOST_STACKS, STACK_PACKAGES, Holder, HostSpec, build_host
from tests.host_simulator import SLURM_STATE, VERSIONLOCK, HostSimulator, as_rpm_host, dpkg_stanzas, rpm_packages
from tests.neuron_envs import image_stack_venv
from tests.wheelhouse import VenvFactory

RELEASES = sorted(HOST_STACKS, key=lambda name: tuple(int(part) for part in name.split(".")))
PAIRS = [*zip(RELEASES, RELEASES[1:]), *zip(RELEASES[1:], RELEASES)]
LONG_JUMP = ("2.24.1", "2.33.1")
SCHEMA = json.loads((REPO / "neurondoctor/report/upgrade.schema.json").read_text())
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="--apply runs as root only (CI runs the tests as root)")
PY = f"{sys.version_info[0]}.{sys.version_info[1]}"

# release-notes/components/runtime.rst: runtime 2.32 fails to initialise on driver 2.26 or older (2.30 notes); a
# driver-only move to 2.29 makes nrt_init fail under a runtime older than 2.33 (2.31 notes). Written out here.
def _breaks(driver: str, runtime: str) -> bool:
    def key(version: str) -> tuple[int, ...]:
        return tuple(int(part) for part in version.split("-")[0].split("."))

    return (key(driver) >= (2, 29) and key(runtime) < (2, 33)) or (key(runtime) >= (2, 32) and key(driver) < (2, 27))


def stack(release: str) -> dict[str, str]:
    return dict(zip(STACK_PACKAGES, HOST_STACKS[release]))


def _host(root: Path, instance_type: str, release: str, os_name: str = "ubuntu24", **extra: Any) -> Path:
    if instance_type.startswith("inf1"):
        inf1_driver = stack(release)["aws-neuronx-dkms"] if release in ("2.24.1", "2.25.0") else "2.24.7.0"
        return build_host(root, HostSpec(
            instance_type=instance_type, release=release, os=os_name, runtime_library=False,
            collectives_library=False, loaded_version=inf1_driver,
            package_versions={"aws-neuronx-dkms": inf1_driver, "aws-neuronx-runtime-lib": None,
                              "aws-neuronx-collectives": None}, **extra))
    return build_host(root, HostSpec(instance_type=instance_type, release=release, os=os_name, **extra))


def _plan(root: Path, target: str, env: Optional[dict[str, str]] = None, venvs: tuple[str, ...] = ()
          ) -> UpgradePlan:
    from neurondoctor.release_data.catalog import load_catalog

    options = UpgradeOptions(target=target, root=str(root), venvs=venvs, environ=env or cli_env())
    catalog = load_catalog()
    return plan_upgrade(collect_facts(options, catalog), catalog, target)


def _installs(plan: UpgradePlan) -> dict[str, list[str]]:
    return {step.id: [command.render() for command in step.commands] for step in plan.steps}


def _apt_install(versions: dict[str, str], down: bool) -> str:
    return ("sudo apt-get install -y --allow-change-held-packages " + ("--allow-downgrades " if down else "")
            + " ".join(f"'{name}={version}*'" for name, version in versions.items()))


# ---- every pair, planned --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("instance_type", ["trn1.2xlarge", "inf2.xlarge", "trn2.3xlarge"])
def test_every_pair_of_releases_is_planned_with_the_targets_versions(tmp_path: Path, instance_type: str) -> None:
    """Driver, runtime, collectives and tools move to the target's versions; a driver and a runtime the runtime
    notes say work only together move in one step (no check between), any other move is the driver (and its
    reload) before the runtime; apt is told when a version moves down."""
    hosts = {release: _host(tmp_path / release, instance_type, release) for release in RELEASES}
    for start, target in [*PAIRS, LONG_JUMP]:
        plan = _plan(hosts[start], target)
        old, new = stack(start), stack(target)
        assert plan.blocked == [] and plan.not_known == [], (start, target, plan.blocked)
        # 2.26.0/2.26.1 and 2.27.0/2.27.1 have the same host stack: either names it
        assert stack(plan.start.release or "") == stack(start) and plan.to["release"] == target
        moved = {name: new[name] for name in STACK_PACKAGES if old[name] != new[name]}
        installs = _installs(plan)
        down = tuple(int(p) for p in target.split(".")) < tuple(int(p) for p in start.split("."))
        driver = "aws-neuronx-dkms" in moved
        runtime = {name: version for name, version in moved.items() if name != "aws-neuronx-dkms"}
        together = driver and bool(runtime) and (_breaks(new["aws-neuronx-dkms"], old["aws-neuronx-runtime-lib"])
                                                 or _breaks(old["aws-neuronx-dkms"], new["aws-neuronx-runtime-lib"]))
        order = [step.id for step in plan.steps]
        if together:
            assert installs["driver-runtime"] == [_apt_install(moved, down)], (start, target)
            assert order[:2] == ["driver-runtime", "driver-reload"], order
            assert "driver" not in order and "runtime" not in order
            assert "check" not in order[:order.index("driver-reload")]
        else:
            if driver:
                assert installs["driver"] == [_apt_install({"aws-neuronx-dkms": moved["aws-neuronx-dkms"]}, down)]
                assert order.index("driver") < order.index("driver-reload")
            if runtime:
                assert installs["runtime"] == [_apt_install(runtime, down)], (start, target)
                assert not driver or order.index("driver-reload") < order.index("runtime")
        if moved:
            assert order[-1] == "check" and plan.steps[-1].needs == order[:-1]
            undo = [step.undo for step in plan.steps if step.kind == "os-packages"]
            back = {name: old[name] for name in moved}
            assert [command.render() for commands in undo for command in commands] == (
                [_apt_install(back, not down)] if together else
                [_apt_install({name: back[name]}, not down) for name in back if name == "aws-neuronx-dkms"]
                + ([_apt_install({name: back[name] for name in runtime}, not down)] if runtime else []))
        else:
            assert plan.steps == [], (start, target, order)  # 2.26.0 -> 2.26.1, 2.27.0 -> 2.27.1: nothing moves


def _catalog_stack(catalog: ReleaseCatalog, release: str, family: str) -> dict[str, str]:
    """The four host packages a release ships for a family, as AWS's manifest lists them."""
    return {name: entries[0].version for name in STACK_PACKAGES
            if (entries := [entry for entry in catalog.entries(release, name) if family in entry.instances])}


def test_every_pair_of_the_releases_the_data_holds_is_planned(tmp_path: Path, catalog: ReleaseCatalog) -> None:
    """Beyond the fixture table above (2.24.1-2.33.1): each consecutive pair of every whole release the data holds,
    from 2.3.0, on a trn1 with Ubuntu 22.04 and kernel 5.15 (supported by every driver of those releases): the host
    is read as its release's stack and the plan moves it to the target's, never blocked."""
    whole = [release for release in reversed(catalog.release_names) if release not in catalog.partial]
    assert whole[0] == "2.3.0" and len(whole) >= 53
    for start, target in zip(whole, whole[1:]):
        old = _catalog_stack(catalog, start, "trn1")
        root = build_host(tmp_path / start, HostSpec(
            instance_type="trn1.2xlarge", release="2.24.1", os="ubuntu22", kernel="5.15.0-1072-aws",
            package_versions=dict(old), loaded_version=old["aws-neuronx-dkms"]))
        plan = _plan(root, target)
        assert plan.blocked == [], (start, target, plan.blocked)
        assert _catalog_stack(catalog, plan.start.release or "", "trn1") == old, (start, plan.start.release)
        assert plan.to["packages"] == _catalog_stack(catalog, target, "trn1"), (start, target, plan.to)


def test_inf1_keeps_its_driver_line_in_every_pair(tmp_path: Path) -> None:
    """Drivers above 2.24 support Trn and Inf2 only (announce-correction-neuron-driver-support-inf1.rst): an Inf1
    host follows the target's driver while the target lists Inf1, then stays on 2.24.*; its tools move."""
    hosts = {release: _host(tmp_path / release, "inf1.xlarge", release) for release in RELEASES}
    for start, target in [*PAIRS, LONG_JUMP]:
        plan = _plan(hosts[start], target)
        installs = _installs(plan)
        assert plan.blocked == [], (start, target, plan.blocked)
        old_driver = stack(start)["aws-neuronx-dkms"] if start in ("2.24.1", "2.25.0") else "2.24.7.0"
        new_driver = stack(target)["aws-neuronx-dkms"] if target in ("2.24.1", "2.25.0") else (
            "2.24.7.0" if target in ("2.26.0", "2.26.1") else None)
        if new_driver is None:  # the target's driver does not list inf1
            if old_driver.startswith("2.24."):
                assert "driver" not in installs, (start, target, installs)
            else:
                assert installs["driver"] == [_apt_install({"aws-neuronx-dkms": "2.24."}, False)]
                assert plan.to["inf1_driver_line"] == "2.24.*"
        elif new_driver != old_driver:
            assert installs["driver"][0].endswith(f"'aws-neuronx-dkms={new_driver}*'"), (start, target)
        tools = stack(target)["aws-neuronx-tools"]
        if tools != stack(start)["aws-neuronx-tools"]:
            assert installs["runtime"][0].endswith(f"'aws-neuronx-tools={tools}*'"), (start, target, installs)
        assert not any("runtime-lib" in line or "collectives" in line for lines in installs.values()
                       for line in lines)


def test_a_release_known_in_part_is_blocked_with_what_is_not_known(tmp_path: Path, catalog: ReleaseCatalog) -> None:
    """2.34.0 is known from its release notes only (manifests/releases/2.34.0.json): its package versions are not
    in the data, so the plan refuses with the source and says what is not known; --apply changes nothing."""
    root = _host(tmp_path / "host", "trn1.2xlarge", "2.33.1")
    plan = _plan(root, "2.34.0")
    partial = catalog.partial["2.34.0"]
    assert [(item.reason, item.source) for item in plan.blocked] == [
        ("the release data does not list Neuron 2.34.0's aws-neuronx-dkms: its version is not known", partial.source)]
    assert plan.not_known == [f"Neuron 2.34.0 is known in part: {fact} not known" for fact in partial.facts]
    result = run_cli(["upgrade", "--to", "2.34.0", "--root", str(root), "--json"])
    document = json.loads(result.stdout)
    jsonschema.validate(document, SCHEMA)
    assert result.returncode == 1 and document["blocked"][0]["source"] == partial.source
    assert run_cli(["upgrade", "--to", "9.9.9", "--root", str(root)]).returncode == 2  # not a release: usage


def test_an_os_and_an_instance_the_target_does_not_support_are_blocked(tmp_path: Path) -> None:
    """Ubuntu 20.04: the setup pages have no install steps of upgrade's for it; a container (a DLC: the driver is
    the host's, the runtime the image's); Trn3 before Neuron 2.29 (its driver lists trn1, inf2 and trn2 only,
    n2-manifest.json supported_instances)."""
    focal = _plan(_host(tmp_path / "focal", "trn1.2xlarge", "2.31.1", os_name="ubuntu20"), "2.33.0")
    assert any("this is Ubuntu 20.04" in item.reason for item in focal.blocked), focal.blocked
    container = _plan(build_host(tmp_path / "dlc", HostSpec(instance_type="trn1.2xlarge", release="2.31.1",
                                                             container=True)), "2.33.0")
    assert [item.reason.split(":")[0] for item in container.blocked] == ["this is a container"]
    trn3 = _plan(build_host(tmp_path / "trn3", HostSpec(instance_type="trn3.3xlarge", release="2.31.1")), "2.28.1")
    assert [item.reason for item in trn3.blocked] == [
        "Neuron 2.28.1 does not support trn3 (its driver lists trn1, inf2, trn2)"]


# ---- apply and rollback in the simulator --------------------------------------------------------------------------

def upgrade(root: Path, *args: str, env: dict[str, str]) -> tuple[int, dict[str, Any], str]:
    result = run_cli(["upgrade", "--root", str(root), "--json", *args], env=env, timeout=300)
    document = json.loads(result.stdout)
    jsonschema.validate(document, SCHEMA)
    return result.returncode, document, result.stderr


def check(root: Path, release: str, env: dict[str, str], *venvs: str) -> tuple[int, list[tuple[str, str]]]:
    args = ["check", "--root", str(root), "--release", release, "--json"]
    for venv in venvs:
        args += ["--venv", venv]
    result = run_cli(args, env=env, timeout=300)
    report = json.loads(result.stdout)
    return result.returncode, sorted((finding["id"], finding["severity"]) for finding in report["findings"])


def packages(root: Path, rpm: bool) -> dict[str, tuple[str, str]]:
    """Each package's upstream version and dpkg state (the fixture writes some deb versions without the build
    suffix the repository's carry: the same upstream package)."""
    os.environ["ND_SIM_ROOT"] = str(root)
    if rpm:
        return {name: (re.split(r"[-_]", version)[0], "") for name, version in rpm_packages().items()}
    return {stanza["Package"]: (stanza["Version"].split("-")[0], stanza["Status"]) for stanza in dpkg_stanzas()}


def plan_start(document: dict[str, Any]) -> str:
    return str(document["from"]["release"])


def _ran(simulator: HostSimulator, after: int = 0) -> list[str]:
    return [" ".join(argv) for argv in simulator.commands()[after:] if argv[0] not in ("rpm", "chroot")]


CASES = {  # id: (instance type, OS, from, to)
    "trn1-ubuntu24-driver-and-runtime-together": ("trn1.2xlarge", "ubuntu24", "2.30.0", "2.31.0"),
    "inf2-ubuntu22-driver-then-runtime": ("inf2.xlarge", "ubuntu22", "2.28.1", "2.29.0"),
    "trn2-al2023-versionlocked": ("trn2.3xlarge", "al2023", "2.32.0", "2.33.0"),
    "inf1-ubuntu24-driver-line-kept": ("inf1.xlarge", "ubuntu24", "2.26.1", "2.33.1"),
    "trn1-ubuntu24-held-long-jump": ("trn1.2xlarge", "ubuntu24", *LONG_JUMP),
}


@needs_root
@pytest.mark.parametrize("case", list(CASES))
def test_apply_then_a_second_apply_then_rollback(tmp_path: Path, case: str) -> None:
    """After --apply check is clean at the target; a second --apply runs nothing; --rollback puts every package back
    at its version and hold, and check reports what it reported before. Holds: the long jump's packages are held
    by apt-mark (as DLAMIs hold them; apt refuses them without --allow-change-held-packages, the error users met
    following the update page, aws-neuron-sdk pull request 736), the AL2023 ones by dnf versionlock (a lock dnf
    must lift first: https://github.com/aws-neuron/aws-neuron-sdk/issues/400)."""
    instance_type, os_name, start, target = CASES[case]
    rpm = os_name == "al2023"
    held = "held" in case
    states = dict.fromkeys(STACK_PACKAGES, "hold ok installed") if held else {}
    root = _host(tmp_path / "host", instance_type, start, os_name=os_name, dpkg_states=states)
    if rpm:
        as_rpm_host(root)
        if "versionlocked" in case:
            lock = root / VERSIONLOCK
            lock.parent.mkdir(parents=True, exist_ok=True)
            lock.write_text("".join(f"{name}-{version}-dkms.*\n" if name == "aws-neuronx-dkms" else
                                    f"{name}-{version}_ec8cd5e8b-1.*\n" for name, version in stack(start).items()))
    if "long-jump" in case or "versionlocked" in case:  # a second kernel without headers: the driver builds for it
        (root / "lib/modules/6.8.0-1020-aws/modules.dep").parent.mkdir(parents=True)
        (root / "lib/modules/6.8.0-1020-aws/modules.dep").write_text("")
    simulator = HostSimulator(root, tmp_path / "sim")
    env = simulator.env(cli_env())
    before_code, before = check(root, plan_start(upgrade(root, "--to", target, env=env)[1]), env)
    original = packages(root, rpm)
    status = tmp_path / "upgrade.json"

    code, applied, stderr = upgrade(root, "--to", target, "--apply", "--status-file", str(status), env=env)
    assert code == 0 and applied["failed_step"] is None, (stderr, applied)
    ran = _ran(simulator)
    planned = [step["id"] for step in applied["steps"]]
    assert planned[-1] == "check" and all(step["result"] for step in applied["steps"]), applied["steps"]
    if rpm and "versionlocked" in case:
        locked = [name for name in STACK_PACKAGES if stack(start)[name] != stack(target)[name]]
        assert ran[:2] == ["dnf install -y kernel-devel-uname-r = 6.8.0-1020-aws",
                           "dnf versionlock delete " + " ".join(locked)], ran
        assert (root / "lib/modules/6.8.0-1020-aws/build").is_dir()
        assert ran[-1] == "dnf versionlock add " + " ".join(f"{name}-{stack(target)[name]}*" for name in locked)
    if "long-jump" in case:
        assert ran[0] == "apt-get -o DPkg::Lock::Timeout=600 install -y linux-headers-6.8.0-1020-aws", ran
        assert (root / "lib/modules/6.8.0-1020-aws/build").is_dir()
        assert planned.index("headers") < planned.index("driver-runtime")
    after = applied["check"]  # the apply's own closing check at the target
    assert after["release"] == target and after["exit_code"] == 0, after
    assert [finding for finding in after["findings"] if finding["severity"] in ("error", "warning")] == [], after
    now = packages(root, rpm)
    for name, version in stack(target).items():
        if instance_type.startswith("inf1") and name != "aws-neuronx-tools":
            continue
        assert now[name][0].startswith(version), (name, now[name])
        assert not held or now[name][1] == "hold ok installed"  # the hold stays, on the new version
    if not instance_type.startswith("inf1"):
        loaded = (root / "sys/module/neuron/version").read_text().strip()
        assert loaded == stack(target)["aws-neuronx-dkms"]
    written = json.loads(status.read_text())
    assert written["schema"] == "neurondoctor.status/1" and written["command"] == "upgrade"
    assert written["from"]["packages"]["aws-neuronx-tools"] == stack(start)["aws-neuronx-tools"]

    count = len(simulator.commands())
    code, again, _ = upgrade(root, "--to", target, "--apply", "--status-file", str(status), env=env)
    assert code == 0 and [step["id"] for step in again["steps"]] == [] and _ran(simulator, count) == []
    assert json.loads(status.read_text())["from"] == written["from"]  # the first apply's `from` is kept

    other = run_cli(["upgrade", "--root", str(root), "--to", "2.20.0", "--rollback", "--status-file", str(status)],
                    env=env)
    assert other.returncode == 2 and f"records an upgrade to {target}, not to 2.20.0" in other.stderr
    code, rolled, stderr = upgrade(root, "--to", target, "--rollback", "--status-file", str(status), env=env)
    assert code == 0 and rolled["failed_step"] is None, (stderr, rolled)
    done = [step["id"] for step in applied["steps"] if step["result"] == "ok" and step["kind"] != "verify"]
    assert rolled["undone"] == list(reversed(done)) and done, (rolled["undone"], applied["steps"])
    # everything is back but the headers, which stay (they change nothing that runs)
    assert {name: state for name, state in packages(root, rpm).items()
            if not name.startswith(("linux-headers-", "kernel-devel"))} == original
    if rpm and "versionlocked" in case:
        assert sorted((root / VERSIONLOCK).read_text().split()) == sorted(
            f"{name}-{stack(start)[name]}*" for name in locked) + sorted(
            f"{name}-{version}-dkms.*" if name == "aws-neuronx-dkms" else f"{name}-{version}_ec8cd5e8b-1.*"
            for name, version in stack(start).items() if name not in locked)
    # the rollback's own check, against the release the host had, says what it said before
    assert rolled["check"]["release"] == plan_start(applied) and (rolled["check"]["exit_code"], sorted(
        (finding["id"], finding["severity"]) for finding in rolled["check"]["findings"])) == (before_code, before)
    assert json.loads(status.read_text())["rolled_back"] is True
    again = run_cli(["upgrade", "--root", str(root), "--to", target, "--rollback", "--status-file", str(status)],
                    env=env)
    assert again.returncode == 2 and "already rolled back" in again.stderr  # nothing to undo


@needs_root
def test_a_slurm_node_is_drained_first_and_resumed_last_and_on_rollback(tmp_path: Path) -> None:
    """slurm.conf makes it a Slurm node (its name from /etc/hostname); a process of the node's own Slurm job holds a
    NeuronCore: --apply refuses without --stop-holders and changes nothing; with it the node is drained, the job's
    process stopped, the stack moved, checked, and the node resumed. The rollback drains it, puts the stack back
    and resumes it."""
    root = _host(tmp_path / "host", "trn1.2xlarge", "2.31.1", holders=[
        Holder(5151, "python3", "python3 train.py", devices=(0,), parent=5150),
        Holder(5150, "slurmstepd", "slurmstepd: [7312.0]")])
    (root / "etc/slurm").mkdir(parents=True)
    (root / "etc/slurm/slurm.conf").write_text("ClusterName=trn\nNodeName=trn1-node-3 CPUs=8\n")
    (root / "etc/hostname").write_text("trn1-node-3\n")
    simulator = HostSimulator(root, tmp_path / "sim")
    env = simulator.env(cli_env())
    status = tmp_path / "upgrade.json"
    tree = sorted(str(path) for path in root.rglob("*"))

    code, plan, _ = upgrade(root, "--to", "2.33.0", env=env)
    assert code == 0 and plan["status_file"] is None and _ran(simulator) == []  # a plan writes nothing
    assert sorted(str(path) for path in root.rglob("*")) == tree and not status.exists()
    holders = next(step for step in plan["steps"] if step["id"] == "stop-holders")
    assert "5151 (python3) of Slurm job 7312" in holders["why"] and holders["command"] == ["sudo kill 5151"]
    assert "stopped processes are not started again" in " ".join(plan["cannot_undo"])

    code, refused, _ = upgrade(root, "--to", "2.33.0", "--apply", "--status-file", str(status), env=env)
    assert code == 1 and refused["failed_step"].startswith("stop-holders: ") and _ran(simulator) == []
    assert "--stop-holders" in refused["next_step"] and not status.exists()

    code, applied, stderr = upgrade(root, "--to", "2.33.0", "--apply", "--stop-holders", "--status-file",
                                    str(status), env=env)
    assert code == 0, (stderr, applied)
    ran = _ran(simulator)
    assert ran[:2] == ["scontrol update NodeName=trn1-node-3 State=DRAIN Reason=neurondoctor upgrade", "kill 5151"]
    drain = next(step for step in applied["steps"] if step["id"] == "drain")
    assert drain["command"] == [  # `=` in a word is quoted (no word reads as an assignment)
        "sudo scontrol update 'NodeName=trn1-node-3' 'State=DRAIN' 'Reason=neurondoctor upgrade'"]
    assert ran[-1] == "scontrol update NodeName=trn1-node-3 State=RESUME", ran
    assert (root / SLURM_STATE).read_text() == "trn1-node-3 IDLE\n"
    assert applied["check"]["exit_code"] == 0

    count = len(simulator.commands())  # nothing left to change: the node is not drained again
    code, again, _ = upgrade(root, "--to", "2.33.0", "--apply", "--status-file", str(status), env=env)
    assert code == 0 and again["steps"] == [] and _ran(simulator, count) == []
    code, rolled, _ = upgrade(root, "--to", "2.33.0", "--rollback", "--status-file", str(status), env=env)
    assert code == 0, rolled
    ran = _ran(simulator, count)
    assert ran[0].startswith("scontrol update NodeName=trn1-node-3 State=DRAIN") and ran[-1].endswith(
        "State=RESUME"), ran
    assert any("aws-neuronx-dkms=2.29.0.0*" in line for line in ran)
    assert (root / "sys/module/neuron/version").read_text().strip() == "2.29.0.0"


# ---- half-done upgrades from the trackers -------------------------------------------------------------------------

@needs_root
def test_a_runtime_upgraded_under_the_old_driver_is_repaired(tmp_path: Path) -> None:
    """The runtime moved and the driver did not: nrt_init refuses the driver (`This Neuron Runtime (compatibility
    id: 6) is not compatible with the installed aws-neuron-dkms package`,
    https://github.com/aws-neuron/aws-neuron-sdk/issues/655). Here 2.31.1's runtime and collectives over 2.28.1's
    driver, which runtime 2.32+ cannot initialise on (runtime.rst 2.30): the plan moves the driver to 2.31.1's and
    reloads it; the packages already at 2.31.1 are left; after the apply check is clean."""
    target = stack("2.31.1")
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.2xlarge", release="2.28.1", package_versions={
        "aws-neuronx-runtime-lib": target["aws-neuronx-runtime-lib"] + "-ec8cd5e8b",
        "aws-neuronx-collectives": target["aws-neuronx-collectives"]}))
    simulator = HostSimulator(root, tmp_path / "sim")
    env = simulator.env(cli_env())
    assert check(root, "2.31.1", env)[0] == 1  # the half-done host is unhealthy
    code, plan, _ = upgrade(root, "--to", "2.31.1", env=env)
    # the driver and the runtime the host has do not work together: the driver moves with the tools in one step
    assert [step["id"] for step in plan["steps"]] == ["driver-runtime", "driver-reload", "check"]
    assert plan["steps"][0]["command"] == [_apt_install({"aws-neuronx-dkms": target["aws-neuronx-dkms"],
                                                         "aws-neuronx-tools": target["aws-neuronx-tools"]}, False)]
    assert "runtime 2.32 is not backward compatible with driver 2.26 or older" in plan["steps"][0]["why"]
    code, applied, stderr = upgrade(root, "--to", "2.31.1", "--apply", "--status-file", str(tmp_path / "s.json"),
                                    env=env)
    assert code == 0, (stderr, applied)
    assert check(root, "2.31.1", env)[0] == 0


@needs_root
def test_a_new_driver_package_under_the_old_loaded_module_is_reloaded(tmp_path: Path) -> None:
    """The driver package was upgraded but the old module kept running (`modinfo neuron` still showed the old
    version after the update, https://github.com/aws-neuron/aws-neuron-sdk/issues/660): the plan is the reload
    alone, and after it the loaded driver is the installed one."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.2xlarge", release="2.31.1",
                                                  loaded_version="2.26.10.0"))
    simulator = HostSimulator(root, tmp_path / "sim")
    env = simulator.env(cli_env())
    code, plan, _ = upgrade(root, "--to", "2.31.1", env=env)
    assert [(step["id"], step["command"]) for step in plan["steps"]] == [
        ("driver-reload", ["sudo rmmod neuron", "sudo modprobe neuron"]), ("check", plan["steps"][1]["command"])]
    code, applied, stderr = upgrade(root, "--to", "2.31.1", "--apply", "--status-file", str(tmp_path / "s.json"),
                                    env=env)
    assert code == 0, (stderr, applied)
    assert _ran(simulator) == ["rmmod neuron", "modprobe neuron"]
    assert (root / "sys/module/neuron/version").read_text().strip() == "2.29.0.0"


# ---- environments -------------------------------------------------------------------------------------------------

def _image_venv(venvs: VenvFactory, root: Path, relative: str, release: str) -> Path:
    return image_stack_venv(venvs, root, relative, release, PY)


@needs_root
def test_environments_move_in_place_or_beside(tmp_path: Path, venvs: VenvFactory, catalog: ReleaseCatalog) -> None:
    """Two environments of a 2.31.1 host moving to 2.33.0: a plain one whose PyTorch/XLA line continues on its
    Python gets 2.33.0's pins in place (pip, recorded by the simulator), and its old pins back on rollback; a
    guarded one (`venv create`'s marker) keeps its pins, so a new guarded environment is built beside it, left to
    the instance under --root. The rollback finds the environments in the status file."""
    from neurondoctor.actions.venv.plan import plan_venv

    root = _host(tmp_path / "host", "trn1.2xlarge", "2.31.1")
    plain = _image_venv(venvs, root, "opt/aws_neuronx_venv_pytorch", "2.31.1")
    guarded = _image_venv(venvs, root, "home/ubuntu/guarded", "2.31.1")
    (guarded / "neurondoctor.json").write_text(json.dumps({"schema": "neurondoctor.venv/1", "release": "2.31.1"}))
    simulator = HostSimulator(root, tmp_path / "sim")
    env = simulator.env(cli_env())
    status = tmp_path / "upgrade.json"
    args = ["--to", "2.33.0", "--venv", str(plain), "--venv", str(guarded)]
    before = check(root, "2.31.1", env, str(plain))
    code, plan, _ = upgrade(root, *args, env=env)
    steps = {step["id"]: step for step in plan["steps"]}
    pins = [package.requirement for package in plan_venv(catalog, "2.33.0", PY).packages]
    # the commands run in `chroot ROOT`: each environment by its path inside the root
    in_place = steps["environment:/opt/aws_neuronx_venv_pytorch"]
    assert in_place["command"] == ["/opt/aws_neuronx_venv_pytorch/bin/python -m pip install --extra-index-url "
                                   "https://pip.repos.neuron.amazonaws.com " + " ".join(f"'{pin}'" for pin in pins)]
    assert in_place["undo"][0].endswith("'neuronx-cc==2.26.6360.0+bd4c5f4b' 'torch==2.9.0' "
                                        "'torch-neuronx==2.9.0.2.15.32035' 'torch-xla==2.9.0'"), in_place["undo"]
    assert in_place["undo"][1] == "/opt/aws_neuronx_venv_pytorch/bin/python -m pip uninstall -y torchvision"
    beside = steps["environment:/home/ubuntu/guarded"]
    assert beside["command"][0].endswith("venv create /home/ubuntu/guarded-2.33.0 --release 2.33.0")
    assert beside["deferred"].startswith("an environment records its interpreter's path")

    code, applied, stderr = upgrade(root, *args, "--apply", "--status-file", str(status), env=env)
    assert code == 0, (stderr, applied)
    pip = [argv for argv in simulator.commands() if argv[0] == "pip"]
    assert len(pip) == 1 and [word for word in pip[0] if "==" in word] == pins
    assert {step["id"]: step["result"] for step in applied["steps"]}["environment:/home/ubuntu/guarded"] == "deferred"
    code, after = check(root, "2.33.0", env, str(plain))  # clean: at most news (2.33.1 fixes a 2.33.0 runtime bug)
    assert code == 0 and [severity for _, severity in after if severity != "info"] == [], after
    # the rollback finds the environments the status file records, without --venv
    code, rolled, _ = upgrade(root, "--to", "2.33.0", "--rollback", "--status-file", str(status), env=env)
    assert code == 0 and "environment:/opt/aws_neuronx_venv_pytorch" in rolled["undone"], rolled
    pip = [argv for argv in simulator.commands() if argv[0] == "pip"]
    assert [argv[1:3] for argv in pip[1:]] == [["install", "--no-deps"], ["uninstall", "-y"]]
    assert pip[2][3:] == ["torchvision"]  # 2.33.0's pins add torchvision; the rollback takes it away again
    assert check(root, "2.31.1", env, str(plain)) == before


def test_the_json_document_has_every_field_the_contract_names(tmp_path: Path) -> None:
    root = _host(tmp_path / "host", "trn1.2xlarge", "2.31.1")
    plan = _plan(root, "2.33.0")
    document = upgrade_document(UpgradeOptions(target="2.33.0", root=str(root)), UpgradeOutcome(plan))
    jsonschema.validate(document, SCHEMA)
    assert {key for step in document["steps"] for key in step} >= {"id", "kind", "command", "why", "needs", "undo"}
    assert document["from"]["packages"] == {name: version for name, version in stack("2.31.1").items()}


def test_an_environment_on_a_python_the_target_dropped_is_built_again_beside(tmp_path: Path, venvs: VenvFactory
                                                                             ) -> None:
    """A 2.28.1 environment on Python 3.10 moving to 2.33.0, whose torch-neuronx supports 3.11-3.13 only
    (n2-manifest.json supported_python_versions): the step builds a new guarded environment beside it on the
    host's python3.11, the old one kept. The printed line runs (here with --dry-run: the build itself is
    tests/test_venv_create.py's)."""
    from tests.wheelhouse import relabel_python

    root = _host(tmp_path / "host", "trn1.2xlarge", "2.31.1")
    old = _image_venv(venvs, root, "opt/old", "2.28.1")
    relabel_python(old, "3.10")
    plan = _plan(root, "2.33.0", venvs=(str(old),))
    step = next(step for step in plan.steps if step.id == "environment:/opt/old")
    assert "Python 3.10 is not supported by torch-neuronx" in step.why and plan.blocked == []
    assert step.undo == [] and step.undo_note.startswith("/opt/old is not touched")
    words = step.commands[0].argv
    assert words is not None and words[3:] == ["venv", "create", "/opt/old-2.33.0", "--release", "2.33.0",
                                               "--python", "python3.11"]
    result = run_cli([*words[3:-5], str(tmp_path / "beside"), *words[-4:], "--dry-run"])
    assert result.returncode == 0 and "torch-neuronx==2.9.0.2.15.32035" in result.stdout, result.stderr
    # Only Python 3.14 on the host: PyTorch/XLA 2.9 has no wheels for it (3.11-3.13), TorchNeuron has (3.12-3.14)
    # and runs on Trn2/Trn3 only (the 2.33.0 release data's torch-neuronx entries): a Trn1 is blocked for the
    # environment, a Trn2 moves it to a TorchNeuron environment beside.
    (root / "usr/bin/python3.11").rename(root / "usr/bin/python3.14")
    blocked = _plan(root, "2.33.0", venvs=(str(old),))
    assert len(blocked.blocked) == 1 and blocked.blocked[0].reason.startswith("/opt/old: Python 3.10 is not supported")
    assert blocked.blocked[0].reason.endswith("; no interpreter on this host can have Neuron 2.33.0")
    trn2 = build_host(tmp_path / "trn2", HostSpec(instance_type="trn2.3xlarge", release="2.31.1"))
    (trn2 / "opt").mkdir(exist_ok=True)
    (root / "opt/old").rename(trn2 / "opt/old")
    (trn2 / "usr/bin").mkdir(parents=True, exist_ok=True)
    (root / "usr/bin/python3.14").rename(trn2 / "usr/bin/python3.14")
    native = _plan(trn2, "2.33.0", venvs=(str(trn2 / "opt/old"),))
    step = next(step for step in native.steps if step.id == "environment:/opt/old")
    assert native.blocked == [] and step.commands[0].argv is not None
    assert step.commands[0].argv[3:] == ["venv", "create", "/opt/old-2.33.0", "--release", "2.33.0", "--python",
                                         "python3.14", "--framework", "pytorch-native"]



@needs_root
def test_a_failed_step_stops_the_run_and_the_next_apply_continues_it(tmp_path: Path) -> None:
    """Another apt holds the dpkg lock when the runtime step runs (unattended-upgrades): the run stops there with
    the step, the command and apt's line, what to do and which step was next; nothing after it ran. The next
    --apply plans from the host: the driver is done, so only the runtime runs, and the status file keeps the first
    `from`; the rollback then undoes both."""
    root = _host(tmp_path / "host", "inf2.xlarge", "2.28.1")
    simulator = HostSimulator(root, tmp_path / "sim")
    locked = tmp_path / "locked"
    locked.mkdir()
    marker = tmp_path / "lock-held"
    marker.write_text("")
    (locked / "apt-get").write_text(  # fails while the marker exists and the runtime is asked for
        f"#!/bin/sh\ncase \"$*\" in *aws-neuronx-runtime-lib*) if [ -e {marker} ]; then echo 'E: Could not get lock "
        "/var/lib/dpkg/lock-frontend. It is held by process 2841 (unattended-upgr)' >&2; exit 100; fi;; esac\n"
        f"exec {simulator.bin}/apt-get \"$@\"\n")
    (locked / "apt-get").chmod(0o755)
    env = simulator.env(cli_env())
    env["PATH"] = f"{locked}:{env['PATH']}"
    status = tmp_path / "upgrade.json"
    result = run_cli(["upgrade", "--root", str(root), "--to", "2.29.0", "--apply", "--status-file", str(status)],
                     env=env, timeout=300)
    assert result.returncode == 1, result.stdout
    lines = result.stdout.splitlines()
    stopped = next(line for line in lines if line.startswith("Stopped at "))
    assert stopped.startswith("Stopped at runtime: `sudo apt-get install -y --allow-change-held-packages") and \
        stopped.endswith("exited with status 100: E: Could not get lock /var/lib/dpkg/lock-frontend. It is held by "
                         "process 2841 (unattended-upgr)"), stopped
    following = lines[lines.index(stopped) + 1]
    assert following.startswith("Next: another package manager holds the dpkg lock") and following.endswith(
        "then run upgrade --apply again (the steps already done are skipped), or --rollback to go back (the next "
        "step is check)"), following
    written = json.loads(status.read_text())
    assert written["state"] == "unhealthy" and written["failed_step"] == stopped.removeprefix("Stopped at ")
    assert [(step["name"], step["status"]) for step in written["steps"]] == [  # the package's scripts reloaded it
        ("driver", "ok"), ("driver-reload", "unchanged"), ("runtime", "failed")]

    marker.unlink()
    code, again, stderr = upgrade(root, "--to", "2.29.0", "--apply", "--status-file", str(status), env=env)
    assert code == 0 and [step["id"] for step in again["steps"]] == ["runtime", "check"], (stderr, again)
    continued = json.loads(status.read_text())
    assert continued["from"] == written["from"] and continued["from"]["packages"]["aws-neuronx-dkms"] == "2.26.10.0"
    code, rolled, _ = upgrade(root, "--to", "2.29.0", "--rollback", "--status-file", str(status), env=env)
    assert code == 0 and rolled["undone"] == ["runtime", "driver"], rolled
    assert {name: version for name, (version, _) in packages(root, False).items()
            if name in STACK_PACKAGES} == stack("2.28.1")


def test_apply_and_rollback_as_a_user_are_refused(tmp_path: Path) -> None:
    import shutil
    import subprocess

    root = _host(tmp_path / "host", "trn1.2xlarge", "2.31.1")
    for mode in ("--apply", "--rollback"):
        argv = [sys.executable, "-m", "neurondoctor", "upgrade", "--to", "2.33.0", "--root", str(root), mode]
        if os.geteuid() == 0:
            if shutil.which("setpriv") is None:
                pytest.skip("needs setpriv to run as another user")
            argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120, env=cli_env(), cwd=str(REPO))
        assert done.returncode == 2 and done.stdout == "", done.stderr
        assert done.stderr.startswith("error: --apply and --rollback install OS packages and reload the driver: "
                                      "run them as root")



def test_an_ecs_node_is_moved_by_its_image_not_by_packages(tmp_path: Path) -> None:
    """The ECS-optimized Neuron AMI deletes the Neuron yum repository at the end of its build ("disable neuron
    package upgrades by deleting the yum repo", amazon-ecs-ami enable-ecs-agent-inferentia-support.sh) and a node
    launched again gets the image's packages: the plan refuses and names the image's next release."""
    root = build_host(tmp_path / "ecs", HostSpec(instance_type="inf2.xlarge", release="2.31.1", os="al2023",
                                                 node="ecs"))
    as_rpm_host(root)
    simulator = HostSimulator(root, tmp_path / "sim")
    code, plan, _ = upgrade(root, "--to", "2.33.0", env=simulator.env(cli_env()))
    assert code == 1, plan
    (blocked,) = plan["blocked"]
    assert blocked["reason"].startswith("this is an ECS node (ECS optimized AMI): its Neuron packages are its image's")
    assert "newer ECS optimized Neuron AMI" in blocked["reason"] and "amazon-ecs-ami" in blocked["source"]


def test_near_miss_a_host_with_the_container_hook_moves_its_driver_tools_and_hook(tmp_path: Path) -> None:
    """A self-managed container host (the OCI hook, no runtime: containers/tutorials/tutorial-oci-hook) installs its
    own packages: the plan moves the driver, the tools and the hook to 2.33.0's versions with dnf and installs no
    runtime or collectives on it."""
    root = build_host(tmp_path / "hook", HostSpec(
        instance_type="inf2.xlarge", release="2.31.1", os="al2023", runtime_library=False,
        collectives_library=False, extra_packages={"aws-neuronx-oci-hook": "2.17.30.0"},
        package_versions={"aws-neuronx-runtime-lib": None, "aws-neuronx-collectives": None}))
    as_rpm_host(root)
    simulator = HostSimulator(root, tmp_path / "sim")  # the rpm query of the --root goes to the simulator's rpm
    code, plan, _ = upgrade(root, "--to", "2.33.0", env=simulator.env(cli_env()))
    assert code == 0 and plan["blocked"] == [] and plan["to"]["packages"] == {
        "aws-neuronx-dkms": "2.31.7.0", "aws-neuronx-tools": "2.33.38.0", "aws-neuronx-oci-hook": "2.19.65.0"}
    installs = {step["id"]: step["command"] for step in plan["steps"]}
    assert installs["driver"] == ["sudo dnf install -y 'aws-neuronx-dkms-2.31.7.0*'"]
    assert installs["runtime"] == [
        "sudo dnf install -y 'aws-neuronx-tools-2.33.38.0*' 'aws-neuronx-oci-hook-2.19.65.0*'"]
