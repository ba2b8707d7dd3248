"""A real filesystem of 1 MiB (tmpfs) mounted for one test: what `statvfs` reports as nearly full, as root only."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


@contextmanager
def small_filesystem(path: Path, options: str = "size=1m,mode=0755") -> Iterator[Path]:
    """`path` as the mount point of a small tmpfs (1 MiB unless `options` say otherwise: `nr_inodes=…` for one
    that runs out of inodes) until the block ends; the test is skipped where it cannot be mounted (not root, or no
    mount permission in this container)."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a 1 MiB tmpfs needs root")
    path.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)],
                             capture_output=True, text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=False)
