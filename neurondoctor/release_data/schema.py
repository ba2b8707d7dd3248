"""Shape checks for release-data documents, so a corrupt file is refused with a message, not a traceback.

AWS's `n2-manifest.json` is checked before conversion and whenever `manifests update` downloads one; the
project's own `sdk.json`, `releases/X.Y.Z.json`, `compat.json`, `instances.json`, `os-support.json` and
`env-vars.json` on load.
"""

from __future__ import annotations

import re
from typing import Any

from neurondoctor.python_packaging import valid_specifier

RELEASE_PATTERN = re.compile(r"^\d+\.\d+\.\d+$")

SDK_SCHEMA = "neurondoctor.sdk/1"
RELEASE_SCHEMA = "neurondoctor.release/1"
COMPAT_SCHEMA = "neurondoctor.compat/1"


class SchemaError(ValueError):
    """A document does not have the shape the doctor relies on; the message names where."""


def _require(condition: bool, where: str, message: str) -> None:
    if not condition:
        raise SchemaError(f"{where}: {message}")


def _string_list(value: Any, where: str) -> None:
    _require(isinstance(value, list), where, "expected a list of strings")
    for index, item in enumerate(value):
        _require(isinstance(item, str), f"{where}[{index}]", "expected a string")


def _object(value: Any, where: str) -> dict[str, Any]:
    _require(isinstance(value, dict), where, "expected an object")
    return value  # type: ignore[no-any-return]


def _release_name(value: Any, where: str) -> None:
    _require(isinstance(value, str) and RELEASE_PATTERN.match(value) is not None, where,
             f"expected a release like 2.31.1, got {value!r}")


def _check_package(package: Any, where: str, instances_key: str, python_key: str, lists_optional: bool) -> None:
    """One package entry: non-empty name and version, and lists of strings for instances and Pythons."""
    item = _object(package, where)
    for key in ("name", "version"):
        _require(isinstance(item.get(key), str) and item[key] != "", f"{where}.{key}", "expected a non-empty string")
    for key in (instances_key, python_key):
        _string_list(item.get(key, []) if lists_optional else item.get(key), f"{where}.{key}")


def check_n2_manifest(doc: Any) -> None:
    """AWS's n2-manifest.json: the keys the converter reads (docs/neuron-facts.md §1.5)."""
    top = _object(doc, "manifest")
    for key in ("manifest_version", "neuron_releases", "package_properties", "repos_n2"):
        _require(key in top, "manifest", f"missing key {key!r}")
    _release_name(top["manifest_version"], "manifest.manifest_version")
    releases = top["neuron_releases"]
    _require(isinstance(releases, list) and len(releases) > 0, "manifest.neuron_releases",
             "expected a non-empty list")
    for index, release in enumerate(releases):
        where = f"manifest.neuron_releases[{index}]"
        entry = _object(release, where)
        _release_name(entry.get("neuron_version"), f"{where}.neuron_version")
        packages = entry.get("packages")
        _require(isinstance(packages, list), f"{where}.packages", "expected a list")
        for package_index, package in enumerate(packages or []):
            _check_package(package, f"{where}.packages[{package_index}]", "supported_instances",
                           "supported_python_versions", lists_optional=True)
    for index, prop in enumerate(top["package_properties"]):
        where = f"manifest.package_properties[{index}]"
        _require(isinstance(_object(prop, where).get("name"), str), f"{where}.name", "expected a string")
    for index, repo in enumerate(top["repos_n2"]):
        where = f"manifest.repos_n2[{index}]"
        item = _object(repo, where)
        _require(isinstance(item.get("repo_type"), str) and isinstance(item.get("repo_url"), str), where,
                 "expected repo_type and repo_url strings")
        _require(str(item["repo_url"]).startswith("https://"), f"{where}.repo_url", "expected an https URL")


def check_sdk_document(doc: Any) -> None:
    """`manifests/sdk.json`: what is known about the SDK as a whole."""
    top = _object(doc, "sdk")
    _require(top.get("schema") == SDK_SCHEMA, "sdk.schema", f"expected {SDK_SCHEMA!r}")
    _release_name(top.get("manifest_version"), "sdk.manifest_version")
    releases = top.get("releases")
    _string_list(releases, "sdk.releases")
    for index, name in enumerate(releases or []):
        _release_name(name, f"sdk.releases[{index}]")
    repositories = _object(top.get("repositories"), "sdk.repositories")
    for kind in ("pip", "apt", "yum"):
        _require(isinstance(repositories.get(kind), str), f"sdk.repositories.{kind}", "expected a URL")
    for index, os_entry in enumerate(top.get("operating_systems", [])):
        _object(os_entry, f"sdk.operating_systems[{index}]")
    _object(top.get("major_pins"), "sdk.major_pins")
    packages = _object(top.get("packages"), "sdk.packages")
    for name, props in packages.items():
        item = _object(props, f"sdk.packages.{name}")
        _require(item.get("type") in ("pip", "os", "na"), f"sdk.packages.{name}.type",
                 "expected pip, os or na")


_ONLY_STRINGS = frozenset({str})


def _well_formed_package(item: Any) -> bool:
    """The common case in one expression (the lists' element types compared in C, not element by element in a
    generator: 2,000 packages are checked on every run); only a failure walks the slow path that names the
    field."""
    return (type(item) is dict and type(item.get("name")) is str and item["name"] != ""
            and type(item.get("version")) is str and item["version"] != ""
            and type(item.get("instances")) is list and _ONLY_STRINGS.issuperset(map(type, item["instances"]))
            and type(item.get("python")) is list and _ONLY_STRINGS.issuperset(map(type, item["python"])))


def check_release_document(doc: Any, expected_release: str) -> None:
    """`manifests/releases/X.Y.Z.json`: one release's packages."""
    top = _object(doc, "release")
    _require(top.get("schema") == RELEASE_SCHEMA, "release.schema", f"expected {RELEASE_SCHEMA!r}")
    _require(top.get("release") == expected_release, "release.release",
             f"expected {expected_release!r}, got {top.get('release')!r}")
    packages = top.get("packages")
    _require(isinstance(packages, list), "release.packages", "expected a list")
    if all(map(_well_formed_package, packages or [])):
        return
    for index, package in enumerate(packages or []):
        _check_package(package, f"release.packages[{index}]", "instances", "python", lists_optional=False)


def check_compat_document(doc: Any) -> None:
    """`manifests/compat.json`: the hand-kept facts the AWS manifest does not carry."""
    top = _object(doc, "compat")
    _require(top.get("schema") == COMPAT_SCHEMA, "compat.schema", f"expected {COMPAT_SCHEMA!r}")
    for key in ("carryover", "placeholders", "framework_packages", "anchor_order", "third_party_packages",
                "torch_frameworks", "conflicts"):
        _require(key in top, "compat", f"missing key {key!r}")
    for release, entries in _object(top["carryover"], "compat.carryover").items():
        _release_name(release, f"compat.carryover.{release}")
        _require(isinstance(entries, list), f"compat.carryover.{release}", "expected a list")
        for index, entry in enumerate(entries):
            item = _object(entry, f"compat.carryover.{release}[{index}]")
            _require(isinstance(item.get("name"), str), f"compat.carryover.{release}[{index}].name",
                     "expected a string")
            _release_name(item.get("from_release"), f"compat.carryover.{release}[{index}].from_release")
    for index, entry in enumerate(top["placeholders"]):
        item = _object(entry, f"compat.placeholders[{index}]")
        _require(isinstance(item.get("name"), str) and isinstance(item.get("version"), str),
                 f"compat.placeholders[{index}]", "expected name and version strings")
    for name, props in _object(top["framework_packages"], "compat.framework_packages").items():
        item = _object(props, f"compat.framework_packages.{name}")
        _require(item.get("severity") in ("error", "warning"), f"compat.framework_packages.{name}.severity",
                 "expected error or warning")
    _string_list(top["third_party_packages"], "compat.third_party_packages")
    for name, props in _object(top["torch_frameworks"], "compat.torch_frameworks").items():
        item = _object(props, f"compat.torch_frameworks.{name}")
        _require(isinstance(item.get("stack"), str), f"compat.torch_frameworks.{name}.stack", "expected a string")
        if "native" in item:
            native = _object(item["native"], f"compat.torch_frameworks.{name}.native")
            _require(isinstance(native.get("from_torch"), str), f"compat.torch_frameworks.{name}.native.from_torch",
                     "expected a string")
            _require(all(isinstance(value, str) for value in _object(native.get("torch", {}),
                                                                      f"compat.torch_frameworks.{name}.native.torch")
                         .values()), f"compat.torch_frameworks.{name}.native.torch", "expected strings")
    _string_list(top["anchor_order"], "compat.anchor_order")
    for index, entry in enumerate(top["conflicts"]):
        where = f"compat.conflicts[{index}]"
        item = _object(entry, where)
        for key in ("installed", "beside", "remove"):
            _string_list(item.get(key), f"{where}.{key}")
        _require(isinstance(item.get("why"), str), f"{where}.why", "expected a string")
    for index, entry in enumerate(top.get("undeclared_requirements", [])):
        where = f"compat.undeclared_requirements[{index}]"
        item = _object(entry, where)
        for key in ("package", "requires", "source"):
            _require(isinstance(item.get(key), str), f"{where}.{key}", "expected a string")
        _require(item.get("basis") in ("documented", "reported"), f"{where}.basis", "expected documented or reported")
        _require(item.get("judged", "always") in ("always", "when-installed"), f"{where}.judged",
                 "expected always or when-installed")
        _require(item.get("index", "pypi") in ("pypi", "neuron"), f"{where}.index", "expected pypi or neuron")
        _require(isinstance(item.get("beside", ""), str), f"{where}.beside", "expected a string")


INSTANCES_SCHEMA = "neurondoctor.instances/1"
_INSTANCE_INTEGERS = ("devices", "cores", "cores_per_device", "default_logical_nc_config", "efa_interfaces")


def check_instances_document(doc: Any) -> None:
    """`manifests/instances.json`: devices, cores, logical core configs and EFA interfaces per instance type."""
    top = _object(doc, "instances")
    _require(top.get("schema") == INSTANCES_SCHEMA, "instances.schema", f"expected {INSTANCES_SCHEMA!r}")
    for name, props in _object(top.get("instances"), "instances.instances").items():
        where = f"instances.instances.{name}"
        item = _object(props, where)
        for key in _INSTANCE_INTEGERS:
            _require(type(item.get(key)) is int and item[key] >= 0, f"{where}.{key}", "expected a count")
        _require(isinstance(item.get("family"), str) and isinstance(item.get("pci_device_id"), str), where,
                 "expected family and pci_device_id strings")
        if "physical_cores_per_device" in item:
            _require(type(item["physical_cores_per_device"]) is int and item["physical_cores_per_device"] > 0,
                     f"{where}.physical_cores_per_device", "expected a count")
        configs = item.get("logical_nc_configs")
        _require(isinstance(configs, list) and all(type(value) is int for value in configs),
                 f"{where}.logical_nc_configs", "expected a list of integers")


END_OF_SUPPORT_SCHEMA = "neurondoctor.end-of-support/1"
OS_SUPPORT_SCHEMA = "neurondoctor.os-support/1"
_TESTED_ROW_STRINGS = ("os", "version", "kernel", "glibc")


def _check_tested_rows(rows: Any, where: str) -> None:
    _require(isinstance(rows, list), where, "expected a list of tested configurations")
    for index, row in enumerate(rows):
        item = _object(row, f"{where}[{index}]")
        for key in _TESTED_ROW_STRINGS:
            _require(isinstance(item.get(key), str) and item[key] != "", f"{where}[{index}].{key}",
                     "expected a non-empty string")
        _string_list(item.get("instances"), f"{where}[{index}].instances")


def check_os_support_document(doc: Any) -> None:
    """`manifests/os-support.json`: tested OS/kernel/GLIBC tables per release, ends of support, GLIBC needs."""
    top = _object(doc, "os-support")
    _require(top.get("schema") == OS_SUPPORT_SCHEMA, "os-support.schema", f"expected {OS_SUPPORT_SCHEMA!r}")
    tables = top.get("tables")
    _require(isinstance(tables, list), "os-support.tables", "expected a list")
    for index, table in enumerate(tables or []):
        where = f"os-support.tables[{index}]"
        item = _object(table, where)
        _release_name(item.get("from_release"), f"{where}.from_release")
        for part in ("runtime", "driver"):
            _check_tested_rows(item.get(part), f"{where}.{part}")
    for index, end in enumerate(top.get("os_ends", [])):
        item = _object(end, f"os-support.os_ends[{index}]")
        for key in ("os", "version", "last_line", "severity", "part", "replacement", "source"):
            _require(isinstance(item.get(key), str), f"os-support.os_ends[{index}].{key}", "expected a string")
        _require(item["severity"] in ("warning", "error"), f"os-support.os_ends[{index}].severity",
                 "expected warning or error")
    for index, need in enumerate(top.get("glibc_requirements", [])):
        item = _object(need, f"os-support.glibc_requirements[{index}]")
        for key in ("package", "from_version", "glibc", "last_version_without", "release_without", "binaries"):
            _require(isinstance(item.get(key), str), f"os-support.glibc_requirements[{index}].{key}",
                     "expected a string")
    glibc = _object(top.get("os_glibc", {}), "os-support.os_glibc")
    for key, value in glibc.items():
        _require(isinstance(value, str), f"os-support.os_glibc.{key}", "expected a string")
    for index, row in enumerate(top.get("framework_os", [])):
        where = f"os-support.framework_os[{index}]"
        item = _object(row, where)
        for key in ("package", "stack", "source"):
            _require(isinstance(item.get(key), str), f"{where}.{key}", "expected a string")
        _release_name(item.get("from_release"), f"{where}.from_release")
        _string_list(item.get("arch", []), f"{where}.arch")
        for part in ("supported", "ended"):
            for position, entry in enumerate(item.get(part, [])):
                os_row = _object(entry, f"{where}.{part}[{position}]")
                _require(isinstance(os_row.get("os"), str) and isinstance(os_row.get("version"), str),
                         f"{where}.{part}[{position}]", "expected os and version strings")


def check_end_of_support_document(doc: Any) -> None:
    """`manifests/end-of-support.json`: AWS's end-of-support announcements (what, from which release, the page)
    and the published releases whose package lists the data lacks."""
    top = _object(doc, "end-of-support")
    _require(top.get("schema") == END_OF_SUPPORT_SCHEMA, "end-of-support.schema",
             f"expected {END_OF_SUPPORT_SCHEMA!r}")
    announcements = top.get("announcements")
    _require(isinstance(announcements, list), "end-of-support.announcements", "expected a list")
    for index, entry in enumerate(announcements or []):
        where = f"end-of-support.announcements[{index}]"
        item = _object(entry, where)
        for key in ("id", "what", "source", "way_forward", "fix"):
            _require(isinstance(item.get(key), str) and item[key] != "", f"{where}.{key}", "expected a string")
        _require(str(item["source"]).startswith("https://"), f"{where}.source", "expected an https page")
        _release_name(item.get("ends_in"), f"{where}.ends_in")
        if item.get("announced_in") is not None:
            _release_name(item.get("announced_in"), f"{where}.announced_in")
        packages = _object(item.get("packages"), f"{where}.packages")
        for name, specifier in packages.items():
            _require(isinstance(specifier, str), f"{where}.packages.{name}", "expected a version specifier")
        _require(item.get("stack") in (None, "xla", "native"), f"{where}.stack", "expected xla, native or null")
        _string_list(item.get("instances"), f"{where}.instances")
        _require(item["fix"] in ("native-venv", "release-venv", "advice"), f"{where}.fix",
                 "expected native-venv, release-venv or advice")
    for index, entry in enumerate(top.get("releases_without_package_data", [])):
        where = f"end-of-support.releases_without_package_data[{index}]"
        item = _object(entry, where)
        _release_name(item.get("release"), f"{where}.release")
        for key in ("date", "source", "why"):
            _require(isinstance(item.get(key), str), f"{where}.{key}", "expected a string")


ENV_VARS_SCHEMA = "neurondoctor.env-vars/1"
# What a variable's value is, as its page describes it; `unstated` where the page gives no type.
ENV_VAR_KINDS = frozenset({"bool", "integer", "enum", "core-list", "count-list", "path", "flags", "address", "text",
                           "unstated"})
ENV_VAR_OWNERS = frozenset({"runtime", "compiler", "collectives", "framework", "tools", "containers"})
RETIRED_EFFECTS = frozenset({"ignored", "honoured", "not stated"})
NOT_STATED = "not stated"
RUNTIME_BOOLEANS = "runtime booleans"


def _check_variable(name: str, item: dict[str, Any], has_booleans: bool) -> None:
    where = f"env-vars.variables.{name}"
    _require(item.get("owner") in ENV_VAR_OWNERS, f"{where}.owner", f"expected one of {sorted(ENV_VAR_OWNERS)}")
    _require(item.get("kind") in ENV_VAR_KINDS, f"{where}.kind", f"expected one of {sorted(ENV_VAR_KINDS)}")
    _require(isinstance(item.get("source"), str) and item["source"] != "", f"{where}.source", "expected a page")
    values = item.get("values")
    if isinstance(values, list):
        _string_list(values, f"{where}.values")
        _require(values != [], f"{where}.values", "expected at least one value")
    else:
        _require(values in (NOT_STATED, RUNTIME_BOOLEANS), f"{where}.values",
                 f"expected a list, {NOT_STATED!r} or {RUNTIME_BOOLEANS!r}")
        _require(values != RUNTIME_BOOLEANS or has_booleans, f"{where}.values", "runtime_booleans is missing")
    _require(isinstance(item.get("closed"), bool), f"{where}.closed", "expected true or false")
    bounds = item.get("range")
    if bounds is not None:
        _require(isinstance(bounds, list) and len(bounds) == 2 and type(bounds[0]) is int
                 and (bounds[1] is None or type(bounds[1]) is int), f"{where}.range", "expected [low, high or null]")
    _require(not item["closed"] or values != NOT_STATED or (item["kind"] == "integer" and bounds is not None),
             f"{where}.closed", "a closed variable needs its values or its range")
    for key in ("default", "invalid", "judged_by", "since", "per_family", "note"):
        _require(isinstance(item.get(key, ""), str), f"{where}.{key}", "expected a string")
    _require(isinstance(item.get("case_insensitive", False), bool), f"{where}.case_insensitive", "expected a bool")
    _string_list(item.get("families", []), f"{where}.families")


def _check_retired(name: str, item: dict[str, Any]) -> None:
    where = f"env-vars.retired.{name}"
    _require(item.get("owner") in ENV_VAR_OWNERS, f"{where}.owner", f"expected one of {sorted(ENV_VAR_OWNERS)}")
    _require(item.get("effect") in RETIRED_EFFECTS, f"{where}.effect", f"expected one of {sorted(RETIRED_EFFECTS)}")
    for key in ("source", "replacement"):
        _require(isinstance(item.get(key), str) and item[key] != "", f"{where}.{key}", "expected a string")
    if item.get("retired_in") is not None:
        _release_name(item["retired_in"], f"{where}.retired_in")
    _require(item.get("retired_in") is not None or isinstance(item.get("deprecated_in"), str), where,
             "expected retired_in or deprecated_in")
    _string_list(item.get("replaced_by"), f"{where}.replaced_by")
    equivalent = item.get("direct_equivalent")
    _require(equivalent is None or equivalent in item["replaced_by"], f"{where}.direct_equivalent",
             "expected null or one of replaced_by")
    _require(isinstance(item.get("warns", False), bool), f"{where}.warns", "expected a bool")


def check_env_vars_document(doc: Any) -> None:
    """`manifests/env-vars.json`: the documented variables (owner, kind, values, page) and the retired ones."""
    top = _object(doc, "env-vars")
    _require(top.get("schema") == ENV_VARS_SCHEMA, "env-vars.schema", f"expected {ENV_VARS_SCHEMA!r}")
    booleans = top.get("runtime_booleans")
    if booleans is not None:
        _string_list(_object(booleans, "env-vars.runtime_booleans").get("values"), "env-vars.runtime_booleans.values")
    for name, props in _object(top.get("variables"), "env-vars.variables").items():
        _check_variable(name, _object(props, f"env-vars.variables.{name}"), booleans is not None)
    for name, props in _object(top.get("retired"), "env-vars.retired").items():
        _check_retired(name, _object(props, f"env-vars.retired.{name}"))


SUPPORT_RANGES_SCHEMA = "neurondoctor.support-ranges/1"
SUPPORT_OUTSIDE = ("fails", "unsupported")  # documented as not working (an error) / not supported (a warning)


def _specifier(value: Any, where: str, empty_allowed: bool) -> None:
    """A PEP 440 specifier set as pip reads it (`>=0.10.0,<=0.11.2`); "" where any version is meant."""
    _require(isinstance(value, str) and (empty_allowed or value != ""), where, "expected a version specifier")
    _require(valid_specifier(str(value)), where, f"{value!r} is not a version specifier")


def _check_support_entry(item: dict[str, Any], where: str) -> None:
    """What every support entry carries: its id, package, page, release span and what the page says of the rest."""
    for key in ("id", "package", "source"):
        _require(isinstance(item.get(key), str) and item[key] != "", f"{where}.{key}", "expected a string")
    _require(str(item["source"]).startswith("https://"), f"{where}.source", "expected an https page")
    _require(item.get("outside") in SUPPORT_OUTSIDE, f"{where}.outside", f"expected one of {SUPPORT_OUTSIDE}")
    span = _object(item.get("releases"), f"{where}.releases")
    _release_name(span.get("from"), f"{where}.releases.from")
    if span.get("to") is not None:
        _release_name(span.get("to"), f"{where}.releases.to")
        first = tuple(int(part) for part in str(span["from"]).split("."))
        _require(first <= tuple(int(part) for part in str(span["to"]).split(".")), f"{where}.releases",
                 "expected `from` no later than `to`")
    for key in ("covered_by", "below_covered_by", "note", "way_forward"):
        _require(item.get(key) is None or isinstance(item[key], str), f"{where}.{key}", "expected a string")


def check_support_ranges_document(doc: Any) -> None:
    """`manifests/support-ranges.json`: AWS's published version ranges and instance families per release."""
    top = _object(doc, "support-ranges")
    _require(top.get("schema") == SUPPORT_RANGES_SCHEMA, "support-ranges.schema",
             f"expected {SUPPORT_RANGES_SCHEMA!r}")
    for key in ("ranges", "instances", "not_published"):
        _require(isinstance(top.get(key), list), f"support-ranges.{key}", "expected a list")
    for index, entry in enumerate(top["ranges"]):
        where = f"support-ranges.ranges[{index}]"
        item = _object(entry, where)
        _check_support_entry(item, where)
        _specifier(item.get("supported"), f"{where}.supported", empty_allowed=False)
        for name, specifier in _object(item.get("beside"), f"{where}.beside").items():
            _specifier(specifier, f"{where}.beside.{name}", empty_allowed=True)
    for index, entry in enumerate(top["instances"]):
        where = f"support-ranges.instances[{index}]"
        item = _object(entry, where)
        _check_support_entry(item, where)
        _specifier(item.get("versions"), f"{where}.versions", empty_allowed=True)
        _string_list(item.get("instances"), f"{where}.instances")
        _require(bool(item["instances"]), f"{where}.instances", "expected at least one family")
    images = top.get("images", [])  # a copy written before images were data has none
    _require(isinstance(images, list), "support-ranges.images", "expected a list")
    for index, entry in enumerate(images):
        where = f"support-ranges.images[{index}]"
        item = _object(entry, where)
        _check_support_entry(item, where)
        _specifier(item.get("versions"), f"{where}.versions", empty_allowed=True)
        for key in ("instances", "markers"):
            _string_list(item.get(key), f"{where}.{key}")
            _require(bool(item[key]), f"{where}.{key}", "expected at least one")
        for key in ("image", "dockerfile"):
            _require(isinstance(item.get(key), str) and item[key] != "", f"{where}.{key}", "expected a string")
        for family, words in _object(item.get("way_out"), f"{where}.way_out").items():
            _require(isinstance(words, str) and words != "", f"{where}.way_out.{family}", "expected a string")
    for index, entry in enumerate(top["not_published"]):
        where = f"support-ranges.not_published[{index}]"
        item = _object(entry, where)
        for key in ("what", "why", "source"):
            _require(isinstance(item.get(key), str) and item[key] != "", f"{where}.{key}", "expected a string")


PACKAGE_FIXES_SCHEMA = "neurondoctor.package-fixes/1"


def check_package_fixes_document(doc: Any) -> None:
    """`manifests/package-fixes.json`: a package's bugs that a later version fixes, each with its release notes."""
    top = _object(doc, "package-fixes")
    _require(top.get("schema") == PACKAGE_FIXES_SCHEMA, "package-fixes.schema", f"expected {PACKAGE_FIXES_SCHEMA!r}")
    fixes = top.get("fixes")
    _require(isinstance(fixes, list), "package-fixes.fixes", "expected a list")
    for index, entry in enumerate(fixes or []):
        where = f"package-fixes.fixes[{index}]"
        item = _object(entry, where)
        for key in ("id", "package", "affected", "fixed_in", "what", "symptom", "source"):
            _require(isinstance(item.get(key), str) and item[key] != "", f"{where}.{key}", "expected a string")
        _require(str(item["source"]).startswith("https://"), f"{where}.source", "expected an https page")
        _release_name(item.get("release"), f"{where}.release")
