"""Facts about one Python environment: its import path, distributions, torch build and pip configuration, read
statically (`--venv`) or live (`--python`) by `pyenv` (docs/contracts.md §4)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from neurondoctor.python_packaging import metadata_problem

# Where a site-packages directory sits in an interpreter's import order.
SITE_ROLE_VENV = "venv"
SITE_ROLE_USER = "user-site"
SITE_ROLE_PYTHONPATH = "pythonpath"
SITE_ROLE_SYSTEM = "system-site"
SITE_ROLE_OTHER = "path"

# Environment layouts (pyenv/layouts.py tells them apart); the installations have their own interpreter and no
# pyvenv.cfg, so a venv's rules for "interpreter gone" and "damaged" do not apply to them.
KINDS = ("venv", "uv", "conda", "system", "pyenv", "project", "pipx", "jupyter-kernel")
INSTALLATION_KINDS = ("conda", "system", "pyenv", "jupyter-kernel")


@dataclass
class Distribution:
    """One installed distribution, as its `*.dist-info` / `*.egg-info` says."""

    name: str
    display_name: str
    version: str
    location: str
    metadata_dir: str
    kind: str = "dist-info"
    installer: Optional[str] = None
    requires: list[str] = field(default_factory=list)
    direct_url: Optional[str] = None
    editable: bool = False
    top_level: list[str] = field(default_factory=list)
    placeholder: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def invalid_metadata(self) -> str:
        """Why its name or version is not valid metadata ('' when it is): see `SiteDir.judged_distributions`."""
        return metadata_problem(self.display_name, self.version)


@dataclass
class TorchBuild:
    """torch's build flavour read from `torch/version.py` as text (never imported)."""

    path: str
    version: Optional[str] = None
    cuda: Optional[str] = None
    hip: Optional[str] = None

    @property
    def flavour(self) -> str:
        """`cuda`, `rocm`, `cpu`, or `unknown` when version.py could not be read."""
        if self.cuda:
            return "cuda"
        if self.hip:
            return "rocm"
        if self.version is None:
            return "unknown"
        if "+cu" in self.version:
            return "cuda"
        return "cpu"


@dataclass
class SiteDir:
    """A directory on the environment's import path, in import order, with what is installed there."""

    path: str
    role: str
    readable: bool = True
    error: Optional[str] = None
    distributions: list[Distribution] = field(default_factory=list)
    torch_build: Optional[TorchBuild] = None
    companion_builds: dict[str, TorchBuild] = field(default_factory=dict)  # torchvision, torchaudio

    _judged: Optional[list[Distribution]] = field(default=None, repr=False, compare=False)

    def judged_distributions(self) -> list[Distribution]:
        """The records the rules judge and their fixes may name: all of a system site (root's, where Debian's
        packages carry Debian-style versions), and elsewhere only those whose name and version are valid
        metadata; the others are ND-VENV-004's, whose fix moves them aside, so that no command ever carries a
        name pip would read as an option or a version holding a newline. Computed once: facts do not change after
        collection, and every rule asks."""
        if self._judged is None:
            self._judged = self.distributions if self.role == SITE_ROLE_SYSTEM else [
                dist for dist in self.distributions if not dist.invalid_metadata]
        return self._judged

    def invalid_distributions(self) -> list[Distribution]:
        """The records outside a system site whose name or version is not valid metadata."""
        return [] if self.role == SITE_ROLE_SYSTEM else [d for d in self.distributions if d.invalid_metadata]


@dataclass
class PipConfigSource:
    """Index settings from one pip configuration file or environment variable."""

    origin: str
    index_url: Optional[str] = None
    extra_index_urls: list[str] = field(default_factory=list)
    find_links: list[str] = field(default_factory=list)
    constraint: Optional[str] = None
    error: Optional[str] = None


@dataclass
class PythonEnvironment:
    """One Python environment as the doctor saw it: statically (`--venv`) or live (`--python`)."""

    path: str
    mode: str
    interpreter: str
    kind: str = "venv"  # its layout: pyenv/layouts.py KINDS
    exists: bool = True
    interpreter_exists: bool = True
    interpreter_target: Optional[str] = None
    # X.Y of the interpreter the launcher really runs (its link chain followed to the file it ends at); None when
    # that file does not say. pyvenv.cfg's version is what the environment was made with, which an OS upgrade
    # that moves `python3` to another minor version leaves behind.
    interpreter_version: Optional[str] = None
    python_version: Optional[str] = None
    include_system_site_packages: bool = False
    pyvenv_cfg: dict[str, str] = field(default_factory=dict)
    site_dirs: list[SiteDir] = field(default_factory=list)
    pip_config: list[PipConfigSource] = field(default_factory=list)
    pythonpath: list[str] = field(default_factory=list)
    user_site_enabled: bool = False
    discovered_by: str = "argument"
    neurondoctor_venv: Optional[dict[str, Any]] = None
    guard_pins: Optional[dict[str, str]] = None
    problems: list[str] = field(default_factory=list)
    _effective: Optional[dict[str, Distribution]] = field(default=None, repr=False, compare=False)

    @property
    def python_major_minor(self) -> Optional[str]:
        if not self.python_version:
            return None
        parts = self.python_version.split(".")
        return ".".join(parts[:2]) if len(parts) >= 2 else None

    def own_site_dirs(self) -> list[SiteDir]:
        """The environment's own site-packages (the venv's, or an interpreter's system site-packages)."""
        own = [site for site in self.site_dirs if site.role in (SITE_ROLE_VENV,)]
        return own or [site for site in self.site_dirs if site.role == SITE_ROLE_SYSTEM]

    def effective_distributions(self) -> dict[str, Distribution]:
        """What `import` and `importlib.metadata` see: the first distribution of each name on the path. Computed
        once (the rules ask some twenty times per environment); callers do not change the mapping."""
        if self._effective is None:
            seen: dict[str, Distribution] = {}
            for site in self.site_dirs:
                for dist in site.judged_distributions():
                    seen.setdefault(dist.name, dist)
            self._effective = seen
        return self._effective

    def companion_build(self, name: str) -> Optional[TorchBuild]:
        """torchvision's or torchaudio's version.py, from the first site dir holding that package."""
        for site in self.site_dirs:
            if name in site.companion_builds:
                return site.companion_builds[name]
        return None

    def torch_build(self) -> Optional[TorchBuild]:
        """The torch that `import torch` would load: the first site dir holding a torch package."""
        for site in self.site_dirs:
            if site.torch_build is not None:
                return site.torch_build
        return None
