"""`bundle`: planted secrets never reach the archive; fixture hosts give the listed members; hangs are bounded."""

from __future__ import annotations

import gzip
import json
import os
import socket
import tarfile
import time
from pathlib import Path

import pytest

from neurondoctor.actions.bundle.bundle_command import manifest_of
from tests.conftest import cli_env, empty_folder, run_cli, validated_report
from tests.host_fixture import HostSpec, build_host
from tests.neuron_envs import stack_venv
from tests.wheelhouse import VenvFactory

SECRETS = {
    "AWS_ACCESS_KEY_ID": "AKIAIOSFODNN7EXAMPLE",
    "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "AWS_SESSION_TOKEN": "IQoJb3JpZ2luX2VjEJrSessionTokenValue1234567890",
    "HF_TOKEN": "hf_PlantedHuggingFaceTokenValue0123456789",
    "DB_PASSWORD": "correct-horse-battery-staple",
    "NEURON_RT_LOG_LEVEL": "INFO",
}
URL_PASSWORD = "pipIndexS3cret"
LOG_SECRET = "ghp_PlantedInCompileLog0123456789abcdef"
COMMAND_SECRET = "password=CommandOutputSecret42"


def all_text(archive: Path) -> str:
    """Every member, decompressed, as one text."""
    chunks = []
    with tarfile.open(archive) as bundle:
        for member in bundle.getmembers():
            handle = bundle.extractfile(member)
            if handle is None:
                continue
            data = handle.read()
            if member.name.endswith(".gz"):
                data = gzip.decompress(data)
            chunks.append(data.decode("utf-8", errors="replace"))
    return "\n".join(chunks)


def fake_command(bin_dir: Path, name: str, body: str) -> None:
    bin_dir.mkdir(exist_ok=True)
    path = bin_dir / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def test_planted_secrets_never_reach_the_archive(venvs: VenvFactory, tmp_path: Path) -> None:
    venv = stack_venv(venvs, "bundle-secrets", "2.31.1", pip_conf=False)
    (venv / "pip.conf").write_text(f"[global]\nextra-index-url = https://builder:{URL_PASSWORD}@mirror.example.com"
                                   "/simple https://pip.repos.neuron.amazonaws.com\n")
    workdir = tmp_path / "debug" / "job-1" / "graph-0"  # TorchNeuron's debug directory, where neuronx-cc ran
    workdir.mkdir(parents=True)
    (workdir / "log-neuron-cc.txt").write_text(f"compiling...\nGITHUB_TOKEN={LOG_SECRET}\ndone\n")
    bin_dir = tmp_path / "bin"
    fake_command(bin_dir, "dkms", "echo 'aws-neuronx/2.29.0.0, 6.8.0-1015-aws, x86_64: installed'; "
                 f"echo '{COMMAND_SECRET}'; echo 'key AKIAIOSFODNN7EXAMPLE'")
    env = cli_env({**SECRETS, "TORCH_NEURONX_DEBUG_DIR": str(tmp_path / "debug"),
                   "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    archive = tmp_path / "support.tar.gz"
    result = run_cli(["bundle", "-o", str(archive), "--venv", str(venv)], env=env)
    assert result.returncode == 0, result.stderr
    text = all_text(archive)
    planted = [value for key, value in SECRETS.items() if key != "NEURON_RT_LOG_LEVEL"]
    for secret in [*planted, URL_PASSWORD, LOG_SECRET, "CommandOutputSecret42"]:
        assert secret not in text, secret
    assert "[REDACTED]" in text
    assert "NEURON_RT_LOG_LEVEL=INFO" in text  # Neuron variables by value
    assert "DB_PASSWORD (value not collected)" in text  # everything else by name only
    assert "aws-neuronx/2.29.0.0, 6.8.0-1015-aws, x86_64: installed" in text
    assert "review the archive before sharing" in result.stdout
    with tarfile.open(archive) as bundle:
        assert any(name.endswith("-pip.conf") for name in bundle.getnames())  # the venv's own pip.conf, redacted
        assert any(name.endswith(f"compile-logs{workdir}/log-neuron-cc.txt") for name in bundle.getnames())
    assert "compiling..." in text  # the compiler log is in, its token is not


def test_fixture_host_archive_has_the_listed_members(venvs: VenvFactory, tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge", driver_loaded=False,
                                                  module_built=False, make_log="make: *** [neuron.ko] Error 1\n"))
    venv = stack_venv(venvs, "bundle-fixture", "2.31.1")
    archive = tmp_path / "fixture.tar.gz"
    result = run_cli(["bundle", "-o", str(archive), "--root", str(root), "--venv", str(venv)])
    assert result.returncode == 0, result.stderr
    with tarfile.open(archive) as bundle:
        names = {name.split("/", 1)[1] for name in bundle.getnames()}
    assert {"report.json", "report.md", "manifest.json", "files/etc/os-release", "files/proc/modules",
            "packages/dpkg-neuron.txt", "packages/dpkg-status.gz", "environment-variables.txt",
            "files/var/lib/dkms/aws-neuronx/2.29.0.0/build/make.log"} <= names
    assert any(name.startswith("environments/0-") for name in names)
    manifest = manifest_of(archive)
    collectors = {record["name"]: record for record in manifest["collectors"]}
    assert set(collectors) == {"check-report", "files", "pip-configuration", "packages", "dkms-build-log",
                               "compile-logs", "compile-cache", "environments",
                               "environment-variables", "neuron-ls-json", "neuron-ls-output-format-json", "neuron-ls",
                               "dkms-status", "lsmod",
                               "uname", "dmesg-neuron", "journalctl-neuron", "neuron-monitor-status",
                               "explained-logs"}
    assert collectors["explained-logs"]["status"] == "ok"  # the DKMS make.log was read (explain has no verdict)
    assert collectors["dkms-status"]["status"] == "skipped" and "live host" in collectors["dkms-status"]["error"]
    assert all(record["duration_s"] >= 0 and "bytes" in record for record in manifest["collectors"])
    report = validated_report(all_text(archive).split("\n", 1)[0])
    assert {finding["id"] for finding in report["findings"]} >= {"ND-DKMS-001"}


def test_hanging_command_is_timed_out_within_the_budget(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_command(bin_dir, "dkms", "sleep 60")
    fake_command(bin_dir, "neuron-ls", "sleep 60")
    env = cli_env({"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    archive = tmp_path / "hang.tar.gz"
    started = time.monotonic()
    result = run_cli(["bundle", "-o", str(archive), "--command-timeout", "2", "--max-time", "40",
                      "--venv", empty_folder(tmp_path)], env=env, timeout=120)
    elapsed = time.monotonic() - started
    assert result.returncode == 0, result.stderr
    assert elapsed < 40, elapsed  # the stated total budget; each hang is cut at 2 s
    collectors = {record["name"]: record for record in manifest_of(archive)["collectors"]}
    assert collectors["dkms-status"]["status"] == "timed_out"
    assert collectors["dkms-status"]["members"] == ["commands/dkms-status.txt"]


def test_obfuscation_is_consistent_and_the_map_stays_outside(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    hostname = socket.gethostname()
    fake_command(bin_dir, "dkms", f"echo 'built on {hostname} 10.20.30.40 i-0123456789abcdef0'")
    fake_command(bin_dir, "lsmod", f"echo 'neuron 237568 0 # {hostname} 10.20.30.40 account 123456789012'")
    env = cli_env({"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"})
    archive = tmp_path / "obfuscated.tar.gz"
    result = run_cli(["bundle", "-o", str(archive), "--obfuscate", "--venv", empty_folder(tmp_path)], env=env)
    assert result.returncode == 0, result.stderr
    mapping = json.loads((tmp_path / "obfuscated.tar.gz.map.json").read_text())["map"]
    with tarfile.open(archive) as bundle:
        assert not any(name.endswith(".map.json") for name in bundle.getnames())
        read = {name.rsplit("/", 1)[-1]: bundle.extractfile(name).read().decode()  # type: ignore[union-attr]
                for name in bundle.getnames() if "/commands/" in name}
    ip_token, host_token = mapping["10.20.30.40"], mapping[hostname]
    for member in ("dkms-status.txt", "lsmod.txt"):
        assert ip_token in read[member] and host_token in read[member]
        assert "10.20.30.40" not in read[member] and hostname not in read[member]
    assert mapping["i-0123456789abcdef0"].startswith("instance-") and mapping["123456789012"] == "account-1"
    assert hostname not in all_text(archive)


def test_size_cap_truncates_and_records(tmp_path: Path) -> None:
    archive = tmp_path / "small.tar.gz"
    result = run_cli(["bundle", "-o", str(archive), "--max-size", "0.01", "--venv", empty_folder(tmp_path)])
    assert result.returncode == 0
    truncated = [record for record in manifest_of(archive)["collectors"] if record["truncated"]]
    assert truncated, "a 10 KiB cap must cut something"


def test_unreadable_files_are_recorded_and_the_archive_still_comes_out(tmp_path: Path) -> None:
    import shutil
    import stat
    import tempfile

    base = Path(tempfile.mkdtemp(prefix="nd-bundle-nonroot-"))
    try:
        root = build_host(base / "host", HostSpec())
        (root / "etc/os-release").chmod(0)
        prefix: list[str] = []
        if os.geteuid() == 0:
            setpriv = shutil.which("setpriv")
            if setpriv is None:
                pytest.skip("running as root without setpriv: cannot make a file unreadable")
            prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search"]
        archive = tmp_path / "nonroot.tar.gz"
        result = run_cli(["bundle", "-o", str(archive), "--root", str(root)], prefix=prefix)
        assert result.returncode == 0, result.stderr
        files = {record["name"]: record for record in manifest_of(archive)["collectors"]}["files"]
        assert files["status"] == "partial" and "/etc/os-release" in files["error"]
        assert "files/proc/modules" in files["members"]
    finally:
        for path in base.rglob("*"):
            if not path.is_symlink():
                path.chmod(stat.S_IRWXU)
        shutil.rmtree(base)


def test_every_pip_configuration_the_check_read_is_in_the_bundle_redacted(venvs: VenvFactory, tmp_path: Path) -> None:
    """The user's `~/.config/pip/pip.conf` that `check -v` read is in the archive like /etc's, its
    token cut; the manifest's count of redactions is the number of markers a reader finds."""
    root = build_host(tmp_path / "host", HostSpec(release="2.31.1"))
    user_conf = root / "home/ubuntu/.config/pip/pip.conf"
    user_conf.parent.mkdir(parents=True)
    user_conf.write_text(f"[global]\nextra-index-url = https://ci:{URL_PASSWORD}@wheels.example.com/simple\n")
    (root / "etc/pip.conf").write_text("[global]\nextra-index-url = https://pip.repos.neuron.amazonaws.com\n")
    with (root / "etc/os-release").open("a") as os_release:  # 40 characters a key could be, and is not: kept
        os_release.write("# built from buildidentifierofthisimagebuildidentifie\n")
    venv = venvs.create("bundle-pip", parent=root / "home/ubuntu")
    archive = tmp_path / "pip.tar.gz"
    result = run_cli(["bundle", "-o", str(archive), "--root", str(root), "--venv", str(venv)])
    assert result.returncode == 0, result.stderr
    with tarfile.open(archive) as bundle:
        names = {name.split("/", 1)[1]: name for name in bundle.getnames()}
        handle = bundle.extractfile(names["files/home/ubuntu/.config/pip/pip.conf"])
        assert handle is not None
        member = handle.read().decode()
    assert URL_PASSWORD not in member and "https://[REDACTED]@wheels.example.com/simple" in member
    assert "files/etc/pip.conf" in names
    text = all_text(archive)
    assert "# built from buildidentifierofthisimagebuildidentifie" in text
    # every redaction counted left a marker (the check's own report may carry markers it cut before the bundle)
    assert 0 < manifest_of(archive)["redactions"] <= text.count("[REDACTED]")


def test_the_compile_cache_index_and_failed_logs_are_in_the_bundle_never_a_neff(tmp_path: Path) -> None:
    """The index of every configured cache (names, sizes, states) and the logs of failed entries,
    redacted; never a NEFF or a graph (the user's model)."""
    from tests.cache_fixture import entry

    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge"))
    cache = root / "var/tmp/neuron-compile-cache" / "neuronxcc-2.15.141.0+d3cfc8ca"
    entry(cache, "MODULE_b41d4f868a9e38641a9e+39f12043", "done")
    entry(cache, "MODULE_e358924ac4ea2b2bb562+39f12043", "failed",
          log_text="ERROR: Estimated peak HBM usage exceeds 16GB.\n"
                   "upload to https://user:s3cr3tT0ken@cache.internal/x\n")
    archive = tmp_path / "cache.tar.gz"
    result = run_cli(["bundle", "-o", str(archive), "--root", str(root), "--venv", str(tmp_path / "host")])
    assert result.returncode == 0, result.stderr
    with tarfile.open(archive) as bundle:
        members = {name.split("/", 1)[1]: bundle.extractfile(name) for name in bundle.getnames()
                   if bundle.getmember(name).isfile()}
        texts = {name: handle.read() for name, handle in members.items() if handle is not None}
    index = json.loads(texts["compile-cache.json"])
    default = next(item for item in index["caches"] if item["path"] == "/var/tmp/neuron-compile-cache")
    assert default["compilers"][0]["states"] == {"done": 1, "failed": 1, "locked": 0, "incomplete": 0}
    number = index["caches"].index(default)
    log = texts[f"compile-cache/{number}/neuronxcc-2.15.141.0+d3cfc8ca/MODULE_e358924ac4ea2b2bb562+39f12043/model.log"]
    assert b"Estimated peak HBM usage exceeds 16GB." in log and b"s3cr3tT0ken" not in log and b"[REDACTED]" in log
    assert not any(name.endswith((".neff", ".pb", ".hlo")) for name in texts)
    assert not any(b"hlo-module" in data for data in texts.values())
