"""`neurondoctor manifests update`: fetch a newer AWS release manifest, validate it, keep it beside the bundled one.

The download is refused unless it parses, passes the schema check and converts; a manifest older than the
bundled copy is refused too, so the bundled data stays the floor (ARCHITECTURE.md §5). The converted files
go to the user's cache directory, written to a temporary sibling and renamed into place.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional
from urllib.parse import urlparse

from neurondoctor.neuron_version import release_tuple
from neurondoctor.release_data.n2_conversion import convert_n2_manifest, render_document
from neurondoctor.release_data.schema import SchemaError

DEFAULT_TIMEOUT = 20.0
MAX_MANIFEST_BYTES = 32 << 20


class UpdateError(Exception):
    """The update was refused; the message says why in one line and nothing was written."""


@dataclass(frozen=True)
class UpdateResult:
    directory: str
    manifest_version: str
    releases: int
    replaced: Optional[str]


def _check_url(url: str) -> None:
    """HTTPS only; plain HTTP is accepted for a mirror on this machine's loopback interface."""
    parsed = urlparse(url)
    loopback = parsed.hostname in ("127.0.0.1", "localhost", "::1")
    if parsed.scheme != "https" and not (parsed.scheme == "http" and loopback):
        raise UpdateError(f"{url}: only https:// URLs are accepted (http:// only on this machine's loopback)")


def fetch_manifest(url: str, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    import requests  # only this command needs it

    _check_url(url)
    try:
        response = requests.get(url, timeout=timeout, stream=True)
        response.raise_for_status()
        data = response.raw.read(MAX_MANIFEST_BYTES + 1, decode_content=True)
    except requests.RequestException as error:
        raise UpdateError(f"{url}: download failed: {error}") from error
    if len(data) > MAX_MANIFEST_BYTES:
        raise UpdateError(f"{url}: larger than {MAX_MANIFEST_BYTES >> 20} MiB; refused")
    return bytes(data)


def _installed_version(target: Path) -> Optional[str]:
    try:
        return str(json.loads((target / "sdk.json").read_text(encoding="utf-8"))["manifest_version"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def install_manifest(data: bytes, source: str, target: Path, floor_version: Optional[str]) -> UpdateResult:
    """Validate and convert `data`; write it to `target` only when it is at least as new as the floor."""
    try:
        documents = convert_n2_manifest(json.loads(data.decode("utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UpdateError(f"{source}: not a JSON document ({error})") from error
    except SchemaError as error:
        raise UpdateError(f"{source}: not a Neuron release manifest: {error}") from error
    version = str(documents["sdk.json"]["manifest_version"])
    if floor_version and release_tuple(version) < release_tuple(floor_version):
        raise UpdateError(f"{source}: manifest {version} is older than the bundled {floor_version}; "
                          "kept the bundled one")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".manifests-", dir=target.parent))
    try:
        (staging / "releases").mkdir()
        for relative, document in documents.items():
            (staging / relative).write_text(render_document(document), encoding="utf-8")
        previous = _installed_version(target)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return UpdateResult(str(target), version, len(documents) - 1, previous)
