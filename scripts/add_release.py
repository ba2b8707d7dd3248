"""Turn the text of a Neuron release-content page into a hand-kept release file (docs/release-data.md).

Input: the page as the docs render it, pasted or saved (`Neuron 2.34.0 (11/30/2026)#`, then per family `Trn1
packages#`, a `Component   Package` table whose second column is `name-version`, or a wheel file name, and
`Trn1 supported Python versions#` with the versions). Output: `manifests/hand-kept/X.Y.Z.json`'s shape: every
package with the families whose list names it and, for pip packages, the Python versions the page gives that
family; `sources` saying where each fact came from, and `not_shown` listing what the page did not show (a family
without a list, a family's Python versions), which stays out of the data until a page shows it.

Usage: python scripts/add_release.py PAGE.txt --release 2.34.0 --source URL [--date MM/DD/YYYY] [-o FILE]
       (PAGE.txt may be `-` for standard input; without -o the JSON goes to standard output)
Then: read the component pages for what the table does not carry (TorchNeuron's package families), add those
entries with their sources, run `python scripts/regenerate_manifests.py PATH/TO/n2-manifest.json`, and the tests.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any, Optional

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from neurondoctor.log_text import bounded_lines  # noqa: E402

FAMILIES = ("trn1", "trn2", "trn3", "inf2", "inf1")
# A release heading: `Neuron 2.33.0 (10/19/2026)#`, `Neuron 2.32.0 — vLLM Neuron Beta (08/17/2026)#`. Its start and
# its date are found apart and the addition is what lies between (one pattern `\s+\S.*?\s*\(` retried the spaces
# of a long heading from each of its characters: the square of the line).
_RELEASE_START = re.compile(r"Neuron (\d+\.\d+\.\d+)(?=[\s(])")
_RELEASE_DATE = re.compile(r"\((\d{2}/\d{2}/\d{4})\)#?\Z")
_PACKAGES = re.compile(r"^((?:Trn|Inf)\d(?:/(?:Trn|Inf)\d)*) packages#?\s*$", re.IGNORECASE)
_PYTHONS = re.compile(r"^((?:Trn|Inf)\d(?:/(?:Trn|Inf)\d)*) supported Python versions#?\s*$", re.IGNORECASE)
_PYTHON = re.compile(r"\b3\.\d{1,2}\b")
# `aws-neuronx-collectives-2.35.43.0`, `aws-neuronx-gpsimd-tools-14.09.x`, `torch-neuronx-2.14.3.0.*`
_NAME_VERSION = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*?)-(?P<version>\d[A-Za-z0-9.+*]*)$")
# A wheel file name (PEP 427): name-version(-build)?-python-abi-platform.whl
_WHEEL = re.compile(r"^(?P<name>[A-Za-z0-9_.]+)-(?P<version>\d[A-Za-z0-9.+!_]*)(?:-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$")
OS_PACKAGE_PREFIXES = ("aws-neuronx-", "aws-neuron-", "efa")


def release_heading(line: str) -> Optional[tuple[str, str, str]]:
    """(release, addition, date) of a stripped line that is a release heading; the addition is "" for the release's
    own heading."""
    start, date = _RELEASE_START.match(line), _RELEASE_DATE.search(line)
    if start is None or date is None or date.start() < start.end():
        return None
    return start.group(1), line[start.end():date.start()].strip(), date.group(1)


def _families(label: str) -> list[str]:
    return [part.lower() for part in label.split("/") if part.lower() in FAMILIES]


def _package(cell: str) -> Optional[tuple[str, str]]:
    """(name, version) of a table's package cell, or None for a cell that is not one."""
    cell = cell.strip()
    wheel = _WHEEL.match(cell)
    if wheel:
        return wheel["name"], wheel["version"]
    found = _NAME_VERSION.match(cell)
    return (found["name"], found["version"]) if found else None


def parse_page(text: str, release: str) -> dict[str, Any]:
    """What the page says of `release`: {packages: {(name, version): set of families}, pythons: {family: [...]},
    families: the families with a list, date, additions: the headings that add to the release (vLLM Beta)}."""
    packages: dict[tuple[str, str], set[str]] = {}
    pythons: dict[str, list[str]] = {}
    listed: set[str] = set()
    date: Optional[str] = None
    additions: list[str] = []
    current: Optional[str] = None  # the release of the section being read
    families: list[str] = []
    reading_pythons = False
    for raw in bounded_lines(text):
        line = raw.rstrip()
        heading = release_heading(line.strip())
        if heading:
            current, families, reading_pythons = heading[0], [], False
            if current == release:
                if heading[1]:
                    additions.append(heading[1].strip(" —-"))
                else:
                    date = heading[2]
            continue
        if current != release:
            continue
        section = _PACKAGES.match(line.strip())
        if section:
            families, reading_pythons = _families(section.group(1)), False
            listed.update(families)
            continue
        python_section = _PYTHONS.match(line.strip())
        if python_section:
            families, reading_pythons = _families(python_section.group(1)), True
            continue
        if reading_pythons:
            for family in families:
                pythons.setdefault(family, [])
                pythons[family] += [version for version in _PYTHON.findall(line) if version not in pythons[family]]
            continue
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) >= 2 and families:
            found = _package(cells[-1])
            if found:
                packages.setdefault(found, set()).update(families)
    return {"packages": packages, "pythons": pythons, "families": sorted(listed), "date": date,
            "additions": additions}


def skeleton(text: str, release: str, source: str, date: Optional[str] = None) -> dict[str, Any]:
    """The hand-kept file for `release` from the page text (module docstring)."""
    page = parse_page(text, release)
    if not page["packages"]:
        raise SystemExit(f"error: the page shows no package list for Neuron {release}")
    entries = []
    for (name, version), families in sorted(page["packages"].items()):
        os_package = name.startswith(OS_PACKAGE_PREFIXES)
        python = sorted({value for family in families for value in page["pythons"].get(family, [])},
                        key=lambda value: tuple(int(part) for part in value.split(".")))
        entries.append({"name": name, "version": version,
                        "supported_instances": [family for family in FAMILIES if family in families],
                        "supported_python_versions": [] if os_package else python})
    not_shown = [f"the {family} package list" for family in FAMILIES if family not in page["families"]]
    not_shown += [f"the {family} supported Python versions" for family in page["families"]
                  if family not in page["pythons"]]
    sources = {"packages": f"{source}: the package lists of " + ", ".join(page["families"])}
    if page["additions"]:
        sources["additions"] = f"{source}: " + "; ".join(page["additions"])
    return {"neuron_version": release, "manifest_date": date or page["date"] or "", "source": source,
            "sources": sources, "not_shown": not_shown, "packages": entries}


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("page", help="the page's text, saved or `-` for standard input")
    parser.add_argument("--release", required=True, help="the release to read, e.g. 2.34.0")
    parser.add_argument("--source", required=True, help="the https page the text is from")
    parser.add_argument("--date", help="the release date MM/DD/YYYY, when the text does not carry its heading")
    parser.add_argument("-o", "--output", type=Path, help="write here (refused when the file exists)")
    args = parser.parse_args(argv)
    if not args.source.startswith("https://"):
        parser.error("--source: give the https:// page the text was copied from")
    text = sys.stdin.read() if args.page == "-" else Path(args.page).read_text(encoding="utf-8", errors="replace")
    document = skeleton(text, args.release, args.source, args.date)
    if not document["manifest_date"]:
        parser.error("the text has no `Neuron X.Y.Z (MM/DD/YYYY)` heading for that release: give --date")
    rendered = json.dumps(document, indent=1) + "\n"
    if args.output is None:
        sys.stdout.write(rendered)
        return 0
    with open(args.output, "x", encoding="utf-8") as handle:  # never over an earlier file
        handle.write(rendered)
    print(f"wrote {args.output}: {len(document['packages'])} packages; not shown: "
          + ("; ".join(document["not_shown"]) or "nothing"), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
