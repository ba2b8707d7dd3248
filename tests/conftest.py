"""Shared fixtures: the release catalog, a factory of real venvs, fixture host roots, and the CLI runner."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Optional

import pytest

from neurondoctor.release_data.catalog import ReleaseCatalog, load_catalog
from tests.wheelhouse import VenvFactory

REPO = Path(__file__).resolve().parent.parent


# Every finding id a rule or probe emitted during the session, in this process or in a CLI subprocess
# (read from its output): the session ends by asserting each declared id fired at least once.
FIRED_IDS: set[str] = set()
FIX_LINES: dict[str, set[str]] = {}  # id -> every fix line a check report printed for it in this run
FIRED_SEVERITIES: dict[str, set[str]] = {}  # id -> every severity it was printed at (`check --list` declares them)
# A fix line that runs in user space: pip or uv in an environment, pip configuration, the user's
# shell variables, `neurondoctor venv create` / `manifests update` / `cache prune`.
_USER_SPACE_FIX = re.compile(r"(^| )-m pip |^uv pip |^neurondoctor (venv create|manifests update|cache prune)"
                             r"|^(export|unset) |(^| )-m venv ")
_FINDING_ID = re.compile(r"\bND-[A-Z]+-\d{3}\b")


_TEST_CACHE = pytest.StashKey[str]()


def pytest_configure(config: pytest.Config) -> None:
    """Keep a developer's own `manifests update` copy out of the tests: every run gets an empty cache. Record
    the findings the doctor's own code constructs (not those a test builds by hand)."""
    import tempfile

    from neurondoctor.rules.finding import Finding

    cache = tempfile.mkdtemp(prefix="nd-test-cache-")
    os.environ["NEURONDOCTOR_CACHE_DIR"] = cache
    config.stash[_TEST_CACHE] = cache
    original = Finding.__post_init__

    def recording(self: Finding) -> None:
        original(self)
        if sys._getframe(2).f_globals.get("__name__", "").startswith("neurondoctor."):
            FIRED_IDS.add(self.id)
            FIRED_SEVERITIES.setdefault(self.id, set()).add(self.severity)

    Finding.__post_init__ = recording  # type: ignore[method-assign]


def pytest_unconfigure(config: pytest.Config) -> None:
    """The empty cache this process made goes with it (each xdist worker makes its own)."""
    import shutil

    cache = config.stash.get(_TEST_CACHE, None)
    if cache:
        shutil.rmtree(cache, ignore_errors=True)


# The slowest files (measured with --durations on the 2-core CI machine): real torch wheels, real package installs
# into real venvs, executed fixes, a wheel build, a Slurm cluster. `bash scripts/test.sh --quick` leaves them out.
SLOW_FILES = ("tests/fixes/", "tests/test_probe_ops.py", "tests/test_probe_canary.py", "tests/test_probe_hf_models.py",
              "tests/test_probe_shapes.py", "tests/test_torch_cpu_venv.py", "tests/test_requirements.py",
              "tests/test_venv_create.py", "tests/test_slurm_integration.py", "tests/test_packaging.py",
              "tests/test_torch_companions.py", "tests/test_framework_missing.py",
              "tests/adversarial/test_fix_words.py", "tests/adversarial/test_data_loss.py",
              # broad matrices and timing tests: every release x instance x Python, every layout, hangs
              "tests/test_healthy_matrix.py", "tests/test_environment_layouts.py", "tests/adversarial/test_hangs.py",
              "tests/test_current_release.py")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).relative_to(REPO).as_posix().startswith(SLOW_FILES):
            item.add_marker(pytest.mark.slow)


_SHARED_RECORDS = "NEURONDOCTOR_TEST_RECORDS"  # where xdist workers leave what fired, for the controller


def _merge_worker_records(config: pytest.Config) -> None:
    """Under pytest-xdist each worker runs part of the tests: they write the ids that fired and the fix lines
    printed, and the controller (which runs none) reads them all before judging the run."""
    folder = os.environ.get(_SHARED_RECORDS)
    if not folder:
        return
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        record = {"fired": sorted(FIRED_IDS), "fix_lines": {key: sorted(value) for key, value in FIX_LINES.items()},
                  "severities": {key: sorted(value) for key, value in FIRED_SEVERITIES.items()}}
        (Path(folder) / f"{worker['workerid']}.json").write_text(json.dumps(record))
        return
    for path in Path(folder).glob("*.json"):
        record = json.loads(path.read_text())
        FIRED_IDS.update(record["fired"])
        for key, lines in record["fix_lines"].items():
            FIX_LINES.setdefault(key, set()).update(lines)
        for key, severities in record["severities"].items():
            FIRED_SEVERITIES.setdefault(key, set()).update(severities)
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


@pytest.hookimpl(tryfirst=True)
def pytest_sessionstart(session: pytest.Session) -> None:
    if getattr(session.config, "workerinput", None) is None and session.config.pluginmanager.hasplugin("xdist") \
            and getattr(session.config.option, "numprocesses", None):
        import tempfile

        os.environ[_SHARED_RECORDS] = tempfile.mkdtemp(prefix="nd-test-records-")  # inherited by the workers


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Each declared finding id has a test that makes it fire: checked on a full, passing run of the
    main tier, where a missing one fails the session (on the controller, from every worker's records)."""
    config = session.config
    _merge_worker_records(config)
    if getattr(config, "workerinput", None) is not None:
        return
    full_run = (config.args_source == pytest.Config.ArgsSource.TESTPATHS and not config.option.keyword
                and config.option.markexpr == "not xla" and exitstatus == 0)
    if not full_run:
        return
    from neurondoctor.rules.registry import all_finding_specs
    from tests.fixes.fix_kinds import EXECUTED

    never = sorted(spec.id for _, spec in all_finding_specs() if spec.id not in FIRED_IDS)
    declared = {spec.id: set(spec.severities) for _, spec in all_finding_specs()}
    undeclared = sorted(f"{finding_id} ({', '.join(sorted(severities - declared.get(finding_id, set())))})"
                        for finding_id, severities in FIRED_SEVERITIES.items()
                        if severities - declared.get(finding_id, set()))
    unexecuted = sorted(finding_id for finding_id, lines in FIX_LINES.items()
                        if finding_id not in EXECUTED and any(_USER_SPACE_FIX.search(line) for line in lines))
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    for problem, ids in (("finding ids no test made fire", never),
                         ("finding ids printed at a severity `check --list` does not declare (FindingSpec.also)",
                          undeclared),
                         ("finding ids with user-space fixes no test runs (tests/fixes/fix_kinds.py)", unexecuted)):
        if ids:
            if reporter is not None:
                reporter.write_line(f"{problem}: {', '.join(ids)}", red=True)
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(scope="session")
def catalog() -> ReleaseCatalog:
    loaded = load_catalog()
    assert loaded.problems == []
    return loaded


@pytest.fixture(scope="session")
def hf_index_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The Hugging Face + Neuron package index of tests/hf_index.py, served on 127.0.0.1 for the session."""
    from tests.hf_index import serve_hf_index

    yield from serve_hf_index(tmp_path_factory)


@pytest.fixture(scope="session")
def venvs(tmp_path_factory: pytest.TempPathFactory) -> VenvFactory:
    return VenvFactory(base=tmp_path_factory.mktemp("venvs"), wheel_dir=tmp_path_factory.mktemp("wheels"))


def make_host_root(root: Path, instance_type: Optional[str] = "trn1.2xlarge",
                   pip_conf: Optional[str] = None) -> Path:
    """A host tree at the real paths: os-release (Ubuntu 24.04, as tests/host_fixture.py's default), a `/usr`, DMI
    identity and, optionally, `/etc/pip.conf`; no Neuron stack."""
    from tests.host_fixture import OS_RELEASES

    (root / "etc").mkdir(parents=True, exist_ok=True)
    (root / "etc/os-release").write_text(OS_RELEASES["ubuntu24"])
    (root / "usr/bin").mkdir(parents=True, exist_ok=True)
    dmi = root / "sys/devices/virtual/dmi/id"
    dmi.mkdir(parents=True, exist_ok=True)
    if instance_type:
        (dmi / "sys_vendor").write_text("Amazon EC2\n")
        (dmi / "product_name").write_text(f"{instance_type}\n")
    (root / "etc").mkdir(exist_ok=True)
    if pip_conf is not None:
        (root / "etc/pip.conf").write_text(pip_conf)
    return root


@pytest.fixture
def host_root(tmp_path: Path) -> Path:
    return make_host_root(tmp_path / "root")


def cli_env(extra: Optional[dict[str, str]] = None) -> dict[str, str]:
    """The test process's environment without an active venv (so discovery is not steered by it)."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH")}
    env.update(extra or {})
    return env


def run_cli(args: Sequence[str], env: Optional[dict[str, str]] = None, prefix: Sequence[str] = (),
            timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`python -m neurondoctor ARGS` as a user runs it, in a subprocess; ids in a check, probe or health report
    count as fired."""
    result = subprocess.run([*prefix, sys.executable, "-m", "neurondoctor", *args], capture_output=True, text=True,
                            env=env or cli_env(), timeout=timeout, cwd=str(REPO))
    if args[:1] in (["check"], ["probe"], ["health"]) and "--list" not in args:
        FIRED_IDS.update(_FINDING_ID.findall(result.stdout))
    return result


def empty_folder(tmp_path: Path) -> str:
    """A folder to name with `--venv` so that discovery does not read this machine's environments (a path that
    leads nowhere is a usage error)."""
    folder = tmp_path / "none"
    folder.mkdir(exist_ok=True)
    return str(folder)


_RANK = {"info": 1, "warning": 2, "error": 3}
_STATUS_RANK = {"ok": 0, "info": 1, "warning": 2, "error": 3}


def assert_answers_agree(document: dict[str, Any]) -> None:
    """On every report a test reads: each area's status is the worst of its own findings (`ok` none,
    `skipped` judged nothing), the summary counts are the findings', and the verdict follows them."""
    severities: dict[str, list[str]] = {}
    for finding in document["findings"]:
        severities.setdefault(finding["id"], []).append(finding["severity"])
    counted = {"error": 0, "warning": 0, "info": 0}
    for finding in document["findings"]:
        counted[finding["severity"]] += 1
    for check in document["checks"]:
        own = [severities[finding_id].pop(0) for finding_id in check["findings"]]
        if check["status"] in _STATUS_RANK:
            worst = max((_RANK[severity] for severity in own), default=0)
            assert worst == _STATUS_RANK[check["status"]], (check["id"], check["status"], own)
        elif check["status"] == "skipped":
            assert own == [], (check["id"], own)
    assert all(not left for left in severities.values()), severities  # every finding belongs to one area
    assert document["summary"] == {"errors": counted["error"], "warnings": counted["warning"],
                                   "info": counted["info"]}, (document["summary"], counted)
    state = document["health"]["state"]
    assert (state == "unhealthy") == (counted["error"] > 0), (state, counted)
    if state == "ok":
        assert counted["warning"] == 0
    if state == "degraded":
        assert counted["warning"] > 0


def validated_report(text: str) -> dict[str, Any]:
    """A `check --json` document, validated against the shipped JSON Schema and read back by `load_report`."""
    import jsonschema

    from neurondoctor.report.document import SCHEMA_FILE
    from neurondoctor.report.reader import load_report

    document: dict[str, Any] = json.loads(text)
    jsonschema.validate(document, json.loads(SCHEMA_FILE.read_text()))
    read = load_report(text)
    assert [finding.id for finding in read.findings] == [finding["id"] for finding in document["findings"]]
    assert read.health.state == document["health"]["state"]
    assert_answers_agree(document)
    return document


def check_json(args: Sequence[str], env: Optional[dict[str, str]] = None,
               prefix: Sequence[str] = ()) -> tuple[int, dict[str, Any], str]:
    """Run `check --json ARGS`; stdout must be exactly one JSON document."""
    result = run_cli(["check", "--json", *args], env=env, prefix=prefix)
    document = validated_report(result.stdout)
    for finding in document["findings"]:
        FIX_LINES.setdefault(finding["id"], set()).update(finding["fix"])
        FIRED_SEVERITIES.setdefault(finding["id"], set()).add(finding["severity"])
    return result.returncode, document, result.stderr


def findings_by_id(document: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = {}
    for finding in document["findings"]:
        grouped.setdefault(finding["id"], []).append(finding)
    return grouped


def without_read_privileges() -> list[str]:
    """A command prefix that makes 0000 files and 0700 directories unreadable: as root, drop the capabilities
    that override file permissions; as another user, plain permissions do already."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: cannot make a file unreadable")
    return [setpriv, "--bounding-set=-dac_override,-dac_read_search"]


@pytest.fixture
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for variable in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYTHONPATH"):
        monkeypatch.delenv(variable, raising=False)
    yield


def local_torch_wheel_dir(version: str = "2.13.0") -> Optional[Path]:
    """The directory holding this machine's CPU torch wheel (docs/measured.md), if any."""
    candidates = [*os.environ.get("PIP_FIND_LINKS", "").split(), "/opt/wheels"]
    for directory in filter(None, candidates):
        if any(Path(directory).glob(f"torch-{version}*cp{sys.version_info[0]}{sys.version_info[1]}*.whl")):
            return Path(directory)
    return None


TRANSFORMERS = "transformers==5.24.0"  # the Hugging Face models of tests/models/hf_models.py


@pytest.fixture(scope="session")
def torch_cpu_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with the real torch 2.13.0 CPU wheel installed by pip (about 16 s, 900 MB) and transformers from the
    package index, so the probes run real Hugging Face models."""
    wheels = local_torch_wheel_dir()
    if wheels is None:
        pytest.skip("needs the local torch 2.13.0 CPU wheel (see docs/measured.md)")
    venv = tmp_path_factory.mktemp("torch") / "torch-2.13-cpu"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet",
                    "--disable-pip-version-check", "--find-links", str(wheels), "torch==2.13.0", TRANSFORMERS],
                   check=True, capture_output=True, timeout=900)
    return venv


# PyPI's torch 2.9 and torchvision 0.24 are a consistent pair; transformers for the Hugging Face corpus
XLA_STACK = ("torch==2.9.0", "torch-xla==2.9.0", "torchvision==0.24.0", TRANSFORMERS)


@pytest.fixture(scope="session")
def xla_venv() -> Path:
    """torch 2.9.0 + torch-xla 2.9.0 from PyPI in a venv kept under the user's cache, so the ~4 GB download
    happens once per machine (NEURONDOCTOR_TEST_CACHE moves it). A stamp naming the stack marks a finished
    install; another stack is installed over it."""
    from neurondoctor.actions.venv.builder import find_uv

    cache = Path(os.environ.get("NEURONDOCTOR_TEST_CACHE", Path.home() / ".cache" / "neurondoctor-tests"))
    venv = cache / "xla-2.9.0"
    stamp = venv / ".neurondoctor-test-ready"
    wanted = " ".join(XLA_STACK) + "\n"
    if stamp.exists() and stamp.read_text() == wanted:
        return venv
    uv = find_uv()
    if uv is None:
        pytest.skip("the XLA tier needs uv to install torch-xla")
    if not (venv / "bin" / "python").exists():
        subprocess.run([uv, "venv", "--quiet", "--clear", "--python", sys.executable, str(venv)], check=True,
                       timeout=300)
    install = subprocess.run([uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
                              *XLA_STACK], capture_output=True, text=True, timeout=3600)
    if install.returncode != 0:
        pytest.skip(f"could not install {' '.join(XLA_STACK)}: {install.stderr.strip()[-300:]}")
    stamp.write_text(wanted)
    return venv
