"""The bundle's compiler logs come from /tmp, which anyone can write: the newest `log-neuron-cc.txt` of each
`/tmp/<user>/neuroncc_compile_workdir/<uuid>/` is taken, but a log that is a link (to a root-only file), a folder
that is a link, a FIFO where a log belongs, and anything past the search's depth are not read, and the run ends."""

from __future__ import annotations

import json
import os
import tarfile
import time
from pathlib import Path

from tests.conftest import run_cli
from tests.host_fixture import HostSpec, build_host


def _log(folder: Path, text: str, age_s: float = 0.0) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "log-neuron-cc.txt"
    log.write_text(text)
    stamp = time.time() - age_s
    os.utime(log, (stamp, stamp))
    return log


def test_compile_logs_are_taken_where_the_compiler_ran_and_no_link_is_followed(tmp_path: Path) -> None:
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge"))
    secret = root / "root" / "secret.txt"
    secret.parent.mkdir(parents=True)
    secret.write_text("ROOT-ONLY-CONTENT\n")
    secret.chmod(0o600)
    work = root / "tmp/ubuntu/neuroncc_compile_workdir"
    _log(work / "50f29840-cfac-49a2-8d40-8b0369b8618f", "ERROR [NCC_EVRF001] the newest failure\n", age_s=10)
    _log(work / "889051d2-62ba-41fa-887f-e9651545b6ee", "an older log\n", age_s=100)
    planted = root / "tmp/evil/neuroncc_compile_workdir/0000"
    planted.mkdir(parents=True)
    (planted / "log-neuron-cc.txt").symlink_to("/root/secret.txt")  # a link to a file only root reads
    (root / "tmp/linked").mkdir()
    (root / "tmp/linked/neuroncc_compile_workdir").symlink_to("/root")  # a folder that is a link
    fifo_dir = root / "tmp/fifo/neuroncc_compile_workdir/1111"
    fifo_dir.mkdir(parents=True)
    os.mkfifo(fifo_dir / "log-neuron-cc.txt")  # nobody writes it: a read would hang
    deep = root / "tmp/deep/neuroncc_compile_workdir" / "/".join(["d"] * 8)
    _log(deep, "too deep\n")
    archive = tmp_path / "support.tar.gz"
    started = time.monotonic()
    result = run_cli(["bundle", "-o", str(archive), "--root", str(root), "--max-time", "120"])
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 110
    with tarfile.open(archive) as bundle:
        logs = {name.split("/", 1)[1]: bundle.extractfile(name).read().decode()  # type: ignore[union-attr]
                for name in bundle.getnames() if name.endswith("log-neuron-cc.txt")}
        text = "".join(bundle.extractfile(name).read().decode("utf-8", "replace")  # type: ignore[union-attr]
                       for name in bundle.getnames() if bundle.getmember(name).isfile()
                       and not name.endswith(".gz"))
    assert logs == {
        "compile-logs/tmp/ubuntu/neuroncc_compile_workdir/50f29840-cfac-49a2-8d40-8b0369b8618f/log-neuron-cc.txt":
            "ERROR [NCC_EVRF001] the newest failure\n",
        "compile-logs/tmp/ubuntu/neuroncc_compile_workdir/889051d2-62ba-41fa-887f-e9651545b6ee/log-neuron-cc.txt":
            "an older log\n"}
    assert "ROOT-ONLY-CONTENT" not in text and "too deep" not in text


def test_the_archive_says_what_its_logs_say_and_a_hostile_folder_name_stays_one_line(tmp_path: Path) -> None:
    """explained.json: each collected log `explain` recognises, with the member it comes from. A compile workdir
    is named by whoever writes /tmp: a newline and a terminal escape in its name never make a second line of the
    bundle's output, nor a control sequence on the terminal."""
    root = build_host(tmp_path / "host", HostSpec(instance_type="trn1.32xlarge"))
    killed = ("2023-12-26T08:37:54Z USER 26191 [neuronxcc.driver.CommandDriver]: [F137] neuronx-cc was forcibly "
              "killed - This most commonly occurs due to insufficient system memory.\n")  # aws-neuron-samples#64
    hostile = "x\nFAKE: healthy\x1b[2J"
    _log(root / "tmp/ubuntu/neuroncc_compile_workdir" / hostile, killed, age_s=5)
    _log(root / "tmp/ubuntu/neuroncc_compile_workdir/889051d2", "Compiler status PASS\n", age_s=50)
    archive = tmp_path / "support.tar.gz"
    result = run_cli(["bundle", "-o", str(archive), "--root", str(root), "--max-time", "120"])
    assert result.returncode == 0, result.stderr
    with tarfile.open(archive) as bundle:
        [name] = [name for name in bundle.getnames() if name.endswith("/explained.json")]
        document = json.loads(bundle.extractfile(name).read())  # type: ignore[union-attr]
    assert document["logs_read"] == 2
    [entry] = document["explained"]
    assert entry["category"] == "compile-failure" and "forcibly killed" in entry["matched"]
    assert entry["member"].endswith(hostile + "/log-neuron-cc.txt")
    lines = result.stdout.splitlines()
    said = [line for line in lines if "compile-failure" in line]
    assert len(said) == 1 and "\\n" in said[0] and "\x1b" not in result.stdout, result.stdout
    assert not any(line.startswith("FAKE") for line in lines)
