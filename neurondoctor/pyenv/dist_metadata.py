"""Reads what pip leaves in site-packages (`*.dist-info`, `*.egg-info`) without importing anything.

Only the metadata headers are parsed (name, version, Requires-Dist), by hand: `email.parser` and
`importlib.metadata` cost more than the whole scan (docs/measured.md). Garbage becomes a recorded
problem on the distribution, never an exception. Every file is read through the environment's filesystem view
(`RootFS`), so under `--root` a METADATA linked to `/etc/shadow` reads the root's copy, and a FIFO in a
dist-info is "unreadable", never a hang.
"""

from __future__ import annotations

import re
from typing import Optional

from neurondoctor import json_data
from neurondoctor.facts.python_env import Distribution, TorchBuild
from neurondoctor.host.rootfs import RootFS
from neurondoctor.python_packaging import canonical_name

METADATA_LIMIT = 1 << 20
PLACEHOLDER_MARKER = b"WRONG PACKAGE"
_SMALL_FILE = 8192
# top_level.txt names importable modules; anything else (a path, a NUL byte) is not followed.
_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def _read_bytes(fs: RootFS, path: str, limit: int) -> Optional[bytes]:
    try:
        return fs.read_bytes(path, limit)
    except (OSError, ValueError):  # ValueError: a NUL byte in a name read from metadata
        return None


def _read_small_text(fs: RootFS, path: str) -> Optional[str]:
    data = _read_bytes(fs, path, 64 * 1024)
    return None if data is None else data.decode("utf-8", errors="replace")


def parse_metadata_headers(data: bytes) -> tuple[dict[str, str], list[str], list[str]]:
    """(single-valued headers, Requires-Dist values, problems) from a METADATA/PKG-INFO file.

    Headers end at the first blank line (RFC 822 as in the core metadata spec); continuation lines
    start with white space. Unknown or malformed lines are skipped and counted as a problem.
    """
    text = data.decode("utf-8", errors="replace")
    headers: dict[str, str] = {}
    requires: list[str] = []
    problems: list[str] = []
    last_key: Optional[str] = None
    malformed = 0
    for line in text.splitlines():
        if not line.strip():
            break
        if line[0] in " \t" and last_key is not None:
            if last_key in headers:
                headers[last_key] += " " + line.strip()
            continue
        key, separator, value = line.partition(":")
        if not separator or not key or " " in key.strip():
            malformed += 1
            last_key = None
            continue
        key = key.strip().lower()
        last_key = key
        if key == "requires-dist":
            requires.append(value.strip())
        elif key not in headers:
            headers[key] = value.strip()
    if malformed:
        problems.append(f"{malformed} malformed metadata line(s)")
    return headers, requires, problems


def _name_version_from_dirname(entry_name: str) -> tuple[str, str]:
    stem = entry_name.rsplit(".", 1)[0]
    name, _, version = stem.partition("-")
    return name, version.split("-")[0]


def _direct_url(fs: RootFS, path: str) -> tuple[Optional[str], bool]:
    text = _read_small_text(fs, path)
    if text is None:
        return None, False
    try:
        document = json_data.loads(text)
    except ValueError:
        return None, False
    if not isinstance(document, dict):
        return None, False
    url = document.get("url")
    dir_info = document.get("dir_info")
    editable = isinstance(dir_info, dict) and bool(dir_info.get("editable"))
    return (str(url) if url is not None else None), editable


def _placeholder_code(fs: RootFS, site: str, top_level: list[str]) -> bool:
    """PyPI's placeholder packages are one line: `raise ImportError("WRONG PACKAGE. ...")`."""
    for name in top_level[:3]:
        data = _read_bytes(fs, f"{site}/{name}/__init__.py", 512)
        if data is not None and PLACEHOLDER_MARKER in data:
            return True
    return False


def _listing(fs: RootFS, path: str) -> Optional[set[str]]:
    """File names in a metadata directory (one syscall instead of a failed open per absent file)."""
    try:
        return set(fs.listdir(path))
    except (OSError, ValueError):
        return None


def read_distribution(fs: RootFS, site: str, entry_name: str) -> Optional[Distribution]:
    """The distribution recorded by `site/entry_name` (in-view paths), or None when the entry is not metadata."""
    meta_path = f"{site}/{entry_name}"
    if entry_name.endswith(".dist-info"):
        # Always a directory: its files are opened by name, an absent one costs one failed `lstat`, less than
        # listing the directory (a DLAMI's five venvs of 300 records each must check within twice one's time).
        kind, metadata_name, files = "dist-info", "METADATA", None
    elif entry_name.endswith(".egg-info"):
        kind, metadata_name, files = "egg-info", "PKG-INFO", _listing(fs, meta_path)
    else:
        return None
    is_directory = files is not None or kind == "dist-info"  # an egg-info may be a single PKG-INFO file
    metadata_file = f"{meta_path}/{metadata_name}" if is_directory else meta_path
    fallback_name, fallback_version = _name_version_from_dirname(entry_name)
    problems: list[str] = []
    headers: dict[str, str] = {}
    requires: list[str] = []
    data = _read_bytes(fs, metadata_file, METADATA_LIMIT) if files is None or metadata_name in files else None
    if data is None:
        problems.append(f"{metadata_name} missing or unreadable")
    else:
        headers, requires, header_problems = parse_metadata_headers(data)
        problems.extend(header_problems)
    display_name = headers.get("name") or fallback_name
    version = headers.get("version") or fallback_version
    if data is not None and ("name" not in headers or "version" not in headers):
        problems.append(f"{metadata_name} has no Name/Version header; using the directory name")
    def present(name: str) -> bool:
        return is_directory and (files is None or name in files)

    installer_text = _read_small_text(fs, f"{meta_path}/INSTALLER") if present("INSTALLER") else None
    top_text = _read_small_text(fs, f"{meta_path}/top_level.txt") if present("top_level.txt") else None
    top_level = [line.strip() for line in (top_text or "").splitlines() if _MODULE_NAME.match(line.strip())]
    url, editable = (_direct_url(fs, f"{meta_path}/direct_url.json") if present("direct_url.json")
                     else (None, False))
    placeholder = False
    # Placeholders are tiny, and squat Neuron names (compat.json `placeholders`: torch-neuronx, neuronx-cc,
    # libneuronxla, transformers-neuronx): only those have their code read, not every small package's.
    if data is not None and len(data) < _SMALL_FILE and "neuron" in display_name.lower():
        module_guess = canonical_name(display_name).replace("-", "_")
        placeholder = PLACEHOLDER_MARKER in data or _placeholder_code(
            fs, site, top_level or ([module_guess] if _MODULE_NAME.match(module_guess) else []))
    return Distribution(
        name=canonical_name(display_name),
        display_name=display_name,
        version=version,
        location=fs.shown_path(site),
        metadata_dir=fs.shown_path(meta_path),
        kind=kind,
        installer=(installer_text or "").strip() or None,
        requires=requires,
        direct_url=url,
        editable=editable,
        top_level=top_level,
        placeholder=placeholder,
        problems=problems,
    )


def read_torch_build(fs: RootFS, site: str, package: str = "torch") -> Optional[TorchBuild]:
    """`torch/version.py` as text: PyPI's x86_64 wheel says `__version__ = '2.9.0+cu128'`, `cuda = '12.8'`.
    torchvision's and torchaudio's carry `__version__ = '0.24.0+cu128'` the same way. Only top-level assignments
    of literals count: torchvision's `    cuda = _check_cuda_version()` under an `if` is not a build fact."""
    version_file = f"{site}/{package}/version.py"
    shown = fs.shown_path(version_file)
    text = _read_small_text(fs, version_file)
    if text is None:
        return TorchBuild(path=shown) if fs.is_dir(f"{site}/{package}") else None
    build = TorchBuild(path=shown)
    for line in text.splitlines():
        key, separator, raw = line.partition("=")
        if not separator or line[:1].isspace():
            continue
        key = key.split(":", 1)[0].strip()
        raw = raw.strip()
        literal = raw[:1] in ("'", '"') and raw[-1:] == raw[:1]
        value = raw[1:-1] if literal else raw
        if not literal and value != "None":
            continue
        if key == "__version__":
            build.version = value
        elif key == "cuda":
            build.cuda = None if value in ("None", "") else value
        elif key == "hip":
            build.hip = None if value in ("None", "") else value
    return build


COMPANIONS = ("torchvision", "torchaudio")


MAX_DISTRIBUTIONS = 10_000


def scan_site_dir(fs: RootFS, site: str, follow_links: bool = True) -> tuple[list[Distribution], Optional[str]]:
    """All distributions recorded in one site-packages directory (in-view path), and an error when it is
    unreadable. More than MAX_DISTRIBUTIONS records (no real environment has them) are cut, and said so."""
    try:
        names = fs.listdir(site)
    except FileNotFoundError:
        return [], "missing"
    except OSError as error:
        return [], f"unreadable: {error.strerror or error}"
    records = [name for name in names if name.endswith((".dist-info", ".egg-info"))]
    links: Optional[set[str]] = set()
    if not follow_links:
        try:
            links = fs.links_in(site)
        except OSError:
            links = None  # asked entry by entry below
    distributions: list[Distribution] = []
    for name in records[:MAX_DISTRIBUTIONS]:
        if not follow_links and (fs.is_link(f"{site}/{name}") if links is None else name in links):
            continue
        dist = read_distribution(fs, site, name)
        if dist is not None:
            distributions.append(dist)
    if len(records) > MAX_DISTRIBUTIONS:
        return distributions, f"partial: {len(records)} install records, only the first {MAX_DISTRIBUTIONS} read"
    return distributions, None
