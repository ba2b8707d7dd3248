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

from neurondoctor.facts import Distribution, TorchBuild
from neurondoctor.neuron_version import normalize_package_name

METADATA_LIMIT = 1 << 20
PLACEHOLDER_MARKER = b"WRONG PACKAGE"
_SMALL_FILE = 8192
# top_level.txt names importable modules; anything else (a path, a NUL byte) is not followed.
_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def _read_bytes(path: Path, limit: int) -> Optional[bytes]:
    try:
        with path.open("rb") as handle:
            return handle.read(limit)
    except (OSError, ValueError):  # ValueError: a NUL byte in a name read from metadata
        return None


def _read_small_text(path: Path) -> Optional[str]:
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


def _direct_url(meta_dir: Path) -> tuple[Optional[str], bool]:
    text = _read_small_text(meta_dir / "direct_url.json")
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


def _placeholder_code(site: Path, top_level: list[str]) -> bool:
    """PyPI's placeholder packages are one line: `raise ImportError("WRONG PACKAGE. ...")`."""
    for name in top_level[:3]:
        data = _read_bytes(site / name / "__init__.py", 512)
        if data is not None and PLACEHOLDER_MARKER in data:
            return True
    return False


def read_distribution(site: Path, entry_name: str) -> Optional[Distribution]:
    """The distribution recorded by `site/entry_name`, or None when the entry is not metadata at all."""
    meta_path = site / entry_name
    if entry_name.endswith(".dist-info"):
        kind, metadata_file = "dist-info", meta_path / "METADATA"
    elif entry_name.endswith(".egg-info"):
        kind = "egg-info"
        metadata_file = meta_path / "PKG-INFO" if meta_path.is_dir() else meta_path
    else:
        return None
    fallback_name, fallback_version = _name_version_from_dirname(entry_name)
    problems: list[str] = []
    headers: dict[str, str] = {}
    requires: list[str] = []
    data = _read_bytes(metadata_file, METADATA_LIMIT)
    if data is None:
        problems.append(f"{metadata_file.name} missing or unreadable")
    else:
        headers, requires, header_problems = parse_metadata_headers(data)
        problems.extend(header_problems)
    display_name = headers.get("name") or fallback_name
    version = headers.get("version") or fallback_version
    if "name" not in headers or "version" not in headers:
        problems.append(f"{metadata_file.name} has no Name/Version header; using the directory name")
    installer_text = _read_small_text(meta_path / "INSTALLER") if kind == "dist-info" else None
    top_text = _read_small_text(meta_path / "top_level.txt") if meta_path.is_dir() else None
    top_level = [line.strip() for line in (top_text or "").splitlines() if _MODULE_NAME.match(line.strip())]
    url, editable = _direct_url(meta_path) if kind == "dist-info" else (None, False)
    placeholder = bool(data is not None and len(data) < _SMALL_FILE and PLACEHOLDER_MARKER in data)
    module_guess = normalize_package_name(display_name).replace("-", "_")
    placeholder = placeholder or _placeholder_code(
        site, top_level or ([module_guess] if _MODULE_NAME.match(module_guess) else []))
    return Distribution(
        name=normalize_package_name(display_name),
        display_name=display_name,
        version=version,
        location=str(site),
        metadata_dir=str(meta_path),
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
