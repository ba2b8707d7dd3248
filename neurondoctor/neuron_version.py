"""Neuron version strings: normalising build suffixes so installed versions compare with manifests.

Installed Neuron versions carry build suffixes that the release manifest does not:
`2.9.0.2.13.23887+8e870898` (pip), `2.27.34.0-ec8cd5e8b` (deb), `2.19.7.0_530fb3064-1` (rpm),
`2.15.9.0-dkms` (rpm dkms). docs/neuron-facts.md §1.4 (sdk-policy.rst, update-manual.rst, gh#812).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Optional

from neurondoctor.strict_numbers import MAX_DIGITS, parse_count

_SUFFIX = re.compile(r"[+\-_~].*$")
_DEV = re.compile(r"\.?dev[0-9]*$")


# Pure, and asked again and again for the same few versions (two thousand catalog entries, every install record):
# cached for the run.
@functools.lru_cache(maxsize=4096)
def normalize_neuron_version(raw: str) -> str:
    """Strip build suffixes after `+`, `-`, `_` or `~` and a trailing `.dev`, keeping the numeric release.

    `2.9.0.2.13.23887+8e870898` -> `2.9.0.2.13.23887`; `2.19.7.0_530fb3064-1` -> `2.19.7.0`;
    `2.24.5133.0.dev0` -> `2.24.5133.0`. Pre-release tags the manifest itself uses (`2.1.1.2.0.1b0`)
    are kept, because the manifest compares against them verbatim.
    """
    text = raw.strip()
    if ":" in text.split("-", 1)[0]:  # a Debian epoch, `1:2.27.34.0-ec8cd5e8b`
        text = text.split(":", 1)[1]
    text = _SUFFIX.sub("", text)
    text = _DEV.sub("", text)
    return text.rstrip(".")


def release_tuple(raw: str) -> tuple[int, ...]:
    """The numeric components of a version, for ordering versions `packaging` cannot parse: ASCII digit runs, a run
    longer than a count can be (someone's metadata) ordered after every real one, never an int() error."""
    return tuple(_component(part) for part in re.findall(r"[0-9]+", normalize_neuron_version(raw)))


def _component(digits: str) -> int:
    number = parse_count(digits)
    return number if number is not None else 10 ** MAX_DIGITS


def names_a_release(version: str) -> bool:
    """Whether a component version is a release's (`2.26.5.0`, `2.21.37.0`), which orders against the manifests.
    Builds of the driver from other trees write versions like `2.x.7693.0` (Bottlerocket's kernel kit, `modinfo
    neuron`, tests/recorded/modinfo/): their digits are no release, and comparing them as one calls a driver of
    unknown age "2.7693"."""
    return re.fullmatch(r"[0-9]+(\.[0-9]+){2,3}", normalize_neuron_version(version)) is not None


def framework_prefix(extension_version: str) -> Optional[str]:
    """The third-party version an extension component is built for.

    Extension components use `[X.Y.Z].[A.B.C]` (sdk-policy.rst): torch-neuronx `2.9.0.2.15.32035` is
    built for torch `2.9.0`; libtorch_neuronx_lite `2.11.0.1.0.1284` for torch `2.11.0`.
    Returns None when the version has fewer than six components (a PyPI placeholder such as `1.0`).
    """
    parts = normalize_neuron_version(extension_version).split(".")
    if len(parts) < 6 or not all(parse_count(part) is not None for part in parts[:3]):
        return None
    return ".".join(parts[:3])


def major_minor(version: str) -> Optional[str]:
    """`2.9` for `2.9.0+cu128`, `2.10` for `2.10.1`; None when there is no `X.Y` to read."""
    match = re.match(r"^\s*([0-9]+)\.([0-9]+)", version)
    if match is None:
        return None
    return f"{match.group(1)}.{match.group(2)}"


def release_words(releases: Sequence[str]) -> str:
    """How a set of releases is named where one cannot be told apart from another: the same package versions
    ship in 2.31.0 and 2.31.1, so such an environment is `2.31.0/2.31.1`, never just the newer one (every
    number shown comes from the facts). Oldest first; more than three as `first/…/last`."""
    ordered = sorted(set(releases), key=release_tuple)
    if len(ordered) > 3:
        ordered = [ordered[0], "…", ordered[-1]]
    return "/".join(ordered)
