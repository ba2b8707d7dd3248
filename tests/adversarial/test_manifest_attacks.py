"""Attack class: `manifests update` against a hostile server or file: redirects to URLs the direct request would
refuse, a body dripped a byte a second, a copy older than the one in use, hostile JSON, a zero timeout; and the
release data's own new inputs: a hand-kept release's `not_known`, a cached copy's partial note, a corrupt
package-fixes.json."""

from __future__ import annotations

import http.server
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from neurondoctor.release_data.manifest_update import UpdateError, fetch_manifest, install_manifest
from tests.conftest import REPO, cli_env, run_cli
from tests.test_manifest_update import _extended


@contextmanager
def hostile_server(routes: dict[str, tuple[int, dict[str, str], bytes, float]]) -> Iterator[str]:
    """path -> (status, headers, body, seconds between body bytes)."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            status, headers, body, drip = routes.get(self.path, (404, {}, b"", 0.0))
            self.send_response(status)
            for key, value in {"Content-Length": str(len(body)), **headers}.items():
                self.send_header(key, value)
            self.end_headers()
            try:
                for index in range(len(body)):
                    self.wfile.write(body[index:index + 1] if drip else body[index:])
                    self.wfile.flush()
                    if not drip:
                        break
                    time.sleep(drip)
            except (BrokenPipeError, ConnectionResetError):
                return

        def log_message(self, format: str, *args: object) -> None:
            return None

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def _update(url: str, tmp_path: Path, *extra: str) -> tuple[int, str, float]:
    started = time.monotonic()
    result = run_cli(["manifests", "update", "--url", url, *extra],
                     env=cli_env({"NEURONDOCTOR_CACHE_DIR": str(tmp_path / "cache")}), timeout=120)
    assert "Traceback" not in result.stderr
    return result.returncode, result.stderr, time.monotonic() - started


def test_a_redirect_to_a_url_the_direct_request_would_refuse(tmp_path: Path) -> None:
    body = json.dumps(_extended()).encode()
    with hostile_server({"/m.json": (302, {"Location": "http://manifests.example.invalid/m.json"}, b"", 0.0),
                         "/loop": (302, {"Location": "/loop"}, b"", 0.0),
                         "/ok": (301, {"Location": "/real.json"}, b"", 0.0),
                         "/real.json": (200, {}, body, 0.0)}) as base:
        code, stderr, _ = _update(f"{base}/m.json", tmp_path)
        assert code == 2 and "only https://" in stderr and "manifests.example.invalid" in stderr
        code, stderr, _ = _update(f"{base}/loop", tmp_path)
        assert code == 2 and "more than 5 redirects" in stderr
        code, stderr, _ = _update(f"{base}/ok", tmp_path)
        assert code == 0, stderr  # a redirect that passes the same check is followed
    assert not (tmp_path / "cache/manifests").exists() or code == 0


def test_a_byte_a_second_drip_stops_at_the_timeout(tmp_path: Path) -> None:
    with hostile_server({"/drip.json": (200, {}, b"{" + b" " * 10_000 + b"}", 1.0)}) as base:
        code, stderr, elapsed = _update(f"{base}/drip.json", tmp_path, "--timeout", "2")
    assert code == 2 and "did not finish within 2 s" in stderr and elapsed < 15


def test_the_timeout_must_be_positive(tmp_path: Path) -> None:
    code, stderr, _ = _update("https://manifests.example.invalid/m.json", tmp_path, "--timeout", "0")
    assert code == 2 and "must be a positive number" in stderr
    for timeout in (-5.0, float("nan"), float("inf")):
        with pytest.raises(UpdateError, match="must be a positive number"):
            fetch_manifest("https://manifests.example.invalid/m.json", timeout=timeout)


def test_a_copy_older_than_the_cached_one_is_refused(tmp_path: Path) -> None:
    newer = _extended()  # whole through a (synthetic) 2.34.0
    older = _extended()
    older["neuron_releases"] = older["neuron_releases"][1:]  # type: ignore[index]
    older["manifest_version"] = "2.33.1"
    with hostile_server({"/new.json": (200, {}, json.dumps(newer).encode(), 0.0),
                         "/old.json": (200, {}, json.dumps(older).encode(), 0.0)}) as base:
        assert _update(f"{base}/new.json", tmp_path)[0] == 0
        code, stderr, _ = _update(f"{base}/old.json", tmp_path)
    assert code == 2 and "older than the 2.34.0 in use" in stderr
    cached = json.loads((tmp_path / "cache/manifests/sdk.json").read_text())
    assert cached["manifest_version"] == "2.34.0"


HOSTILE_BODIES = [b"[" * 100_000 + b"]" * 100_000, b'{"neuron_releases": {"a": 1}}',
                  b'{"manifest_version": [], "neuron_releases": [[], 3, null]}', b"\xff\xfe garbage",
                  b'{"neuron_releases": [{"neuron_version": {"x": 1}, "packages": "no"}]}']


def test_hostile_json_is_refused_with_a_message(tmp_path: Path) -> None:
    with hostile_server({"/m.json": (200, {}, HOSTILE_BODIES[0], 0.0),
                         "/big.json": (200, {}, b'{"a": "' + b"x" * 40_000_000 + b'"}', 0.0)}) as base:
        for path in ("/m.json", "/big.json"):
            code, stderr, _ = _update(f"{base}{path}", tmp_path)
            assert code == 2 and stderr.startswith("error: ") and len(stderr.splitlines()) == 1
    for body in HOSTILE_BODIES:
        with pytest.raises(UpdateError):
            install_manifest(body, "hostile", tmp_path / "cache/manifests", floor_version=None)
    assert not (tmp_path / "cache/manifests").exists()


def test_an_air_gapped_file_gets_the_same_validation(tmp_path: Path) -> None:
    hostile = tmp_path / "n2.json"
    hostile.write_bytes(b"[" * 100_000)
    result = run_cli(["manifests", "update", "--file", str(hostile)],
                     env=cli_env({"NEURONDOCTOR_CACHE_DIR": str(tmp_path / "cache")}))
    assert result.returncode == 2 and "Traceback" not in result.stderr
    good = tmp_path / "good.json"
    good.write_text(json.dumps(_extended()))
    ok = run_cli(["manifests", "update", "--file", str(good)],
                 env=cli_env({"NEURONDOCTOR_CACHE_DIR": str(tmp_path / "cache")}))
    assert ok.returncode == 0 and "release data 2.34.0" in ok.stdout


NOT_KNOWN_ATTACKS = [
    ("a list, not an object", ["aws-neuronx-dkms"], "2.34.0.json.not_known: expected an object"),
    ("a name that is not a string", {"packages": [{"$ne": 1}], "complete_source": "https://x.example/m.json"},
     "2.34.0.json.not_known.packages: expected a list of non-empty strings"),
    ("nothing named", {"packages": [], "facts": [], "complete_source": "https://x.example/m.json"},
     "2.34.0.json.not_known: name what is not known"),
    ("a source a browser would run", {"packages": ["nki"], "complete_source": "javascript:alert(1)"},
     "2.34.0.json.not_known.complete_source: expected the https:// source"),
]


@pytest.mark.parametrize(("what", "not_known", "message"), NOT_KNOWN_ATTACKS,
                         ids=[item[0] for item in NOT_KNOWN_ATTACKS])
def test_a_hand_kept_release_with_a_malformed_not_known_is_refused(tmp_path: Path, what: str, not_known: object,
                                                                    message: str) -> None:
    """A hand-kept file's `not_known` decides what the rules leave unjudged: a malformed one is refused by name
    (regenerate_manifests and `manifests update` load the same files), never half-read into the data."""
    from neurondoctor.release_data.hand_kept import load_hand_kept
    from neurondoctor.release_data.schema import SchemaError

    kept = tmp_path / "hand-kept"
    kept.mkdir()
    document = json.loads((REPO / "manifests/hand-kept/2.34.0.json").read_text())
    document["not_known"] = not_known
    (kept / "2.34.0.json").write_text(json.dumps(document))
    with pytest.raises(SchemaError, match=re.escape(message)):
        load_hand_kept(kept)


def test_a_forged_partial_note_in_a_cached_copy_is_read_safely(tmp_path: Path) -> None:
    """`sdk.json` of a cached copy is the user's file: a `not_known` of the wrong shape names nothing as unknown (the
    catalog reads only lists of strings), and `manifests status` still answers in one piece."""
    from neurondoctor.release_data.catalog import partial_releases

    forged = {"source": {"hand_kept": [{"release": "2.34.0", "not_known": {"packages": "aws-neuronx-dkms",
                                                                          "facts": {"x": 1}}},
                                       {"release": "2.33.1", "not_known": ["nki"]}, "junk", None]}}
    found = partial_releases(forged)
    assert list(found) == ["2.34.0"] and found["2.34.0"].packages == frozenset() and found["2.34.0"].facts == ()
    assert partial_releases({"source": "junk"}) == {} and partial_releases({}) == {}


def test_a_corrupt_fixes_file_is_one_line_and_the_report_still_comes_out(tmp_path: Path) -> None:
    """manifests/package-fixes.json corrupted in a copy of the data (NEURONDOCTOR_MANIFESTS): the catalog records one
    load problem naming the file, the runtime-fix rule has nothing to say, and every other rule still runs."""
    import shutil

    from neurondoctor.release_data.catalog import load_catalog

    data = tmp_path / "manifests"
    shutil.copytree(REPO / "manifests", data)
    for body in ('{"schema": "neurondoctor.package-fixes/1", "fixes": [{"id": 1}]}', "\xff[[[", "[]"):
        (data / "package-fixes.json").write_text(body, errors="surrogateescape")
        catalog = load_catalog(data, environ={})
        assert [problem.path for problem in catalog.problems] == [str(data / "package-fixes.json")]
        assert catalog.package_fixes == [] and len(catalog.releases) == 54
