"""Builds the `SiteDir` facts for one directory on an import path: its distributions and the torch,
torchvision and torchaudio builds."""

from __future__ import annotations

from neurondoctor.facts.python_env import SiteDir
from neurondoctor.host.rootfs import RootFS
from neurondoctor.pyenv.dist_metadata import COMPANIONS, read_torch_build, scan_site_dir


def inspect_site_dir(fs: RootFS, path: str, role: str, follow_links: bool = True) -> SiteDir:
    """Read one site-packages (or PYTHONPATH) directory, an in-view path of `fs`; an unreadable one is recorded,
    not raised."""
    distributions, error = scan_site_dir(fs, path, follow_links=follow_links)
    readable = error is None or error == "missing" or error.startswith("partial")
    site = SiteDir(path=fs.shown_path(path), role=role, readable=readable, error=error,
                   distributions=distributions)
    if readable and error != "missing":
        site.torch_build = read_torch_build(fs, path)
        for companion in COMPANIONS:
            build = read_torch_build(fs, path, companion)
            if build is not None:
                site.companion_builds[companion] = build
    return site
