"""Attack class: secrets. Every form below, planted in environment variables, files, command output and process
command lines, must be absent from `check --json` and from every member of the decompressed bundle."""

from __future__ import annotations

import gzip
import os
import re
import sys
import tarfile
from pathlib import Path

import pytest

from neurondoctor.redaction import MARK, SECRET_PATTERNS, Redactor, _folded, redact_secrets
from tests.conftest import check_json, cli_env, run_cli
from tests.host_fixture import Holder, HostSpec, build_host

# (form, text holding the secret, the secret itself): one row per form the redactor must know.
SECRET_FORMS = [
    ("AWS access key id", "key AKIAZ7QWERTYUIOPASDF in a log", "AKIAZ7QWERTYUIOPASDF"),
    ("AWS secret access key", "aws_secret_access_key = Zw9xQ1rT5yU8iO2pA4sD6fG8hJ0kL3zX7cV9bN1m", "Zw9xQ1rT5yU8"),
    ("AWS session token", "AWS_SESSION_TOKEN=IQoJb3JpZ2luX2VjEBoaCXVzLWVhc3QtMSJHMEUCIQD", "IQoJb3JpZ2lu"),
    ("Hugging Face token", "hub login hf_QwErTyUiOpAsDfGhJkLzXcVbNm12", "hf_QwErTyUiOp"),
    ("*_TOKEN variable", "WANDB_TOKEN=wbtok_123456789", "wbtok_123456789"),
    ("*_SECRET variable", "MY_APP_SECRET=sup3rs3cr3t", "sup3rs3cr3t"),
    ("*PASSWORD* variable", "DB_PASSWORD_PRIMARY=pw-Hunter2!", "pw-Hunter2!"),
    ("PEM private key", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAq1\n-----END RSA PRIVATE KEY-----",
     "MIIEowIBAAKCAQEAq1"),
    ("OpenSSH private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----",
     "b3BlbnNzaC1rZXk"),
    ("PGP private key block", "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGX9\n-----END PGP PRIVATE KEY BLOCK-----",
     "lQOYBGX9"),
    ("Bearer token", "curl -H 'Authorization: Bearer abcDEF123456ghiJKL789' x", "abcDEF123456ghiJKL789"),
    ("Authorization Basic", "Authorization: Basic YWxpY2U6d29uZGVybGFuZA==", "YWxpY2U6d29uZGVybGFuZA"),
    ("credentials in a URL", "extra-index-url = https://aws:cOdEaRtIfAcT@repo.example/simple", "cOdEaRtIfAcT"),
    ("URL credentials holding / and @", "NEURON_COMPILE_CACHE_URL=s3://cachebot:p4/ss@w0rd@bucket/neuron",
     "p4/ss@w0rd"),
    ("bare GitHub token", "token ghp_1234567890abcdefghijABCDEFGHIJ123456", "ghp_1234567890abcdef"),
    ("GitHub fine-grained token",
     "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ01", "github_pat_11ABCDEFG"),
    ("JWT without Bearer", "session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.s1gnatureXYZ0123456789",
     "s1gnatureXYZ0123456789"),
    ("Slack token", "SLACK_HOOK xoxb-2345678901-3456789012-AbCdEfGhIjKl", "xoxb-2345678901"),
    ("sk- API key", "OPENAI=sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123", "sk-proj-AbCdEfGhIjKl"),
    ("JSON password key", '{"user": "a", "password": "p4ss w0rd; with@things"}', "p4ss w0rd"),
    ("JSON api_key", '{"api_key":"ak-998877665544"}', "ak-998877665544"),
    ("YAML client_secret", "oauth:\n  client_secret: cs-55443322aa\n", "cs-55443322aa"),
    ("password= with spaces and ;/@", "password=correct horse;battery@staple", "horse;battery@staple"),
    ("mysql -pPASS", "mysql -h db -u root -pMyS3cretPass app", "MyS3cretPass"),
    ("curl -u user:pass", "curl -u deploy:T0psecret https://artifacts.example/x", "T0psecret"),
    ("--db-pass X", "python serve.py --db-pass dbp4ss123 --port 8080", "dbp4ss123"),
    ("--password X", "neuron_job --password pw998877 --epochs 3", "pw998877"),
    ("--token X", "torchrun train.py --token tk112233445566", "tk112233445566"),
    ("presigned X-Amz-Signature", "https://b.s3.amazonaws.com/m.bin?X-Amz-Credential=AKIAZ%2F1&X-Amz-Signature="
     "0a1b2c3d4e5f60718293a4b5c6d7e8f9", "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ("SAS sig=", "https://acct.blob.core.windows.net/c/f?sv=2022&sig=QmFzZTY0U2lnbmF0dXJl%3D&se=2026", "QmFzZTY0U2ln"),
    ("kernel command line", "BOOT_IMAGE=/vmlinuz root=/dev/nvme0n1p1 rd.iscsi.password=k3rnelpw console=ttyS0",
     "k3rnelpw"),
]


@pytest.mark.parametrize(("form", "text", "secret"), SECRET_FORMS, ids=[row[0] for row in SECRET_FORMS])
def test_each_secret_form_is_redacted(form: str, text: str, secret: str) -> None:
    redacted = redact_secrets(text)
    assert secret not in redacted and MARK in redacted


def test_every_pattern_has_a_form_above() -> None:
    assert len(SECRET_PATTERNS) <= len(SECRET_FORMS)


def _every_pattern_run(text: str) -> str:
    """What redaction gives without the literal pre-checks: every pattern run on the text."""
    for secret in SECRET_PATTERNS:
        text = secret.pattern.sub(secret.replace, text)
    return text


def _variants(text: str) -> list[str]:
    """The text, and spellings the pre-checks must not miss: other case, the Kelvin sign for k, the long s for s,
    the dotted capital and dotless small i (each matches its ASCII letter under re.IGNORECASE)."""
    return [text, text.upper(), text.lower(), text.swapcase(), text.replace("k", "\u212a"),
            text.replace("s", "\u017f"), text.replace("i", "\u0130"), text.replace("i", "\u0131"),
            f"  {text}\n{text}  ", text[: len(text) // 2]]


@pytest.mark.parametrize(("form", "text", "secret"), SECRET_FORMS, ids=[row[0] for row in SECRET_FORMS])
def test_the_pre_checks_never_change_what_is_redacted(form: str, text: str, secret: str) -> None:
    """A pattern is skipped only on text it cannot match: the redacted text is the same as with every pattern
    run, on each form and its case and Unicode spellings."""
    for variant in _variants(text):
        assert Redactor().secrets(variant) == _every_pattern_run(variant), variant


def test_the_case_folding_of_the_pre_checks_covers_every_character_re_matches() -> None:
    """For each character a pre-check looks for, every Unicode character that re.IGNORECASE matches to it
    folds to it."""
    every = "".join(chr(point) for point in range(sys.maxunicode + 1) if not 0xD800 <= point <= 0xDFFF)
    needed = {char for secret in SECRET_PATTERNS if secret.ignores_case
              for group in (secret.needs, secret.needs_also) for need in group for char in need}
    for char in sorted(needed):
        for matched in re.findall("(?i)" + re.escape(char), every):
            assert _folded(matched) == char, (char, hex(ord(matched)))


def test_ordinary_text_stays_readable() -> None:
    for text in ("aws-neuronx-dkms 2.29.0.0 2.9.0.2.15.32035", "torch==2.9.0 passthrough compass",
                 "NEURON_RT_VISIBLE_CORES=0-3", "sha256 5d41402abc4b2a76b9719d911017c592aaaaaaaa",
                 # A file error names the path, then the reason: the reason is the doctor's, never a secret.
                 "--root /etc/passwd: not a directory", "open /run/secrets/db_password: permission denied"):
        assert redact_secrets(text) == text
    # The same names as keys are still secrets, also with `=` right after a path.
    assert redact_secrets("passwd: hunter2") == "passwd: [REDACTED]"
    assert redact_secrets("/srv/app/token=abc123") == "/srv/app/token=[REDACTED]"


def test_a_root_that_is_a_file_is_named_with_its_reason() -> None:
    """`check --root /etc/passwd` says why it refuses; redaction once took the reason for a password."""
    run = run_cli(["check", "--root", "/etc/passwd"])
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == "error: --root /etc/passwd: not a directory\n"


def _plant(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A host whose files, device holder command line and a copied compile log hold every secret form."""
    everything = "\n".join(text for _, text, _ in SECRET_FORMS)
    cmdline = " ".join(text for form, text, _ in SECRET_FORMS if form.startswith("--") or "curl" in form
                       or "mysql" in form)
    root = build_host(tmp_path / "root", HostSpec(holders=[Holder(777, "python", cmdline, (0,))]))
    (root / "etc/pip.conf").write_text(f"[global]\n{everything}\n")
    (root / "proc/cmdline").write_text(SECRET_FORMS[-1][1] + "\n")
    log = root / "tmp/ubuntu/neuroncc_compile_workdir/50f29840-cfac-49a2-8d40-8b0369b8618f/log-neuron-cc.txt"
    log.parent.mkdir(parents=True)
    log.write_text(everything)
    environ = {"HF_TOKEN": "hf_QwErTyUiOpAsDfGhJkLzXcVbNm12", "AWS_SECRET_ACCESS_KEY": SECRET_FORMS[1][1].split()[-1],
               "AWS_SESSION_TOKEN": "IQoJb3JpZ2luX2VjEBoaCXVzLWVhc3QtMSJHMEUCIQD", "NEURON_CC_FLAGS":
               "--password pw998877", "PYTHONSTARTUP_TOKEN": "tk112233445566",
               "XLA_DB_URL": "mysql -u root -pMyS3cretPass", "PJRT_X": "https://aws:cOdEaRtIfAcT@repo.example/simple"}
    return root, environ


def _secrets_in(text: str) -> list[str]:
    return [form for form, _, secret in SECRET_FORMS if secret in text]


def test_planted_secrets_never_reach_check_json(tmp_path: Path) -> None:
    root, environ = _plant(tmp_path)
    _, report, _ = check_json(["--root", str(root)], env=cli_env(environ))
    text = str(report)
    assert _secrets_in(text) == []
    assert MARK in report["facts"]["host"]["snapshot"]["holders"][0]["cmdline"]


def test_planted_secrets_never_reach_the_bundle(tmp_path: Path) -> None:
    root, environ = _plant(tmp_path)
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "neuron-ls").write_text("#!/bin/sh\ncat <<'EOF'\n" + "\n".join(t for _, t, _ in SECRET_FORMS) + "\nEOF\n")
    (tools / "neuron-ls").chmod(0o755)
    archive = tmp_path / "b.tar.gz"
    result = run_cli(["bundle", "--root", str(root), "-o", str(archive), "--max-time", "60"],
                     env=cli_env({**environ, "PATH": f"{tools}:{os.environ['PATH']}"}), timeout=180)
    assert result.returncode == 0, result.stderr
    leaks = {}
    with tarfile.open(archive) as bundle:
        names = bundle.getnames()
        for member in bundle.getmembers():
            extracted = bundle.extractfile(member)
            data = extracted.read() if extracted else b""
            data = gzip.decompress(data) if member.name.endswith(".gz") else data
            found = _secrets_in(data.decode("utf-8", errors="replace"))
            if found:
                leaks[member.name] = found
    assert leaks == {}
    assert any(name.endswith("files/proc/cmdline") for name in names)
    assert any("log-neuron-cc.txt" in name for name in names)


def test_live_bundle_command_output_is_redacted(tmp_path: Path) -> None:
    """Commands run only on the live host: a fake neuron-ls on PATH prints every form."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("neuron-ls", "dkms"):
        (tools / tool).write_text("#!/bin/sh\ncat <<'EOF'\n" + "\n".join(t for _, t, _ in SECRET_FORMS) + "\nEOF\n")
        (tools / tool).chmod(0o755)
    archive = tmp_path / "live.tar.gz"
    environ = {"PATH": f"{tools}:{os.environ['PATH']}", "HF_TOKEN": "hf_QwErTyUiOpAsDfGhJkLzXcVbNm12"}
    result = run_cli(["bundle", "-o", str(archive), "--max-time", "60", "--command-timeout", "5"],
                     env=cli_env(environ), timeout=180)
    assert result.returncode == 0, result.stderr
    with tarfile.open(archive) as bundle:
        commands = [member for member in bundle.getmembers() if "/commands/" in member.name]
        assert any("neuron-ls" in member.name for member in commands)
        for member in bundle.getmembers():
            extracted = bundle.extractfile(member)
            data = extracted.read() if extracted else b""
            data = gzip.decompress(data) if member.name.endswith(".gz") else data
            assert _secrets_in(data.decode("utf-8", errors="replace")) == [], member.name


def test_explain_never_echoes_a_secret_from_the_log(tmp_path: Path) -> None:
    """The `Seen in` line is the user's log line, which may hold a token or a URL's credentials."""
    log = tmp_path / "run.log"
    log.write_text("export HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123 && torchrun "
                   "https://bob:s3cr3tpw@example.invalid/x -- RuntimeError: neuronx-cc failed with -9\n")
    for arguments in (["explain", str(log)], ["explain", str(log), "--json"]):
        result = run_cli(arguments)
        assert result.returncode == 0, result.stderr
        assert "neuronx-cc failed with -9" in result.stdout
        assert "hf_abcdefghijklmnopqrstuvwxyz0123" not in result.stdout and "s3cr3tpw" not in result.stdout


def test_a_failed_manifest_update_never_prints_the_urls_credentials() -> None:
    """Every error line passes the redactor (a mirror URL with a token in it)."""
    result = run_cli(["manifests", "update", "--url", "https://user:t0ps3cr3t@127.0.0.1:9/n2-manifest.json",
                      "--timeout", "3"], env=cli_env({"NEURONDOCTOR_MANIFESTS": "/nonexistent"}))
    assert result.returncode != 0 and "t0ps3cr3t" not in result.stderr + result.stdout, result.stderr
    assert "127.0.0.1" in result.stderr


@pytest.mark.skipif(os.geteuid() != 0, reason="bootstrap --apply runs as root only (CI runs the tests as root)")
def test_a_failed_bootstrap_command_never_shows_a_secret_it_printed(tmp_path: Path) -> None:
    """A failed command's output reaches the summary line, the status file's `output_tail` and, with
    -v, the log: an apt that prints a proxy's password, a token or a private key spread over lines leaks none."""
    from tests.host_simulator import HostSimulator

    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge", release="2.31.1"))
    simulator = HostSimulator(root, tmp_path / "sim")
    failing = tmp_path / "failing"
    failing.mkdir()
    planted = "\n".join(text for _, text, _ in SECRET_FORMS)
    (failing / "planted.txt").write_text(planted + "\nE: Could not connect to http://u:pr0xyPw@proxy.internal:3128\n")
    apt_mark = failing / "apt-mark"
    apt_mark.write_text(f"#!/bin/sh\ncat {failing / 'planted.txt'} >&2\nexit 100\n")
    apt_mark.chmod(0o755)
    env = simulator.env(cli_env())
    env["PATH"] = f"{failing}:{env['PATH']}"
    status = tmp_path / "bootstrap.json"
    shown = ""
    for extra in ([], ["-v"], ["--json"]):
        result = run_cli(["bootstrap", "--release", "2.33.0", "--venv", "/opt/v", "--root", str(root), "--apply",
                          "--status-file", str(status), *extra], env=env, timeout=300)
        assert result.returncode == 1, result.stderr
        shown += result.stdout + result.stderr + status.read_text()
    assert "Could not connect to http://[REDACTED]@proxy.internal:3128" in shown  # the cause, its secret cut
    for form, _, secret in [*SECRET_FORMS, ("proxy password", "", "pr0xyPw")]:
        assert secret not in shown, form
