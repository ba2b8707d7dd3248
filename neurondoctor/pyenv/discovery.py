"""Which environments `check` inspects when none is named: every layout, in bounded places.

On a live host: the active environment ($VIRTUAL_ENV, $CONDA_PREFIX), the invoking user's home ($SUDO_USER's under
sudo), /root, /opt, and the system interpreters. Under `--root`: every home, /opt and the system interpreters
(a DLC image has no venv: its Python is `/usr/local/bin/python` or `/opt/conda`). In a home: venvs and conda
installs one or two folders down, the Neuron manual venvs (`~/aws_neuron_venv_*`), pyenv versions, pipx, poetry
and pipenv caches, conda's `envs/`, and the interpreters Jupyter kernelspecs name. At most MAX_ENVIRONMENTS are
listed, the rest counted as cut.

What a place holds decides what becomes of it (check_run): the active environment and the Neuron places (DLAMI
`/opt/aws_neuronx_venv_*`, `~/aws_neuron_venv_*`) are always judged; any other environment is judged when it holds
torch or a Neuron package, and otherwise only listed in the facts. On a live host with nothing found, the `python3`
on PATH is inspected live, so a laptop or CI machine still gets its Python line.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Optional

from neurondoctor import json_data
from neurondoctor.host.path_control import controlled_by_another_user
from neurondoctor.host.rootfs import RootFS
from neurondoctor.pyenv.layouts import layout_of

MAX_ENVIRONMENTS = 1000
MAX_LISTED = 2000  # entries looked at per folder level
MAX_EXAMINED = 20000  # folder entries looked at in one discovery, all places together
NEURON_REASON = "Neuron environment location"
ACTIVE_REASON = "active environment (${})"
PATH_REASON = "python3 on PATH"

DISCOVERY_GLOBS = (
    ("/opt", "aws_neuronx_venv_*"),
    ("/home/*", "aws_neuron_venv_*"),
    ("/root", "aws_neuron_venv_*"),
)
# Below a home: (folder pattern relative to it, why). The managers' folders first, so that a home of many folders
# spends its share of the walk on them before the generic one or two levels down.
_HOME_PLACES = (
    (".pyenv/versions/*", "pyenv"),
    (".local/pipx/venvs/*", "pipx"),
    (".local/share/pipx/venvs/*", "pipx"),
    (".cache/pypoetry/virtualenvs/*", "poetry"),
    (".local/share/virtualenvs/*", "pipenv"),
    (".conda/envs/*", "conda"),
    ("*/.venv", "a project environment"),
    ("*/envs/*", "conda"),
    ("*", "a folder in the home"),
    ("*/*", "a folder in the home"),
)
_OPT_PLACES = (("*", "a folder in /opt"), ("*/envs/*", "conda"))
_SYSTEM_PREFIXES = ("/usr/local", "/usr")
_KERNEL_FOLDERS = ("/usr/local/share/jupyter/kernels", "/usr/share/jupyter/kernels")


@dataclass(frozen=True)
class DiscoveredEnvironment:
    """A place to inspect: an environment folder (static) or an interpreter (live), why it was chosen, its layout,
    and whether it is judged whatever it holds (the active environment, the Neuron places)."""

    path: str
    live: bool
    reason: str
    kind: Optional[str] = None
    always_judged: bool = True


@dataclass
class Discovery:
    """The environments one discovery found, and whether it stopped at its bound (a report says so)."""

    found: list[DiscoveredEnvironment] = field(default_factory=list)
    cut: bool = False  # more than MAX_ENVIRONMENTS were there


def _expand(fs: RootFS, directory: str, pattern: str) -> list[str]:
    if "*" not in directory:
        return fs.glob(directory, pattern)
    parent, _, child_pattern = directory.rpartition("/")
    found: list[str] = []
    for child in fs.glob(parent or "/", child_pattern):
        found.extend(fs.glob(child, pattern))
    return found


def _operator_controlled(fs: RootFS, inner: str) -> bool:
    """The environment's folder, its pyvenv.cfg and site-packages, and every folder and link on the way to each:
    none owned by another user than root or writable by one (path_control's rule, the one the compile cache is
    judged by)."""
    libraries = fs.glob(f"{inner}/lib", "python*")
    paths = [inner, f"{inner}/pyvenv.cfg", *libraries, *(f"{path}/site-packages" for path in libraries)]
    return not any(controlled_by_another_user(fs, path) for path in paths)


def _neuron_places(fs: RootFS) -> list[str]:
    return [inner for directory, pattern in DISCOVERY_GLOBS for inner in _expand(fs, directory, pattern)
            if fs.exists(f"{inner}/pyvenv.cfg") or fs.exists(f"{inner}/bin/python")]


def operator_environments(fs: RootFS) -> list[DiscoveredEnvironment]:
    """What unattended `health` judges when health.conf names no environment: the DLAMI places under /opt that only
    root controls. An environment an unprivileged user can create or edit (a home venv, an /opt venv
    of theirs) never changes a node's verdict or drains it: with a shared /home, it would drain every node."""
    return [DiscoveredEnvironment(str(fs.host_path(inner)), False, "root-owned Neuron environment location")
            for inner in _neuron_places(fs) if inner.startswith("/opt/") and _operator_controlled(fs, inner)]


def _invoking_home(environ: Mapping[str, str]) -> Optional[str]:
    """The home of whoever ran the command: under sudo, $SUDO_USER's, not root's."""
    user = environ.get("SUDO_USER")
    if user and user != "root":
        try:
            import pwd

            return pwd.getpwnam(user).pw_dir
        except (ImportError, KeyError):
            pass
    home = (environ.get("HOME") or "").rstrip("/")
    return home or None


def _homes(fs: RootFS, environ: Mapping[str, str]) -> list[str]:
    if fs.is_live:
        homes = [home for home in (_invoking_home(environ), "/root") if home]
    else:
        homes = [*fs.glob("/home", "*"), "/root"]
    return [home for home in dict.fromkeys(homes) if fs.is_dir(home)]


def _kernel_interpreters(fs: RootFS, folders: list[str], walk: _Walk) -> Iterator[tuple[str, str]]:
    """(environment prefix, kernel name) for each kernelspec whose `argv[0]` is an absolute interpreter path."""
    for folder in folders:
        for spec in (f"{kernel}/kernel.json" for kernel in _folders_under(fs, folder, "*", walk)):
            try:
                text = fs.read_untrusted_bytes(spec, 64 * 1024, follow_links=True).decode("utf-8", "replace")
                document = json_data.loads(text)
            except (OSError, ValueError, RecursionError):  # a nesting bomb is not a kernelspec
                continue
            argv = document.get("argv") if isinstance(document, dict) else None
            if isinstance(argv, list) and argv and isinstance(argv[0], str) and argv[0].startswith("/"):
                interpreter = PurePosixPath(argv[0])
                if interpreter.parent.name == "bin":
                    yield str(interpreter.parent.parent), spec.rsplit("/", 2)[-2]


@dataclass
class _Walk:
    """What one discovery may still look at: a home of a thousand repositories of a thousand files each is not
    walked to the end (MAX_EXAMINED entries in all); `cut` says it was stopped."""

    remaining: int = MAX_EXAMINED
    cut: bool = False

    def take(self, entries: list[str]) -> list[str]:
        taken = entries[:max(0, min(MAX_LISTED, self.remaining))]
        self.remaining -= len(taken)
        self.cut = self.cut or len(taken) < len(entries)
        return taken


def _folders_under(fs: RootFS, base: str, pattern: str, walk: _Walk) -> list[str]:
    """The folders below `base` that a slash-separated glob names, one level at a time, within the walk's bounds."""
    level = [base]
    for part in pattern.split("/"):
        level = [path for folder in level for path in walk.take(fs.glob(folder, part)) if fs.is_dir(path)]
    return level


def _candidates(fs: RootFS, environ: Mapping[str, str], walk: _Walk) -> Iterator[tuple[str, str, bool]]:
    """(in-view prefix, reason, always judged), Neuron places first, in a stable order; duplicates are dropped by
    the caller."""
    for inner in _neuron_places(fs):
        yield inner, NEURON_REASON, True
    homes = _homes(fs, environ)
    places = [(home, pattern, reason) for home in homes for pattern, reason in _HOME_PLACES]
    places += [("/opt", pattern, reason) for pattern, reason in _OPT_PLACES]
    for base, pattern, reason in places:
        for inner in _folders_under(fs, base, pattern, walk):
            yield inner, reason, False
    for prefix in _SYSTEM_PREFIXES:
        yield prefix, "the system interpreter", False
    kernel_folders = [*_KERNEL_FOLDERS, *(f"{home}/.local/share/jupyter/kernels" for home in homes)]
    for prefix, name in _kernel_interpreters(fs, kernel_folders, walk):
        yield prefix, f"Jupyter kernel {name}", False


def discover_environments(fs: RootFS, environ: Mapping[str, str],
                          limit: int = MAX_ENVIRONMENTS) -> Discovery:
    discovery = Discovery()
    seen: set[str] = set()
    if fs.is_live:
        for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
            active = environ.get(variable)
            if active and os.path.realpath(active) not in seen:
                seen.add(os.path.realpath(active))
                discovery.found.append(DiscoveredEnvironment(active, False, ACTIVE_REASON.format(variable),
                                                             layout_of(fs, active)))
    walk = _Walk()
    for inner, reason, always in _candidates(fs, environ, walk):
        resolved = fs.resolve(inner)
        if resolved is None:
            continue
        key = str(resolved)
        if key in seen:
            continue
        # Named where it really is: a link in someone's home (`~/out -> /`) must not become the path fix lines
        # name, which its owner could point elsewhere before root pastes them.
        inner = fs.inner_path(resolved) or inner if not fs.is_live else key
        kind = layout_of(fs, inner)
        if kind is None and reason.startswith("Jupyter kernel"):
            kind = "jupyter-kernel" if _has_python(fs, inner) else None
        if kind is None:
            continue
        seen.add(key)
        if len(discovery.found) >= limit:
            discovery.cut = True
            break
        discovery.found.append(DiscoveredEnvironment(str(fs.host_path(inner)), False, reason, kind, always))
    discovery.cut = discovery.cut or walk.cut
    return discovery


def path_interpreter(environ: Mapping[str, str]) -> Optional[DiscoveredEnvironment]:
    """The `python3` on PATH, inspected live on a live host where no environment is judged (a laptop, a CI
    machine), so that it still gets its Python line."""
    import shutil

    python = shutil.which("python3", path=environ.get("PATH"))
    return DiscoveredEnvironment(python, True, PATH_REASON) if python else None


def _has_python(fs: RootFS, inner: str) -> bool:
    return any(fs.exists(f"{inner}/bin/{name}") for name in ("python", "python3"))


def default_interpreter(environ: Mapping[str, str]) -> Optional[str]:
    """What a probe runs in when no `--python` is given: the active environment's interpreter, else the first Neuron
    place's (DLAMI, ~/aws_neuron_venv_*); None when there is neither."""
    fs = RootFS("/")
    for variable in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        if environ.get(variable):
            return os.path.join(environ[variable], "bin", "python")
    for inner in _neuron_places(fs):
        if os.path.exists(f"{inner}/bin/python"):
            return f"{inner}/bin/python"
    return None
