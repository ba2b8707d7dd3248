"""Builds the `SiteDir` facts for one directory on an import path: its distributions and torch build."""

from __future__ import annotations

from pathlib import Path

from neurondoctor.facts.python_env import SiteDir
from neurondoctor.pyenv.dist_metadata import read_torch_build, scan_site_dir


def inspect_site_dir(path: Path, role: str, follow_links: bool = True) -> SiteDir:
    """Read one site-packages (or PYTHONPATH) directory; an unreadable one is recorded, not raised."""
    distributions, error = scan_site_dir(path, follow_links=follow_links)
    site = SiteDir(path=str(path), role=role, readable=error is None or error == "missing", error=error,
                   distributions=distributions)
    if error is None:
        site.torch_build = read_torch_build(path)
    return site
