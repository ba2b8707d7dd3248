"""Reads what pip leaves in site-packages (`*.dist-info`, `*.egg-info`) without importing anything.

Only the metadata headers are parsed (name, version, Requires-Dist), by hand: `email.parser` and
`importlib.metadata` cost more than the whole scan (machine-notes.md). Garbage becomes a recorded
problem on the distribution, never an exception.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Optional

from neurondoctor.facts.python_env import Distribution, TorchBuild
from neurondoctor.neuron_version import normalize_package_name

METADATA_LIMIT = 1 << 20
PLACEHOLDER_MARKER = b"WRONG PACKAGE"
_SMALL_FILE = 8192
# top_level.txt names importable modules; anything else (a path, a NUL byte) is not followed.
_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def _read_bytes(path: str | Path, limit: int) -> Optional[bytes]:
    try:
        with open(path, "rb") as handle:
            return handle.read(limit)
    except (OSError, ValueError):  # ValueError: a NUL byte in a name read from metadata
        return None


def _read_small_text(path: str | Path) -> Optional[str]:
    data = _read_bytes(path, 64 * 1024)
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


def _direct_url(path: str) -> tuple[Optional[str], bool]:
    text = _read_small_text(path)
    if text is None:
        return None, False
    try:
        document = json.loads(text)
    except ValueError:
        return None, False
    if not isinstance(document, dict):
        return None, False
    url = document.get("url")
    dir_info = document.get("dir_info")
    editable = isinstance(dir_info, dict) and bool(dir_info.get("editable"))
    return (str(url) if url is not None else None), editable


def _placeholder_code(site: str, top_level: list[str]) -> bool:
    """PyPI's placeholder packages are one line: `raise ImportError("WRONG PACKAGE. ...")`."""
    for name in top_level[:3]:
        data = _read_bytes(os.path.join(site, name, "__init__.py"), 512)
        if data is not None and PLACEHOLDER_MARKER in data:
            return True
    return False


def _listing(path: str) -> Optional[set[str]]:
    """File names in a metadata directory (one syscall instead of a failed open per absent file)."""
    try:
        return set(os.listdir(path))
    except OSError:
        return None


def read_distribution(site: Path, entry_name: str) -> Optional[Distribution]:
    """The distribution recorded by `site/entry_name`, or None when the entry is not metadata at all."""
    site_text = str(site)
    meta_path = os.path.join(site_text, entry_name)
    files = _listing(meta_path)
    if entry_name.endswith(".dist-info"):
        kind, metadata_name = "dist-info", "METADATA"
    elif entry_name.endswith(".egg-info"):
        kind, metadata_name = "egg-info", "PKG-INFO"
    else:
        return None
    is_directory = files is not None or kind == "dist-info"  # an egg-info may be a single PKG-INFO file
    metadata_file = os.path.join(meta_path, metadata_name) if is_directory else meta_path
    fallback_name, fallback_version = _name_version_from_dirname(entry_name)
    problems: list[str] = []
    headers: dict[str, str] = {}
    requires: list[str] = []
    data = _read_bytes(metadata_file, METADATA_LIMIT) if files is None or metadata_name in files else None
    if data is None:
        problems.append(f"{metadata_name} missing or unreadable")
    else:
        headers, requires, header_problems = parse_metadata_headers(data)
        problems.extend(header_problems)
    display_name = headers.get("name") or fallback_name
    version = headers.get("version") or fallback_version
    if data is not None and ("name" not in headers or "version" not in headers):
        problems.append(f"{metadata_name} has no Name/Version header; using the directory name")
    present = files or set()
    installer_text = _read_small_text(os.path.join(meta_path, "INSTALLER")) if "INSTALLER" in present else None
    top_text = _read_small_text(os.path.join(meta_path, "top_level.txt")) if "top_level.txt" in present else None
    top_level = [line.strip() for line in (top_text or "").splitlines() if _MODULE_NAME.match(line.strip())]
    url, editable = (_direct_url(os.path.join(meta_path, "direct_url.json")) if "direct_url.json" in present
                     else (None, False))
    placeholder = False
    if data is not None and len(data) < _SMALL_FILE:  # placeholders are tiny; real packages rarely are
        module_guess = normalize_package_name(display_name).replace("-", "_")
        placeholder = PLACEHOLDER_MARKER in data or _placeholder_code(
            site_text, top_level or ([module_guess] if _MODULE_NAME.match(module_guess) else []))
    return Distribution(
        name=normalize_package_name(display_name),
        display_name=display_name,
        version=version,
        location=site_text,
        metadata_dir=meta_path,
        kind=kind,
        installer=(installer_text or "").strip() or None,
        requires=requires,
        direct_url=url,
        editable=editable,
        top_level=top_level,
        placeholder=placeholder,
        problems=problems,
    )


def read_torch_build(site: Path) -> Optional[TorchBuild]:
    """`torch/version.py` as text: PyPI's x86_64 wheel says `__version__ = '2.9.0+cu128'`, `cuda = '12.8'`."""
    version_file = site / "torch" / "version.py"
    text = _read_small_text(version_file)
    if text is None:
        return TorchBuild(path=str(version_file)) if (site / "torch").is_dir() else None
    build = TorchBuild(path=str(version_file))
    for line in text.splitlines():
        key, separator, value = line.partition("=")
        if not separator:
            continue
        key = key.split(":", 1)[0].strip()
        value = value.strip().strip("'\"")
        if key == "__version__":
            build.version = value
        elif key == "cuda":
            build.cuda = None if value in ("None", "") else value
        elif key == "hip":
            build.hip = None if value in ("None", "") else value
    return build


def scan_site_dir(site: Path, follow_links: bool = True) -> tuple[list[Distribution], Optional[str]]:
    """All distributions recorded in one site-packages directory, and an error when it is unreadable."""
    try:
        entries = sorted(os.scandir(site), key=lambda entry: entry.name)
    except FileNotFoundError:
        return [], "missing"
    except OSError as error:
        return [], f"unreadable: {error.strerror or error}"
    distributions: list[Distribution] = []
    for entry in entries:
        if not (entry.name.endswith(".dist-info") or entry.name.endswith(".egg-info")):
            continue
        if not follow_links and entry.is_symlink():
            continue
        dist = read_distribution(site, entry.name)
        if dist is not None:
            distributions.append(dist)
    return distributions, None
