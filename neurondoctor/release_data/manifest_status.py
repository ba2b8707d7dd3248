"""`neurondoctor manifests status`: which release data the doctor uses, how old it is, and where it came from.

A doctor whose data ends before the host's release calls a healthy host "unknown versions"; the status
says which copy is in use (NEURONDOCTOR_MANIFESTS, a `manifests update` copy, or the bundled one), the newest
release and the manifest date of each, and how to get newer data; and which device formats the doctor reads are
recorded from real outputs and which are assumed (device_formats.py); which releases the data knows whole and which
only in part (and where the whole list is), and which hand-kept releases gave way to AWS's own entry. Pure reading:
nothing is fetched or written.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from neurondoctor.neuron_version import release_tuple
from neurondoctor.regular_files import read_regular_file
from neurondoctor.release_data.catalog import (
    MANIFEST_DIR_ENV,
    PartialRelease,
    bundled_manifest_dir,
    cache_manifest_dir,
    load_catalog,
    partial_releases,
)
from neurondoctor.release_data.device_formats import device_formats_document, render_device_formats

UPDATE_RECORD = "update.json"  # written by `manifests update` beside the converted data
STALE_AFTER_DAYS = 60  # Neuron has released about every six to eight weeks in 2026


@dataclass(frozen=True)
class DataCopy:
    """One copy of the release data: what it holds and where it came from."""

    role: str  # bundled | cached | override
    directory: str
    present: bool
    manifest_version: Optional[str] = None
    manifest_date: Optional[str] = None  # as AWS writes it: MM/DD/YYYY
    releases: int = 0
    source: Optional[str] = None
    fetched_at: Optional[str] = None
    problem: Optional[str] = None
    hand_kept: tuple[tuple[str, str], ...] = ()  # (release, the page its versions come from), not in AWS's copy
    not_shown: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (hand-kept release, what its page did not show)
    partial: tuple[PartialRelease, ...] = ()  # releases known only in part (hand-kept with `not_known`)
    superseded: tuple[tuple[str, str], ...] = ()  # (hand-kept release AWS's manifest now lists, the page it had)

    def age_days(self, now: float) -> Optional[int]:
        if not self.manifest_date:
            return None
        try:
            return int((now - time.mktime(time.strptime(self.manifest_date, "%m/%d/%Y"))) // 86400)
        except ValueError:
            return None


@dataclass(frozen=True)
class DataStatus:
    copies: list[DataCopy]
    in_use: str  # the role of the copy a check would load
    # From the copy in use (manifests/end-of-support.json): AWS's end-of-support announcements the rules judge, and
    # the published releases whose package lists the data does not have (said, never guessed).
    announcements: tuple[dict[str, Any], ...] = ()
    releases_without_data: tuple[dict[str, Any], ...] = ()
    # manifests/support-ranges.json: the published support rules judged, and what no page publishes (never judged)
    support_rules: tuple[dict[str, Any], ...] = ()
    not_published: tuple[dict[str, Any], ...] = ()

    def copy(self, role: str) -> Optional[DataCopy]:
        return next((item for item in self.copies if item.role == role), None)


def _read_json(path: Path) -> Optional[Any]:
    try:
        return json.loads(read_regular_file(path, 1 << 20))
    except (OSError, ValueError, RecursionError):
        return None


def read_copy(role: str, directory: Path) -> DataCopy:
    if not (directory / "sdk.json").exists():
        return DataCopy(role, str(directory), present=False)
    sdk = _read_json(directory / "sdk.json")
    if not isinstance(sdk, dict):
        return DataCopy(role, str(directory), present=True, problem="sdk.json is not a readable JSON object")
    source: dict[str, Any] = sdk["source"] if isinstance(sdk.get("source"), dict) else {}
    found = _read_json(directory / UPDATE_RECORD)
    record: dict[str, Any] = found if isinstance(found, dict) else {}
    listed = source.get("hand_kept")
    kept: list[Any] = listed if isinstance(listed, list) else []
    hand_kept = tuple((str(item.get("release")), str(item.get("source"))) for item in kept if isinstance(item, dict))
    not_shown = tuple((str(item.get("release")), tuple(str(part) for part in item["not_shown"])) for item in kept
                      if isinstance(item, dict) and isinstance(item.get("not_shown"), list) and item["not_shown"])
    gave_way = source.get("superseded_hand_kept")
    superseded = tuple((str(item.get("release")), str(item.get("source"))) for item in
                       (gave_way if isinstance(gave_way, list) else []) if isinstance(item, dict))
    return DataCopy(role, str(directory), present=True, manifest_version=str(sdk.get("manifest_version") or "") or None,
                    manifest_date=str(source.get("manifest_date") or "") or None,
                    releases=len(sdk.get("releases") or []),
                    source=str(record.get("source") or source.get("file") or "") or None,
                    fetched_at=str(record.get("fetched_at") or "") or None, hand_kept=hand_kept,
                    not_shown=not_shown, partial=tuple(partial_releases(sdk).values()), superseded=superseded)


def data_status(environ: Mapping[str, str]) -> DataStatus:
    copies = [read_copy("bundled", bundled_manifest_dir()), read_copy("cached", cache_manifest_dir(environ))]
    if environ.get(MANIFEST_DIR_ENV):
        copies.append(read_copy("override", Path(environ[MANIFEST_DIR_ENV])))
    catalog = load_catalog(environ=environ)
    in_use = Path(catalog.source_dir).resolve()
    role = next((item.role for item in reversed(copies) if item.present
                 and Path(item.directory).resolve() == in_use), "bundled")
    ends, support = catalog.end_of_support, catalog.support_ranges
    return DataStatus(copies, role,
                      tuple(item for item in ends.get("announcements", []) if isinstance(item, dict)),
                      tuple(item for item in ends.get("releases_without_package_data", []) if isinstance(item, dict)),
                      tuple(item for key in ("ranges", "instances", "images") for item in support.get(key, [])
                            if isinstance(item, dict)),
                      tuple(item for item in support.get("not_published", []) if isinstance(item, dict)))


_ROLE_WORDS = {"bundled": "bundled", "cached": "manifests update", "override": MANIFEST_DIR_ENV}


def _summary(status: DataStatus, now: float) -> list[str]:
    """What a user needs first: which releases the doctor knows, how old that is, and how to get newer data."""
    used = status.copy(status.in_use)
    if used is None or not used.present or used.problem:
        why = used.problem if used and used.problem else "not found"
        return [f"The release data in use ({_ROLE_WORDS[status.in_use]}) is unusable: {why}. "
                "`neurondoctor manifests update` fetches AWS's manifest again."]
    partial = sorted((item.release for item in used.partial), key=release_tuple)
    age = used.age_days(now)
    dated = f"; AWS's manifest of {used.manifest_date}" + (f", {age} days old" if age is not None else "") \
        if used.manifest_date else ""
    lines = [f"Release data: Neuron releases up to {used.manifest_version}"
             + (f" ({', '.join(partial)} known only in part)" if partial else "")
             + f", {used.releases} releases{dated} ({_ROLE_WORDS[status.in_use]} copy)."]
    if status.in_use != "override" and age is not None and age > STALE_AFTER_DAYS:
        lines.append(f"It is {age} days old and Neuron releases about every two months: run "
                     "`neurondoctor manifests update` (or `--file F` on an air-gapped host).")
    else:
        lines.append("Newer data: `neurondoctor manifests update` (or `--file F` on an air-gapped host).")
    return lines


def render_status(status: DataStatus, now: Optional[float] = None, verbose: bool = False) -> str:
    """The summary a user needs; with `verbose`, the maintainers' details after it: every copy, the hand-kept
    releases and what they leave out, the announcements and support rules judged, the device formats."""
    now = time.time() if now is None else now
    if not verbose:
        return "\n".join([*_summary(status, now),
                           "Every copy, hand-kept release, rule and device format: `neurondoctor manifests status "
                           "-v`."]) + "\n"
    lines = [*_summary(status, now), ""]
    for item in status.copies:
        marker = "*" if item.role == status.in_use else " "
        label = f"{marker} {_ROLE_WORDS[item.role]:<17}"
        if not item.present:
            lines.append(f"{label} none ({item.directory})")
            continue
        if item.problem:
            lines.append(f"{label} unusable: {item.problem} ({item.directory})")
            continue
        age = item.age_days(now)
        dated = f", manifest of {item.manifest_date}" + (f" ({age} days old)" if age is not None else "")
        fetched = f", fetched {item.fetched_at}" if item.fetched_at else ""
        source = f" from {item.source}" if item.source else ""
        if item.hand_kept:
            source += " + hand-kept " + ", ".join(release for release, _ in item.hand_kept)
        lines.append(f"{label} Neuron {item.manifest_version}{dated}, {item.releases} releases{fetched}{source} "
                     f"({item.directory})")
    used = status.copy(status.in_use)
    lines.append(f"In use: {_ROLE_WORDS[status.in_use]} (marked *).")
    for release, parts in used.not_shown if used else ():
        lines.append(f"Hand-kept {release} leaves out what its page did not show: {'; '.join(parts)}.")
    lines += _whole_and_partial(used) if used and used.present and not used.problem else []
    for missing in status.releases_without_data:
        lines.append(f"Not in the data: Neuron {missing.get('release')} ({missing.get('date')}): {missing.get('why')}. "
                     "A host on it reads as newer than the data (ND-REL-005).")
    if status.announcements:
        lines.append(f"End-of-support announcements judged (ND-EOS-001/002): {len(status.announcements)}")
        lines += [f"  {end.get('what')}: from {end.get('ends_in')}" + (
            f" (announced in {end['announced_in']})" if end.get("announced_in") else "") for end in
            status.announcements]
    if status.support_rules:
        lines.append(f"Published support rules judged (ND-SUP-001/002): {len(status.support_rules)}; not published, "
                     "so never judged: " + "; ".join(str(item.get("what")) for item in status.not_published))
    lines += render_device_formats()
    return "\n".join(lines) + "\n"


def _whole_and_partial(used: DataCopy) -> list[str]:
    """Which releases the copy in use knows whole, which only in part (what is not known, where the whole list is),
    and which hand-kept releases gave way to AWS's entry."""
    partial = sorted(used.partial, key=lambda item: release_tuple(item.release))
    lines = [f"Whole: {used.releases - len(partial)} releases" + (
        f"; known only in part: {', '.join(item.release for item in partial)} (ND-REL-006)" if partial else "") + "."]
    for item in partial:
        lines.append(f"  {item.release}: not known: {', '.join(sorted(item.packages))}"
                     + (f"; {'; '.join(item.facts)}" if item.facts else "")
                     + f". The whole list: {item.complete_source} (`neurondoctor manifests update` fetches it).")
    for release, page in used.superseded:
        lines.append(f"Hand-kept {release} gave way to AWS's manifest entry for it (the hand-kept file read {page}).")
    return lines


def status_document(status: DataStatus, now: Optional[float] = None) -> dict[str, Any]:
    now = time.time() if now is None else now
    return {"schema": "neurondoctor.manifests-status/1", "in_use": status.in_use,
            "copies": [{"role": item.role, "directory": item.directory, "present": item.present,
                        "manifest_version": item.manifest_version, "manifest_date": item.manifest_date,
                        "age_days": item.age_days(now), "releases": item.releases, "source": item.source,
                        "fetched_at": item.fetched_at, "problem": item.problem,
                        "hand_kept": [{"release": release, "source": page,
                                       "not_shown": list(dict(item.not_shown).get(release, ()))}
                                      for release, page in item.hand_kept],
                        "partial_releases": [{"release": part.release, "not_known_packages": sorted(part.packages),
                                              "not_known_facts": list(part.facts),
                                              "complete_source": part.complete_source} for part in item.partial],
                        "superseded_hand_kept": [{"release": release, "source": page}
                                                 for release, page in item.superseded]}
                       for item in status.copies],
            "end_of_support": [{key: item.get(key) for key in ("id", "what", "announced_in", "ends_in", "source")}
                               for item in status.announcements],
            "releases_without_package_data": [dict(item) for item in status.releases_without_data],
            "support_rules": [{key: item.get(key) for key in ("id", "package", "releases", "outside", "covered_by",
                                                              "source")} for item in status.support_rules],
            "not_published": [{key: item.get(key) for key in ("what", "source")} for item in status.not_published],
            "device_formats": device_formats_document()}
