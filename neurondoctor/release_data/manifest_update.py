"""`neurondoctor manifests update`: fetch a newer AWS release manifest, validate it, keep it beside the bundled one.

The download is refused unless it parses, passes the schema check and converts; a manifest whose newest release
is older than the newest copy in use (the cached one or the bundled one) is refused too, so the data never goes
back (docs/contracts.md §5). Every redirect hop must pass the same URL check as the first request; the whole
download has one deadline (a server that drips a byte a second is abandoned at `--timeout`, not after hours);
JSON nested too deeply or too large is refused with a message. The converted files go to the user's cache
directory, written to a temporary sibling and renamed into place.
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Optional
from urllib.parse import urljoin, urlparse

from neurondoctor.neuron_version import release_tuple
from neurondoctor.regular_files import read_regular_file
from neurondoctor.release_data.catalog import bundled_manifest_dir, partial_releases
from neurondoctor.release_data.hand_kept import HAND_KEPT_DIR, load_hand_kept, merge_hand_kept
from neurondoctor.release_data.n2_conversion import convert_n2_manifest, render_document
from neurondoctor.release_data.schema import SchemaError

DEFAULT_TIMEOUT = 20.0
MAX_MANIFEST_BYTES = 32 << 20


def _request_failure(error: Exception) -> str:
    """One short cause for a failed request: requests' own text nests the whole retry and socket chain."""
    import requests

    if isinstance(error, requests.HTTPError) and error.response is not None:
        return f"the server answered {error.response.status_code} {error.response.reason or ''}".rstrip()
    if isinstance(error, requests.Timeout):
        return "no answer in time"
    if isinstance(error, requests.exceptions.SSLError):
        return "the TLS certificate could not be verified"
    if isinstance(error, requests.ConnectionError):
        text = str(error)
        for marker, cause in (("Connection refused", "connection refused"), ("Name or service not known",
                              "the host name does not resolve"), ("Temporary failure in name resolution",
                              "the host name does not resolve"), ("Network is unreachable", "network unreachable")):
            if marker in text:
                return cause
        return "could not connect"
    return type(error).__name__


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


MAX_REDIRECTS = 5


def check_timeout(timeout: float) -> float:
    if not math.isfinite(timeout) or timeout <= 0:
        raise UpdateError(f"--timeout {timeout:g}: must be a positive number of seconds")
    return timeout


def _download(url: str, timeout: float) -> bytes:
    """The body at `url`, following at most MAX_REDIRECTS redirects, each checked like the first URL."""
    import requests  # only this command needs it

    for _ in range(MAX_REDIRECTS + 1):
        _check_url(url)
        try:
            response = requests.get(url, timeout=timeout, stream=True, allow_redirects=False)
            if response.is_redirect:
                target = response.headers.get("location", "")
                response.close()
                url = urljoin(url, target)
                continue
            response.raise_for_status()
            data = response.raw.read(MAX_MANIFEST_BYTES + 1, decode_content=True)
        except requests.RequestException as error:
            raise UpdateError(f"{url}: download failed: {_request_failure(error)}; next: check the URL, the proxy "
                              "or the network; an air-gapped host uses --file") from error
        if len(data) > MAX_MANIFEST_BYTES:
            raise UpdateError(f"{url}: larger than {MAX_MANIFEST_BYTES >> 20} MiB; refused")
        return bytes(data)
    raise UpdateError(f"{url}: more than {MAX_REDIRECTS} redirects; refused")


def fetch_manifest(url: str, timeout: float = DEFAULT_TIMEOUT) -> bytes:
    """Download within one deadline for the whole transfer: the download runs in a worker thread that is
    abandoned (the command exits right after) when the deadline passes, whatever the server does."""
    check_timeout(timeout)
    _check_url(url)
    outcome: dict[str, object] = {}

    def work() -> None:
        try:
            outcome["data"] = _download(url, timeout)
        except UpdateError as error:
            outcome["error"] = error
        except Exception as error:  # a broken connection mid-transfer: the same one-line refusal
            outcome["error"] = UpdateError(f"{url}: download failed: {type(error).__name__}: {error}")

    worker = threading.Thread(target=work, name="manifest-download", daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        raise UpdateError(f"{url}: the download did not finish within {timeout:g} s; abandoned")
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["data"]  # type: ignore[return-value]


def _installed_version(target: Path) -> Optional[str]:
    """The newest release the copy in `target` knows whole: a hand-kept release known only in part (2.34.0's
    TorchNeuron families alone) does not make an official manifest that lists the release before it whole older."""
    try:
        sdk = json.loads(read_regular_file(target / "sdk.json", MAX_MANIFEST_BYTES))
        partial = partial_releases(sdk)
        whole = [str(release) for release in sdk["releases"] if str(release) not in partial]
        return max(whole, key=release_tuple) if whole else str(sdk["manifest_version"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
        return None


def read_manifest_file(path: str) -> bytes:
    """`manifests update --file F` for air-gapped pipelines: the same limits and validation as a download."""
    try:
        data = read_regular_file(path, MAX_MANIFEST_BYTES + 1)
    except OSError as error:
        raise UpdateError(f"{path}: cannot read it ({error.strerror or error})") from error
    if len(data) > MAX_MANIFEST_BYTES:
        raise UpdateError(f"{path}: larger than {MAX_MANIFEST_BYTES >> 20} MiB; refused")
    return data


def newest_in_use(*directories: Path) -> Optional[str]:
    """The newest manifest version among the copies in these directories (cache, bundled)."""
    versions = [version for version in (_installed_version(directory) for directory in directories) if version]
    return max(versions, key=release_tuple) if versions else None


def install_manifest(data: bytes, source: str, target: Path, floor_version: Optional[str]) -> UpdateResult:
    """Validate and convert `data` (with the bundled hand-kept releases it lacks); write it to `target` only when it
    is at least as new as the floor (the newest copy in use)."""
    try:
        # releases AWS's copy does not list yet come from the bundled hand-kept files, as in the bundled data
        # (scripts/regenerate_manifests.py); the downloaded entry wins where both list a release
        official = json.loads(data.decode("utf-8"))
        version = str(convert_n2_manifest(official)["sdk.json"]["manifest_version"])  # validates the download
        merged, _ = merge_hand_kept(official, load_hand_kept(bundled_manifest_dir() / HAND_KEPT_DIR))
        documents = convert_n2_manifest(merged)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UpdateError(f"{source}: not a JSON document ({error})") from error
    except RecursionError as error:
        raise UpdateError(f"{source}: refused: JSON nested too deeply") from error
    except SchemaError as error:
        raise UpdateError(f"{source}: not a Neuron release manifest: {error}") from error
    except (TypeError, KeyError, AttributeError, ValueError) as error:
        raise UpdateError(f"{source}: not a Neuron release manifest: unexpected shape ({error})") from error
    # the floor is judged on the download itself: an old manifest is not made new by the bundled hand-kept files
    if floor_version and release_tuple(version) < release_tuple(floor_version):
        raise UpdateError(f"{source}: manifest {version} is older than the {floor_version} in use; "
                          "kept the one in use")
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".manifests-", dir=target.parent))
    try:
        (staging / "releases").mkdir()
        for relative, document in documents.items():
            (staging / relative).write_text(render_document(document), encoding="utf-8")
        # where and when this copy came from, for `manifests status`
        (staging / "update.json").write_text(json.dumps({
            "source": source, "fetched_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}) + "\n")
        previous = _installed_version(target)
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    return UpdateResult(str(target), version, len(documents) - 1, previous)
