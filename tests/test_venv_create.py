"""`venv create` against a real local package index on 127.0.0.1: uv and pip builds, the guard, atomicity."""

from __future__ import annotations

import ensurepip
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from neurondoctor.rules.fix_plan import split_alternatives
from tests.conftest import REPO, check_json, cli_env, findings_by_id, run_cli
from tests.fixes.harness import bad_findings, run_verbatim
from tests.host_fixture import HostSpec, build_host
from tests.local_index import build_index, serve, served_index
from tests.neuron_envs import HEALTHY_STACKS, cuda_torch_wheels, simple_wheel, stack_venv, stack_wheels, torch_wheel
from tests.wheelhouse import VenvFactory, WheelSpec, install_image_interpreter, relabel_python

RELEASE = "2.31.1"


def release_wheels() -> list[WheelSpec]:
    """The packages of 2.31.1 with their real names, versions and pins, plus what the refusals need."""
    stack = HEALTHY_STACKS[RELEASE]
    return [
        simple_wheel("torch-neuronx", stack.torch_neuronx, ("torch==2.9.*", "torch-xla==2.9.*",
                                                            "libneuronxla<3.0,>=2.2")),
        simple_wheel("neuronx-cc", "2.26.6360.0"),
        simple_wheel("libneuronxla", stack.libneuronxla),
        simple_wheel("libneuronxla", "2.2.99999.0"),  # a newer 2.2 a loose pin would take
        torch_wheel("2.9.0"),
        torch_wheel("2.10.0"),
        simple_wheel("torch-xla", "2.9.0", ("torch==2.9.0",)),
        simple_wheel("torchvision", "0.24.0", ("torch==2.9.0",)),
        simple_wheel("needs-newer-torch", "1.0", ("torch>=2.10",)),
        *[spec for spec in stack_wheels(HEALTHY_STACKS["2.29.1"])  # an environment of a 2.29.1 host's release
          if spec.name in ("torch-neuronx", "neuronx-cc", "libneuronxla", "protobuf")],
    ]


def bundled_pip() -> Path:
    bundled = Path(ensurepip.__file__).parent / "_bundled"
    return next(bundled.glob("pip-*.whl"))


@pytest.fixture(scope="module")
def index_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with served_index(tmp_path_factory.mktemp("index"), release_wheels(), (bundled_pip(),)) as url:
        yield url


def isolated_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """No user/global pip configuration of the machine running the tests: only the venv's own guard counts."""
    env = cli_env({"HOME": str(tmp_path / "home"), "XDG_CONFIG_DIRS": str(tmp_path / "xdg"), **extra})
    for variable in ("PIP_FIND_LINKS", "PIP_EXTRA_INDEX_URL", "PIP_INDEX_URL", "PIP_CONSTRAINT", "UV_CONSTRAINT"):
        env.pop(variable, None)
    return env


def create(target: Path, index_url: str, installer: str, env: dict[str, str], *extra: str
           ) -> subprocess.CompletedProcess[str]:
    return run_cli(["venv", "create", str(target), "--release", RELEASE, "--python", sys.executable,
                    "--installer", installer, "--index-url", index_url, *extra], env=env, timeout=600)


def installed_torch(venv: Path) -> str:
    site = next(venv.glob("lib/python*/site-packages"))
    return next(site.glob("torch-*.dist-info")).name


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_create_builds_a_guarded_env_that_passes_check(index_url: str, tmp_path: Path, installer: str) -> None:
    env = isolated_env(tmp_path)
    target = tmp_path / f"neuron-{installer}"
    result = create(target, index_url, installer, env)
    assert result.returncode == 0, result.stderr + result.stdout
    assert "[✗]" not in result.stdout and "0 errors." in result.stdout
    assert installed_torch(target) == "torch-2.9.0.dist-info"
    assert (target / "pip.conf").read_text().count(f"constraint = {target}/neurondoctor-constraints.txt") == 1
    assert "torch==2.9.0" in (target / "neurondoctor-constraints.txt").read_text().splitlines()
    assert not list(tmp_path.glob(".neuron-*"))  # no temporary sibling left behind
    code, report, _ = check_json(["--python", str(target / "bin" / "python")], env=env)
    assert code == 0 and report["environments"][0]["release"] == RELEASE
    assert report["facts"]["environments"][0]["neurondoctor_venv"]["release"] == RELEASE


def test_guard_refuses_to_move_torch(index_url: str, tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    target = tmp_path / "guarded"
    assert create(target, index_url, "pip", env).returncode == 0
    python = str(target / "bin" / "python")
    other = subprocess.run([python, "-m", "pip", "install", "--index-url", index_url, "torch==2.10.0"],
                           capture_output=True, text=True, env=env, timeout=300)
    assert other.returncode != 0 and "torch==2.9.0" in other.stdout + other.stderr
    newer = subprocess.run([python, "-m", "pip", "install", "--index-url", index_url, "needs-newer-torch"],
                           capture_output=True, text=True, env=env, timeout=300)
    assert newer.returncode != 0
    assert installed_torch(target) == "torch-2.9.0.dist-info"
    activated = subprocess.run(["bash", "-c", f". {target}/bin/activate && echo $UV_CONSTRAINT && deactivate && "
                                "echo after=${UV_CONSTRAINT:-unset}"], capture_output=True, text=True, env=env)
    assert activated.stdout.splitlines() == [f"{target}/neurondoctor-constraints.txt", "after=unset"]


def test_unsupported_python_is_refused_before_anything_exists(index_url: str, tmp_path: Path) -> None:
    python310 = next(iter(sorted(Path("/root/.pyenv/versions").glob("3.10*/bin/python3.10"))), None)
    if python310 is None:
        pytest.skip("needs a Python 3.10 interpreter")
    target = tmp_path / "py310"
    result = run_cli(["venv", "create", str(target), "--release", RELEASE, "--python", str(python310),
                      "--index-url", index_url], env=isolated_env(tmp_path))
    assert result.returncode == 2 and "Python 3.10 is not supported" in result.stderr
    assert not target.exists() and not list(tmp_path.glob(".py310*"))


def test_failing_install_leaves_nothing(index_url: str, tmp_path: Path) -> None:
    target = tmp_path / "missing"
    result = run_cli(["venv", "create", str(target), "--release", "2.30.0", "--python", sys.executable,
                      "--installer", "uv", "--index-url", index_url], env=isolated_env(tmp_path), timeout=600)
    assert result.returncode == 1 and "installing the packages failed" in result.stderr
    assert not target.exists() and not list(tmp_path.glob(".missing*"))


def test_failed_force_rebuild_keeps_the_existing_env(index_url: str, tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    target = tmp_path / "keep"
    assert create(target, index_url, "uv", env).returncode == 0
    before = sorted(path.name for path in target.iterdir())
    failed = run_cli(["venv", "create", str(target), "--release", "2.30.0", "--python", sys.executable,
                      "--installer", "uv", "--index-url", index_url, "--force"], env=env, timeout=600)
    assert failed.returncode == 1
    assert sorted(path.name for path in target.iterdir()) == before
    assert installed_torch(target) == "torch-2.9.0.dist-info"
    assert not list(tmp_path.glob(".keep*"))
    # One line and a next step: no "done", no installer command, no cause chain; those under -v
    errors = [line for line in failed.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith("error: installing the packages failed: ")
    assert f"Nothing was left behind at {target}; next: run it again with -v" in errors[0]
    assert "done in" not in failed.stderr and "stopped after" in failed.stderr
    assert failed.stderr.strip().splitlines()[-1] == errors[0] and "pip install" not in failed.stderr
    verbose = run_cli(["venv", "create", str(target), "--release", "2.30.0", "--python", sys.executable,
                       "--installer", "uv", "--index-url", index_url, "--force", "-v"], env=env, timeout=600)
    assert verbose.returncode == 1 and "pip install" in verbose.stderr  # the installer's command, under -v
    unforced = create(target, index_url, "uv", env)
    assert unforced.returncode == 2 and f"{target} is already an environment" in unforced.stderr
    assert "next: pass --force to replace it once the new one is built" in unforced.stderr


def test_dry_run_prints_the_plan(tmp_path: Path) -> None:
    result = run_cli(["venv", "create", str(tmp_path / "plan"), "--release", "2.32.0", "--python", sys.executable,
                      "--installer", "pip", "--dry-run"])
    assert result.returncode == 0
    assert "torch-neuronx==2.9.0.2.15.32035" in result.stdout and "installed from 2.31.1" in result.stdout
    assert "extra-index-url  https://pip.repos.neuron.amazonaws.com" in result.stdout
    assert "extra-index-url  https://download.pytorch.org/whl/cpu" in result.stdout  # torch as the CPU build
    assert not (tmp_path / "plan").exists()


def test_check_reports_a_broken_guard(index_url: str, tmp_path: Path) -> None:
    env = isolated_env(tmp_path)
    target = tmp_path / "bypassed"
    assert create(target, index_url, "uv", env).returncode == 0
    from neurondoctor.actions.venv.builder import find_uv

    uv = find_uv()
    assert uv is not None
    # uv run from outside the activated environment does not see UV_CONSTRAINT: the documented gap.
    subprocess.run([uv, "pip", "install", "--python", str(target / "bin" / "python"), "--index-url", index_url,
                    "torch==2.10.0"], check=True, capture_output=True, env=env, timeout=300)
    code, report, _ = check_json(["--venv", str(target)], env=env)
    moved = next(finding for finding in report["findings"] if finding["id"] == "ND-PIN-004")
    assert "torch 2.10.0 (pinned 2.9.0)" in moved["title"]
    assert moved["fix"] == [f"{target}/bin/python -m pip install 'torch==2.9.0'"]
    assert code == 1
    run_verbatim(moved["fix"][0], env)  # the guard's pip.conf names the index and the CPU build wins
    code, report, _ = check_json(["--venv", str(target)], env=env)
    assert (code, bad_findings(report)) == (0, set())
    (target / "neurondoctor-constraints.txt").unlink()
    _, report, _ = check_json(["--venv", str(target)], env=env)
    incomplete = findings_by_id(report)["ND-PIP-004"][0]
    assert incomplete["fix"] == [f"neurondoctor venv create {target} --release {RELEASE} --force"]
    run_printed_venv_create(incomplete["fix"][0], index_url, tmp_path, Path("/"), target,
                            "--python", sys.executable)


def interrupt_a_build(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, name: str, signum: int,
                      installer: str) -> subprocess.Popen[str]:
    """Start `venv create` against an index that stalls on torch, wait until the install runs in its temporary
    sibling, send `signum`, and return the finished process."""
    root = tmp_path_factory.mktemp(f"slow-index-{name}")
    build_index(root, release_wheels(), [bundled_pip()])
    with serve(root / "index", stall="files/torch-2.9.0", stall_seconds=30) as base:
        process = subprocess.Popen(
            [sys.executable, "-m", "neurondoctor", "venv", "create", str(tmp_path / name), "--release", RELEASE,
             "--python", sys.executable, "--installer", installer, "--index-url", f"{base}/simple"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=isolated_env(tmp_path), cwd=str(REPO))
        assert process.stderr is not None
        for line in process.stderr:
            if "installing" in line:
                break
        assert list(tmp_path.glob(f".{name}.neurondoctor-*")), "the build happens in a temporary sibling"
        process.send_signal(signum)
        process.communicate(timeout=60)
    return process


def test_ctrl_c_mid_install_leaves_no_half_venv(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> None:
    import signal

    process = interrupt_a_build(tmp_path_factory, tmp_path, "interrupted", signal.SIGINT, "pip")
    assert process.returncode == 130
    assert not (tmp_path / "interrupted").exists() and not list(tmp_path.glob(".interrupted*"))


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_air_gapped_build_from_find_links(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path,
                                          installer: str) -> None:
    from tests.wheelhouse import build_wheel

    wheels = tmp_path_factory.mktemp("wheels-dir")
    for spec in release_wheels():
        built = build_wheel(spec, tmp_path / "build")
        (wheels / built.name).write_bytes(built.read_bytes())
    (wheels / bundled_pip().name).write_bytes(bundled_pip().read_bytes())
    target = tmp_path / f"airgapped-{installer}"
    result = run_cli(["venv", "create", str(target), "--release", RELEASE, "--python", sys.executable,
                      "--installer", installer, "--find-links", str(wheels)], env=isolated_env(tmp_path), timeout=600)
    assert result.returncode == 0, result.stderr
    assert installed_torch(target) == "torch-2.9.0.dist-info"
    conf = (target / "pip.conf").read_text()
    assert f"find-links = {wheels}" in conf and "no-index = true" in conf
    assert "] creating the environment with" in result.stderr  # plain progress lines when not on a terminal


def run_printed_venv_create(line: str, index_url: str, tmp_path: Path, root: Path, built: Path, *extra: str) -> None:
    """Run a printed `neurondoctor venv create …` pointed at the local index (and any `extra` options); the
    environment it builds checks clean but for the info the test's mirror causes."""
    argv = [*shlex.split(line)[1:], *extra, "--installer", "pip", "--index-url", index_url]
    result = run_cli(argv, env=isolated_env(tmp_path), timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    rebuilt = check_json(["--root", str(root), "--venv", str(built)])[1]["findings"]
    assert [item["id"] for item in rebuilt if item["severity"] != "info"] == []


def test_an_empty_venv_on_a_python_the_release_has_no_wheels_for(index_url: str, tmp_path: Path,
                                                                    venvs: VenvFactory) -> None:
    """A venv whose `pip install neuronx-cc torch-neuronx` failed (`Could not find a version that satisfies the
    requirement`) holds nothing but what venv leaves: judged against the host's release anyway.
    The printed `venv create` is run, and the environment it builds is clean."""
    root = build_host(tmp_path / "host", HostSpec(release=RELEASE))
    venv = venvs.create("py310-nothing-installed")
    relabel_python(venv, "3.10")  # copied from a host whose python3 is 3.10 (Ubuntu 22.04)
    install_image_interpreter(root, "3.10")
    _, report, _ = check_json(["--root", str(root), "--venv", str(venv)])
    finding = findings_by_id(report)["ND-PY-002"][0]
    assert (finding["category"], finding["severity"], finding["title"]) == (
        "python-unsupported", "error", "Python 3.10 cannot install Neuron 2.31.1: its wheels are for 3.11, 3.12, 3.13")
    assert finding["fix"] == [f"neurondoctor venv create {venv}-py3.11 --release 2.31.1 --python python3.11"]
    run_printed_venv_create(str(finding["fix"][0]), index_url, tmp_path, root, Path(f"{venv}-py3.11"))


def test_near_miss_an_empty_venv_on_a_supported_python_or_without_a_release(tmp_path: Path,
                                                                            venvs: VenvFactory) -> None:
    venv = venvs.create("py311-nothing-installed")
    with_release = build_host(tmp_path / "host", HostSpec(release=RELEASE))
    assert "ND-PY-002" not in findings_by_id(check_json(["--root", str(with_release), "--venv", str(venv)])[1])
    old = venvs.create("py310-no-release")
    relabel_python(old, "3.10")
    no_release = build_host(tmp_path / "bare", HostSpec(release=None, instance_type=None, pci=False))
    install_image_interpreter(no_release, "3.10")
    assert "ND-PY-002" not in findings_by_id(check_json(["--root", str(no_release), "--venv", str(old)])[1])
    judged = check_json(["--root", str(no_release), "--venv", str(old), "--release", RELEASE])[1]
    assert "ND-PY-002" in findings_by_id(judged)


def test_a_cuda_torch_venv_on_a_neuron_host_gets_the_command_that_builds_the_neuron_one(
        index_url: str, tmp_path: Path, venvs: VenvFactory) -> None:
    """`pip install torch` on a trn1: a warning on the host (not a pass), and its venv create runs."""
    root = build_host(tmp_path / "host", HostSpec(release=RELEASE))
    venv = venvs.create("cuda-torch-on-trn1")
    venvs.install(venv, cuda_torch_wheels("2.9.0"))
    code, report, _ = check_json(["--root", str(root), "--venv", str(venv)])
    finding = findings_by_id(report)["ND-FW-001"][0]
    assert (finding["category"], finding["severity"], finding["title"]) == (
        "framework-missing", "warning",
        f"{venv} has torch 2.9.0+cu128, a CUDA build with 4 nvidia-* package(s) and no Neuron framework")
    assert finding["fix"] == [f"neurondoctor venv create {venv}-neuron --release 2.31.1"]
    assert code == 0
    run_printed_venv_create(str(finding["fix"][0]), index_url, tmp_path, root, Path(f"{venv}-neuron"),
                            "--python", sys.executable)


def test_a_neuron_venv_on_a_python_its_release_dropped(index_url: str, tmp_path: Path, venvs: VenvFactory) -> None:
    """A 2.31.1 stack copied from an Ubuntu 22.04 host (Python 3.10, which 2.30 dropped): ND-PY-001's printed
    `venv create` beside it runs, and the environment it builds is clean (it was two pip lines that brought PyPI's
    CUDA torch)."""
    root = build_host(tmp_path / "host", HostSpec(release=RELEASE))
    venv = stack_venv(venvs, "py310-stack", RELEASE)
    relabel_python(venv, "3.10")
    install_image_interpreter(root, "3.10")
    finding = findings_by_id(check_json(["--root", str(root), "--venv", str(venv)])[1])["ND-PY-001"][0]
    assert finding["fix"] == [f"neurondoctor venv create {venv}-py3.11 --release 2.31.1 --python python3.11"]
    run_printed_venv_create(str(finding["fix"][0]), index_url, tmp_path, root, Path(f"{venv}-py3.11"))


def test_a_venv_older_than_its_host_is_rebuilt_for_the_hosts_release(index_url: str, tmp_path: Path,
                                                                      venvs: VenvFactory) -> None:
    """ND-REL-004 with the host ahead: the host is shared, so its runtime is not moved back for one environment;
    the printed `venv create` builds the host's release beside it, and that environment is clean on the host."""
    root = build_host(tmp_path / "host", HostSpec(release=RELEASE))
    venv = stack_venv(venvs, "older-than-host", "2.29.1")
    finding = findings_by_id(check_json(["--root", str(root), "--venv", str(venv)])[1])["ND-REL-004"][0]
    assert finding["fix"] == [f"neurondoctor venv create {venv}-{RELEASE} --release {RELEASE}"]
    run_printed_venv_create(str(finding["fix"][0]), index_url, tmp_path, root, Path(f"{venv}-{RELEASE}"),
                            "--python", sys.executable)


def test_a_compiler_newer_than_the_host_runtime_without_touching_the_host(index_url: str, tmp_path: Path,
                                                                         venvs: VenvFactory) -> None:
    """ND-RT-002's second way out: an environment of the host runtime's release beside this one (pinning only the
    compiler back would mix releases: ND-PIN-001). The first way, the host upgrade, runs in the host simulator."""
    root = build_host(tmp_path / "host", HostSpec(release="2.29.1"))
    venv = stack_venv(venvs, "newer-than-runtime", RELEASE)
    finding = findings_by_id(check_json(["--root", str(root), "--venv", str(venv)])[1])["ND-RT-002"][0]
    ways = split_alternatives(finding["fix"])
    assert ways[1] == ["# or without touching the host: an environment of its release (Neuron 2.29.1)",
                       f"neurondoctor venv create {venv}-2.29.1 --release 2.29.1"]
    run_printed_venv_create(ways[1][1], index_url, tmp_path, root, Path(f"{venv}-2.29.1"),
                            "--python", sys.executable)


def test_the_python_verdict_without_neuron_packages_is_the_same_static_and_live(tmp_path: Path,
                                                                                venvs: VenvFactory) -> None:
    """Neuron 2.19.1's wheels are for Python 3.8-3.10: this machine's 3.11 venv, judged with --release, both ways."""
    venv = venvs.create("py311-for-2-19")
    root = build_host(tmp_path / "bare", HostSpec(release=None, instance_type=None, pci=False))
    static = findings_by_id(check_json(["--root", str(root), "--venv", str(venv), "--release", "2.19.1"])[1])
    live = findings_by_id(check_json(["--root", str(root), "--python", str(venv / "bin" / "python"),
                                      "--release", "2.19.1"])[1])
    assert [item["title"] for item in static["ND-PY-002"]] == [item["title"] for item in live["ND-PY-002"]] == [
        "Python 3.11 cannot install Neuron 2.19.1: its wheels are for 3.8, 3.9, 3.10"]
    assert static["ND-PY-002"][0]["fix"] == [f"neurondoctor venv create {venv}-py3.10 --release 2.19.1 "
                                             "--python python3.10"]


def test_a_pytorch_2_6_environment_after_its_end_is_rebuilt_for_the_hosts_release(
        index_url: str, tmp_path: Path, venvs: VenvFactory) -> None:
    """ND-EOS-001 (PyTorch 2.6 ended in Neuron 2.27.0, announcement-end-of-support-pytorch-2-6): the torch-neuronx
    2.6 of 2.26.1 on a 2.31.1 host. The printed `venv create` of the host's release runs, and what it builds is
    clean on the host."""
    root = build_host(tmp_path / "host", HostSpec(release=RELEASE))
    venv = venvs.create("pytorch-2-6-after-its-end")
    venvs.install(venv, [simple_wheel("torch-neuronx", "2.6.0.2.10.16998",
                                      ("torch==2.6.*", "torch-xla==2.6.*", "libneuronxla<3.0,>=2.2")),
                         simple_wheel("neuronx-cc", "2.21.33363.0"), simple_wheel("libneuronxla", "2.2.12677.0"),
                         simple_wheel("torch-xla", "2.6.0", ("torch==2.6.0",)), torch_wheel("2.6.0")])
    report = check_json(["--root", str(root), "--venv", str(venv)])[1]
    (finding,) = [item for item in findings_by_id(report)["ND-EOS-001"]
                  if item["evidence"]["announcement"] == "pytorch-2.6"]
    assert finding["fix"] == [f"neurondoctor venv create {venv}-2.31.1 --release 2.31.1"]
    run_printed_venv_create(str(finding["fix"][0]), index_url, tmp_path, root, Path(f"{venv}-2.31.1"),
                            "--python", sys.executable)
