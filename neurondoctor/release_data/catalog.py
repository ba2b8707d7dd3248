"""The release catalog: which releases contain which package versions, built from `manifests/`.

A corrupt or truncated file is recorded as a load problem naming the file and skipped; the rest of the
catalog still answers, so the report still comes out (docs/contracts.md §5).
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NamedTuple, Optional

from neurondoctor.neuron_version import (
    framework_prefix,
    major_minor,
    normalize_neuron_version,
    release_tuple,
)
from neurondoctor.python_packaging import canonical_name, matches
from neurondoctor.regular_files import read_regular_file
from neurondoctor.release_data.schema import (
    SchemaError,
    check_compat_document,
    check_end_of_support_document,
    check_env_vars_document,
    check_instances_document,
    check_os_support_document,
    check_package_fixes_document,
    check_release_document,
    check_sdk_document,
    check_support_ranges_document,
)

if TYPE_CHECKING:  # each imported when first made or asked for
    from neurondoctor.release_data.env_var_table import EnvVarTable
    from neurondoctor.release_data.load_problem import LoadProblem
    from neurondoctor.release_data.neighbours import Neighbours
    from neurondoctor.release_data.os_support import OsSupport

MANIFEST_FILE_LIMIT = 32 << 20
MANIFEST_DIR_ENV = "NEURONDOCTOR_MANIFESTS"
CACHE_DIR_ENV = "NEURONDOCTOR_CACHE_DIR"
MANIFEST_URL_ENV = "NEURONDOCTOR_MANIFEST_URL"  # where `manifests update` fetches by default (a mirror)


class PackageEntry(NamedTuple):
    """One package version as a release lists it (a tuple: about 2,000 are built on every run)."""

    name: str
    manifest_name: str
    version: str
    normalized_version: str
    instances: tuple[str, ...]
    python: tuple[str, ...]
    carried_from: Optional[str] = None

    def matches(self, normalized: str) -> bool:
        """This entry's version, or a member of its family: TorchNeuron ships as `2.14.3.0.*` (its build number is
        not published, release-notes/components/torchneuron.rst), which `2.14.3.0.41200` belongs to."""
        return self.normalized_version == normalized or in_family(normalized, self.normalized_version)


def in_family(normalized: str, listed: str) -> bool:
    """`2.14.3.0.41200` is in the family `2.14.3.0.*`, and so is `2.14.3.0` itself (PEP 440's prefix match, as
    `pip install 'X==2.14.3.0.*'` decides it)."""
    return listed.endswith(".*") and matches(normalized, "==" + listed) is True


@dataclass(frozen=True)
class PartialRelease:
    """A release the data knows only in part (a hand-kept file with `not_known`, release_data/hand_kept.py): the
    packages whose version in it is not known, the other facts not known, and where the whole release will be."""

    release: str
    packages: frozenset[str]  # canonical names
    facts: tuple[str, ...]
    complete_source: str
    source: str


def partial_releases(sdk: Mapping[str, Any]) -> dict[str, PartialRelease]:
    """The releases `sdk.json` records as known in part (its `source.hand_kept[].not_known`); an official manifest
    that lists the release drops the note, so the release is whole from then on."""
    source = sdk.get("source")
    kept = source.get("hand_kept") if isinstance(source, dict) else None
    found: dict[str, PartialRelease] = {}
    for item in kept if isinstance(kept, list) else []:
        not_known = item.get("not_known") if isinstance(item, dict) else None
        if not isinstance(not_known, dict):
            continue
        packages = not_known.get("packages")
        facts = not_known.get("facts")
        release = str(item.get("release"))
        found[release] = PartialRelease(
            release, frozenset(canonical_name(str(name)) for name in packages if isinstance(name, str))
            if isinstance(packages, list) else frozenset(),
            tuple(str(fact) for fact in facts) if isinstance(facts, list) else (),
            str(not_known.get("complete_source") or ""), str(item.get("source") or ""))
    return found


@dataclass
class ReleaseCatalog:
    """Release data with lookups; every query is pure and cheap once built."""

    source_dir: str
    sdk: dict[str, Any]
    compat: dict[str, Any]
    releases: dict[str, tuple[PackageEntry, ...]]
    problems: list[LoadProblem] = field(default_factory=list)
    instances: dict[str, dict[str, Any]] = field(default_factory=dict)
    os_support: dict[str, Any] = field(default_factory=dict)
    end_of_support: dict[str, Any] = field(default_factory=dict)
    env_vars: dict[str, Any] = field(default_factory=dict)
    support_ranges: dict[str, Any] = field(default_factory=dict)
    package_fixes: list[dict[str, Any]] = field(default_factory=list)
    _index: dict[str, dict[str, list[str]]] = field(default_factory=dict, repr=False)
    _neuron_pip: Optional[frozenset[str]] = field(default=None, repr=False)

    def __post_init__(self) -> None:
        for release, entries in self.releases.items():
            for entry in entries:
                versions = self._index.setdefault(entry.name, {})
                bucket = versions.setdefault(entry.normalized_version, [])
                if release not in bucket:
                    bucket.append(release)

    @functools.cached_property
    def os_facts(self) -> OsSupport:
        """Lookups over `os-support.json`, built once per run when an OS rule first asks (two do, on a host with
        Neuron hardware or packages): its record classes are not even imported on a host without them."""
        from neurondoctor.release_data.os_support import OsSupport

        return OsSupport(self.os_support)

    @functools.cached_property
    def env_var_table(self) -> EnvVarTable:
        """Lookups over `env-vars.json`, built once per run when a rule first asks about a variable the data lists
        (its record classes are imported then, not at start-up)."""
        from neurondoctor.release_data.env_var_table import EnvVarTable

        return EnvVarTable(self.env_vars)

    @functools.cached_property
    def env_var_names(self) -> frozenset[str]:
        """Every variable `env-vars.json` lists, documented or retired (`EnvVarTable.names`), read from the document
        itself: which variables a report keeps is decided on every run, the table is built only when asked."""
        return frozenset(self.env_vars.get("variables", {})) | frozenset(self.env_vars.get("retired", {}))

    def logical_nc_families(self) -> tuple[str, ...]:
        """The instance families with logical NeuronCores: where `env-vars.json` gives NEURON_LOGICAL_NC_CONFIG's
        families, else the families `instances.json` lists with more than one logical core config."""
        documented = self.env_var_table.documented("NEURON_LOGICAL_NC_CONFIG")
        if documented is not None and documented.families:
            return documented.families
        return tuple(sorted({str(props.get("family")) for props in self.instances.values()
                             if len(props.get("logical_nc_configs") or ()) > 1}))

    def framework_entry(self, release: str, name: str) -> Optional[PackageEntry]:
        """The newest entry of `name` a PyTorch/XLA torch-neuronx environment of `release` installs: for
        libneuronxla only the line torch-neuronx uses (compat.json `venv_libneuronxla_line`; 3.x is JAX's), for
        torch-neuronx only the XLA one (2.33 also lists TorchNeuron 2.13/2.14, for Trn2/Trn3 only)."""
        line = str(self.compat.get("venv_libneuronxla_line", "2.")) if name == "libneuronxla" else ""
        entries = [entry for entry in self.entries(release, name) if entry.version.startswith(line)
                   and self.framework_stack(name, entry.version) in (None, "xla")]
        return max(entries, key=lambda entry: release_tuple(entry.version)) if entries else None

    def _native_line(self, name: str, version: str) -> Optional[str]:
        """`2.14` when this version of a torch framework is on the native line (compat.json torch_frameworks
        `native.from_torch`: torch-neuronx 2.13/2.14 is TorchNeuron, 2.9 the XLA one), else None."""
        props = self.compat.get("torch_frameworks", {}).get(name)
        native = props.get("native") if isinstance(props, dict) else None
        line = major_minor(version)
        if not isinstance(native, dict) or line is None:
            return None
        return line if release_tuple(line) >= release_tuple(str(native.get("from_torch", "999"))) else None

    def framework_torch(self, name: str, version: str) -> Optional[str]:
        """The torch a framework version is built for: the XLA torch-neuronx says it in its first three parts
        (`2.9.0.2.15.32035` → 2.9.0, sdk-policy.rst); TorchNeuron `2.14.3.0.*` is for PyTorch 2.14.0
        (compat.json `native.torch`). None for a placeholder (`1.0`)."""
        line = self._native_line(name, version)
        if line is None:
            return framework_prefix(version)
        props = self.compat["torch_frameworks"][name]["native"]
        return str(props.get("torch", {}).get(line) or f"{line}.0")

    def framework_stack(self, name: str, version: str) -> Optional[str]:
        """`xla` or `native`: which torch stack this framework version is (None for a package that is none)."""
        props = self.compat.get("torch_frameworks", {}).get(name)
        if not isinstance(props, dict):
            return None
        return "native" if self._native_line(name, version) else str(props.get("stack"))

    def torch_xla_for(self, torch: str) -> str:
        """The torch-xla a Neuron venv pairs with this torch (compat.json `venv_torch_pairs`: 2.8.1 for torch 2.8,
        the public 2.8.0 being 10-15% slower), else torch's own version."""
        minor = ".".join(torch.split("+")[0].split(".")[:2])
        pair = self.compat.get("venv_torch_pairs", {}).get(minor, {})
        return str(pair.get("torch-xla")) if isinstance(pair, dict) and pair.get("torch-xla") else torch.split("+")[0]

    @functools.cached_property
    def partial(self) -> dict[str, PartialRelease]:
        """The releases known only in part, by name (empty when every release is whole)."""
        return {release: item for release, item in partial_releases(self.sdk).items() if release in self.releases}

    def not_known_in(self, release: str, name: str) -> bool:
        """Whether the data does not know which version of this package `release` ships (a release known in part):
        such a package neither places an environment in that release nor contradicts it."""
        partial = self.partial.get(release)
        return partial is not None and canonical_name(name) in partial.packages

    def partial_newer_than(self, name: str) -> Optional[str]:
        """The newest release known in part that does not know this package and is newer than every release listing
        it: where a version above every known one most likely comes from (a 2.34 runtime while 2.34.0's runtime is
        not in the data)."""
        listing = [release for versions in self._index.get(canonical_name(name), {}).values() for release in versions]
        newest = max((release_tuple(release) for release in listing), default=())
        candidates = [release for release in self.partial if self.not_known_in(release, name)
                      and release_tuple(release) > newest]
        return max(candidates, key=release_tuple) if candidates else None

    @property
    def whole_latest(self) -> Optional[str]:
        """The newest release the data knows whole (a release known in part does not count)."""
        return next((release for release in self.release_names if release not in self.partial), None)

    @property
    def release_names(self) -> list[str]:
        """Newest first."""
        return sorted(self.releases, key=release_tuple, reverse=True)

    @property
    def latest(self) -> Optional[str]:
        names = self.release_names
        return names[0] if names else None

    @property
    def pypi_index(self) -> str:
        """PyPI's own index: an index-url naming it is not a mirror (it is pip's default, spelled out)."""
        return str(self.sdk.get("repositories", {}).get("pypi", "https://pypi.org/simple"))

    @property
    def pip_repository(self) -> str:
        return str(self.sdk.get("repositories", {}).get("pip", "https://pip.repos.neuron.amazonaws.com"))

    def knows_package(self, name: str) -> bool:
        return canonical_name(name) in self._index

    def neuron_pip_packages(self) -> frozenset[str]:
        """Normalised names of the Neuron pip packages the manifests list (third-party ones excluded).

        Computed once: every environment rule asks, and the answer walks all 51 releases."""
        if self._neuron_pip is None:
            third_party = {canonical_name(name) for name in self.compat.get("third_party_packages", [])}
            pip_names = {
                canonical_name(name)
                for name, props in self.sdk.get("packages", {}).items()
                if props.get("type") == "pip"
            }
            with_python = {entry.name for entries in self.releases.values() for entry in entries if entry.python}
            self._neuron_pip = frozenset((pip_names | with_python) - third_party)
        return self._neuron_pip

    def releases_with(self, name: str, version: str) -> list[str]:
        """Releases (newest first) that list this exact normalised version of the package, or its family."""
        versions = self._index.get(canonical_name(name), {})
        wanted = normalize_neuron_version(version)
        found = set(versions.get(wanted, []))
        for listed, releases in versions.items():
            if in_family(wanted, listed):
                found.update(releases)
        return sorted(found, key=release_tuple, reverse=True)

    def entries(self, release: str, name: str) -> list[PackageEntry]:
        wanted = canonical_name(name)
        return [entry for entry in self.releases.get(release, ()) if entry.name == wanted]

    def newer_than_known(self, name: str, version: str) -> bool:
        """Above every version of this package the data lists: most likely from a release newer than the data
        (a 2.34 host next year), not a mixed or private build."""
        known = set(self._index.get(name, {}))
        normalized = normalize_neuron_version(version)
        if not known or any(in_family(normalized, listed) for listed in known):
            return False
        parts = self.compat.get("version_lines", {}).get(name)
        if isinstance(parts, int):  # a package released in lines side by side: compare within its line
            line = release_tuple(version)[:parts]
            known = {other for other in known if release_tuple(other)[:parts] == line} or known
        return all(release_tuple(version) > release_tuple(other) for other in known)

    def neighbours(self, name: str, version: str) -> Neighbours:
        """Nearest known versions of the package below and above `version`."""
        from neurondoctor.release_data.neighbours import Neighbours

        known = self._index.get(canonical_name(name), {})
        target = release_tuple(version)
        ordered = sorted(known, key=release_tuple)
        lower = [candidate for candidate in ordered if release_tuple(candidate) < target]
        higher = [candidate for candidate in ordered if release_tuple(candidate) > target]

        def described(candidate: Optional[str]) -> Optional[tuple[str, tuple[str, ...]]]:
            if candidate is None:
                return None
            return candidate, tuple(sorted(known[candidate], key=release_tuple, reverse=True))

        return Neighbours(described(lower[-1] if lower else None), described(higher[0] if higher else None))


def cache_manifest_dir(environ: Mapping[str, str]) -> Path:
    """Where `manifests update` keeps a newer manifest: `$NEURONDOCTOR_CACHE_DIR/manifests`, else
    `$XDG_CACHE_HOME/neurondoctor/manifests`, else `~/.cache/neurondoctor/manifests`."""
    if environ.get(CACHE_DIR_ENV):
        return Path(environ[CACHE_DIR_ENV]) / "manifests"
    base = environ.get("XDG_CACHE_HOME") or os.path.join(environ.get("HOME") or os.path.expanduser("~"), ".cache")
    return Path(base) / "neurondoctor" / "manifests"


def bundled_manifest_dir() -> Path:
    """`neurondoctor/_manifests` in an installed wheel; the repository's `manifests/` in a checkout."""
    package_dir = Path(__file__).resolve().parent.parent
    installed = package_dir / "_manifests"
    if installed.is_dir():
        return installed
    return package_dir.parent / "manifests"


def _problem(path: Path, message: str) -> LoadProblem:
    """One file's problem (its record class is imported only when a file is bad)."""
    from neurondoctor.release_data.load_problem import LoadProblem

    return LoadProblem(str(path), message)


def _read_json(path: Path, check: Callable[[Any], None], problems: list[LoadProblem]) -> Optional[Any]:
    try:
        document = json.loads(read_regular_file(path, MANIFEST_FILE_LIMIT).decode("utf-8"))
        check(document)
    except FileNotFoundError:
        problems.append(_problem(path, "missing"))
        return None
    except (OSError, UnicodeDecodeError) as error:
        problems.append(_problem(path, f"unreadable: {error}"))
        return None
    except json.JSONDecodeError as error:
        problems.append(_problem(path, f"corrupt or truncated JSON ({error.msg} at line {error.lineno})"))
        return None
    except RecursionError:
        problems.append(_problem(path, "refused: JSON nested too deeply"))
        return None
    except SchemaError as error:
        problems.append(_problem(path, f"unexpected shape: {error}"))
        return None
    return document


def _entries_from(document: dict[str, Any]) -> tuple[PackageEntry, ...]:
    return tuple(
        PackageEntry(canonical_name(package["name"]), package["name"], package["version"],
                     normalize_neuron_version(package["version"]), tuple(package["instances"]),
                     tuple(package["python"]))
        for package in document["packages"]
    )


def _apply_carryover(releases: dict[str, tuple[PackageEntry, ...]], compat: dict[str, Any]) -> None:
    """Add the packages a release officially installs from an earlier one (2.32.0 keeps 2.31's torch-neuronx)."""
    for release, carried in compat.get("carryover", {}).items():
        if release not in releases:
            continue
        added: list[PackageEntry] = []
        for item in carried:
            wanted_versions = set(item.get("versions", []))
            for entry in releases.get(item["from_release"], ()):
                if entry.name != canonical_name(item["name"]):
                    continue
                if wanted_versions and entry.normalized_version not in wanted_versions:
                    continue
                added.append(entry._replace(carried_from=item["from_release"]))
        releases[release] = releases[release] + tuple(added)


def _check_release(name: str, document: Any) -> None:
    check_release_document(document, name)


def load_release_files(directory: Path, names: Iterable[str],
                       problems: list[LoadProblem]) -> dict[str, tuple[PackageEntry, ...]]:
    releases: dict[str, tuple[PackageEntry, ...]] = {}
    for name in names:
        path = directory / "releases" / f"{name}.json"
        document = _read_json(path, functools.partial(_check_release, name), problems)
        if document is not None:
            releases[name] = _entries_from(document)
    return releases


def _updated_catalog(environ: Mapping[str, str], bundled: Path) -> Optional[ReleaseCatalog]:
    """The copy `manifests update` stored, when it loads cleanly and is not older than the bundled data."""
    cache = cache_manifest_dir(environ)
    try:
        if not (cache / "sdk.json").is_file():
            return None
    except OSError:  # a cache this user may not look into (HOME of another user): the bundled data serves
        return None
    candidate = load_catalog(cache, compat_directory=bundled, environ={})
    if candidate.problems:
        return None
    floor: list[LoadProblem] = []
    bundled_sdk = _read_json(bundled / "sdk.json", check_sdk_document, floor) or {}
    if release_tuple(str(candidate.sdk.get("manifest_version"))) < release_tuple(
            str(bundled_sdk.get("manifest_version", "0"))):
        return None
    return candidate


def load_catalog(directory: Optional[Path] = None, compat_directory: Optional[Path] = None,
                 environ: Optional[Mapping[str, str]] = None) -> ReleaseCatalog:
    """Load `sdk.json`, every listed release and `compat.json`; problems are recorded, never raised.

    Without a directory: `NEURONDOCTOR_MANIFESTS` (another copy with the same layout: tests, air-gapped
    mirrors), else a newer copy from `manifests update`, else the bundled data.
    """
    environ = os.environ if environ is None else environ
    override = environ.get(MANIFEST_DIR_ENV)
    if directory is None and not override:
        updated = _updated_catalog(environ, bundled_manifest_dir())
        if updated is not None:
            return updated
    base = directory or (Path(override) if override else bundled_manifest_dir())
    compat_base = compat_directory or base
    problems: list[LoadProblem] = []
    sdk = _read_json(base / "sdk.json", check_sdk_document, problems) or {}
    compat = _read_json(compat_base / "compat.json", check_compat_document, problems) or {}
    instances = (_read_json(compat_base / "instances.json", check_instances_document, problems) or {}).get(
        "instances", {})
    os_support = _read_json(compat_base / "os-support.json", check_os_support_document, problems) or {}
    end_of_support = _read_json(compat_base / "end-of-support.json", check_end_of_support_document, problems) or {}
    env_vars = _read_json(compat_base / "env-vars.json", check_env_vars_document, problems) or {}
    support_ranges = _read_json(compat_base / "support-ranges.json", check_support_ranges_document, problems) or {}
    package_fixes = (_read_json(compat_base / "package-fixes.json", check_package_fixes_document, problems) or {}).get(
        "fixes", [])
    names = sdk.get("releases") or sorted(
        (path.stem for path in (base / "releases").glob("*.json")), key=release_tuple, reverse=True)
    releases = load_release_files(base, names, problems)
    _apply_carryover(releases, compat)
    return ReleaseCatalog(str(base), sdk, compat, releases, problems, instances, os_support, end_of_support,
                          env_vars, support_ranges, package_fixes)
