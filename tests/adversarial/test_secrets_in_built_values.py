"""Attack class: secrets in values the doctor builds. A compile cache named by a URL with credentials (or a path
holding a key) is redacted where the location fact is made, so no output carries it: `check` (JSON and text, facts,
titles, evidence, fix lines), `health` in every format, the files it writes, the Slurm drain reason, `cache
status` and every member of the bundle. A URL without credentials is shown whole."""

from __future__ import annotations

import gzip
import json
import tarfile
from pathlib import Path

import pytest

from neurondoctor.pyenv.pip_config import parse_pip_config
from tests.cache_fixture import entry
from tests.conftest import check_json, cli_env, findings_by_id, run_cli
from tests.doubles.slurm import FakeSlurm
from tests.host_fixture import HostSpec, build_host
from tests.mount_tables import as_live_view
from tests.small_filesystem import small_filesystem

# (how the cache is configured, the secrets in it)
CACHE_SETTINGS = {
    "https URL": ({"NEURON_COMPILE_CACHE_URL": "https://cachebot:hunter2pw@cache.example/neuron"}, ("hunter2pw",)),
    "s3 URL with a key": ({"NEURON_COMPILE_CACHE_URL": "s3://AKIAZ7QWERTYUIOPASDF:s3cr3t/K3y@bucket/neuron"},
                          ("AKIAZ7QWERTYUIOPASDF", "s3cr3t/K3y")),
    "file URL": ({"NEURON_COMPILE_CACHE_URL": "file://cachebot:f1l3pw@/var/tmp/neuron-compile-cache"}, ("f1l3pw",)),
    "--cache_dir": ({"NEURON_CC_FLAGS": "--cache_dir=https://cachebot:fl4gpw@cache.example/n --model-type=transformer"},
                    ("fl4gpw",)),
}


def _leaks(text: str, secrets: tuple[str, ...]) -> list[str]:
    return [secret for secret in secrets if secret in text]


def _archive_text(archive: Path) -> dict[str, str]:
    members = {}
    with tarfile.open(archive) as bundle:
        for member in bundle.getmembers():
            extracted = bundle.extractfile(member)
            data = extracted.read() if extracted else b""
            data = gzip.decompress(data) if member.name.endswith(".gz") else data
            members[member.name] = member.name + "\n" + data.decode("utf-8", errors="replace")
    return members


@pytest.mark.parametrize("setting", CACHE_SETTINGS, ids=list(CACHE_SETTINGS))
def test_a_cache_url_with_credentials_reaches_no_output(setting: str, tmp_path: Path) -> None:
    variables, secrets = CACHE_SETTINGS[setting]
    root = build_host(tmp_path / "root", HostSpec())
    slurm = FakeSlurm(tmp_path, "IDLE")
    env = slurm.env(**variables)
    seen: dict[str, str] = {}
    for arguments in (["check", "--json"], ["check"], ["cache", "status"], ["cache", "status", "--json"],
                      *(["health", "--format", name] for name in ("text", "json", "nhc", "npd", "prometheus")),
                      ["health", "--slurm", "--dry-run"]):
        done = run_cli([*arguments, "--root", str(root)], env=env)
        assert done.returncode in (0, 1), (arguments, done.stderr)
        seen[" ".join(arguments)] = done.stdout + done.stderr
    status, textfile = tmp_path / "health.json", tmp_path / "neurondoctor.prom"
    done = run_cli(["health", "--slurm", "--root", str(root), "--status-file", str(status), "--format", "prometheus",
                    "--output", str(textfile)], env=env)
    seen["health --slurm"] = done.stdout + done.stderr
    seen["written"] = status.read_text() + textfile.read_text() + "\n".join(slurm.calls())
    archive = tmp_path / "bundle.tar.gz"
    done = run_cli(["bundle", "--root", str(root), "-o", str(archive), "--max-time", "60"], env=env, timeout=180)
    assert done.returncode == 0, done.stderr
    seen["bundle"] = done.stdout + done.stderr
    seen.update(_archive_text(archive))
    assert {where: found for where, text in seen.items() if (found := _leaks(text, secrets))} == {}
    document = json.loads(seen["check --json"].split("\n", 1)[0])
    assert "[REDACTED]@" in document["facts"]["host"]["snapshot"]["compile_cache"]["path"]
    assert "[REDACTED]@" in seen["cache status"]


def test_a_cache_url_without_credentials_is_shown_whole(tmp_path: Path) -> None:
    """Near miss: nothing to cut, so the location a reader needs stays as configured."""
    root = build_host(tmp_path / "root", HostSpec())
    env = cli_env({"NEURON_COMPILE_CACHE_URL": "https://cache.example/neuron"})
    _, document, _ = check_json(["--root", str(root)], env=env)
    assert document["facts"]["host"]["snapshot"]["compile_cache"]["path"] == "https://cache.example/neuron"
    shown = run_cli(["cache", "status", "--root", str(root)], env=env).stdout
    assert "https://cache.example/neuron (NEURON_COMPILE_CACHE_URL): remote, not contacted" in shown


def test_a_key_in_a_local_cache_path_never_reaches_the_drain_reason(tmp_path: Path) -> None:
    """A cache path holding an access key, on a full filesystem the operator configured: the node drains (ND-RES-001
    is an error), the reason Slurm shows every user names the cache redacted, and the fix lines name the variable,
    so they still run."""
    key = "AKIAZ7QWERTYUIOPASDF"
    root = build_host(tmp_path / "root", HostSpec())
    with small_filesystem(root / "mnt" / key):
        as_live_view(root)
        slurm = FakeSlurm(tmp_path, "IDLE")
        env = slurm.env(NEURON_COMPILE_CACHE_URL=f"/mnt/{key}/neuron-cache")
        dry = run_cli(["health", "--slurm", "--dry-run", "--root", str(root)], env=env)
        assert dry.returncode == 1 and "would run: scontrol update" in dry.stderr, dry.stderr
        assert "ND-RES-001" in dry.stderr and "/mnt/[REDACTED]/neuron-cache" in dry.stderr
        status = tmp_path / "health.json"
        done = run_cli(["health", "--slurm", "--root", str(root), "--status-file", str(status)], env=env)
        drain = slurm.calls()[-1]
        assert done.returncode == 1 and drain.startswith("update nodename=trn1-a state=drain reason=neurondoctor: "
                                                         "ND-RES-001"), drain
        _, document, _ = check_json(["--root", str(root), "--select", "ND-RES-001"], env=env)
        written = dry.stdout + dry.stderr + done.stdout + done.stderr + status.read_text() + "\n".join(slurm.calls())
        assert key not in written + json.dumps(document)
        fix = findings_by_id(document)["ND-RES-001"][0]["fix"]
        assert fix[0] == 'du -sh "$NEURON_COMPILE_CACHE_URL"/* | sort -h | tail'


def test_a_log_line_and_flags_read_from_the_cache_are_redacted(tmp_path: Path) -> None:
    """The index shows a failed entry's first error line and finished entries' flags: values it builds from files
    anyone compiling writes, redacted as the location is (a URL's credentials, `--token X`)."""
    cache = tmp_path / "root/var/tmp/neuron-compile-cache/neuronxcc-2.15.141.0+d3cfc8ca"
    root = build_host(tmp_path / "root", HostSpec())
    entry(cache, "MODULE_e358924ac4ea2b2bb562+39f12043", "failed",
          log_text="ERROR: could not fetch https://ci:l0gpassw0rd@artifacts.example/x.neff\n")
    entry(cache, "MODULE_b41d4f868a9e38641a9e+39f12043", "done",
          flags=json.dumps(["--model-type=transformer", "--token", "fl4gt0ken99", "-O1"]))
    _, document, _ = check_json(["--root", str(root)], env=cli_env())
    status = run_cli(["cache", "status", "--json", "--root", str(root)], env=cli_env())
    shown = json.dumps(document) + status.stdout
    assert "l0gpassw0rd" not in shown and "fl4gt0ken99" not in shown
    assert "ERROR: could not fetch https://[REDACTED]@artifacts.example/x.neff" in shown


def test_a_pip_constraint_url_is_kept_without_its_credentials() -> None:
    """The constraint pip reads (pip.conf or PIP_CONSTRAINT) is a URL too: its credentials are cut as it is read."""
    source = parse_pip_config("/etc/pip.conf", "[global]\nconstraint = https://ci:c0nstra1ntpw@pins.example/c.txt\n")
    assert source.constraint == "https://[REDACTED]@pins.example/c.txt"


def test_the_environment_fact_and_the_cache_fact_agree(tmp_path: Path) -> None:
    """The environment fact and the cache fact built from the same value read the same: one redaction."""
    root = build_host(tmp_path / "root", HostSpec())
    url = "https://cachebot:hunter2pw@cache.example/neuron"
    _, document, _ = check_json(["--root", str(root)], env=cli_env({"NEURON_COMPILE_CACHE_URL": url}))
    facts = document["facts"]
    assert facts["environ"]["NEURON_COMPILE_CACHE_URL"] == facts["host"]["snapshot"]["compile_cache"]["path"]
