"""env-var-misconfig: Neuron runtime variables that cannot work on this host.

`NEURON_RT_VISIBLE_CORES`: an index or inclusive range (`0-3`), taking precedence over
`NEURON_RT_NUM_CORES` (a count; 0 = all) (neuron-runtime/guides/configuration-guide.rst).
`NEURON_LOGICAL_NC_CONFIG` is 1 or 2 and applies to Trn2/Trn3 only (logical-neuroncore-config.rst). Those values
and families are read from manifests/env-vars.json, which also drives the retired-variable and value rules
(documented_env_vars.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from neurondoctor.rules.check import Check, FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_INFO, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Command, Fix, export, unset
from neurondoctor.rules.host_stack import compile_cache, documented_env_vars, operating_system, resources
from neurondoctor.rules.host_stack.documented_env_vars import shown_value
from neurondoctor.rules.host_stack.resources import GIB
from neurondoctor.strict_numbers import count_problem, parse_count

_DEVICE_NODE = r"/neuron([0-9]{1,4})$"  # compiled by `re` on a host with device nodes


# Longer numbers are not core indexes: malformed (strict_numbers: ASCII digits only, no sign or space).
_MAX_DIGITS = 9


@dataclass(frozen=True)
class CoreList:
    """The cores a `NEURON_RT_VISIBLE_CORES` value names, as merged inclusive ranges: `0-999999999999` is
    judged from its ends, never expanded into a list."""

    ranges: tuple[tuple[int, int], ...]

    @property
    def count(self) -> int:
        return sum(last - first + 1 for first, last in self.ranges)

    @property
    def highest(self) -> int:
        return self.ranges[-1][1]


def parse_core_list(value: str) -> Optional[CoreList]:
    """`3`, `0-3` or `0-1,4-5` -> the cores named; None when malformed (a reversed range, a huge number, a digit
    of another script, a sign or a space)."""
    ranges: list[tuple[int, int]] = []
    for part in value.split(","):
        bounds = [parse_count(bound, max_digits=_MAX_DIGITS) for bound in part.split("-")]
        if len(bounds) > 2 or None in bounds:
            return None
        first, last = bounds[0] or 0, bounds[-1] or 0
        if last < first:
            return None
        ranges.append((first, last))
    merged: list[tuple[int, int]] = []
    for first, last in sorted(ranges):
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(last, merged[-1][1]))
        else:
            merged.append((first, last))
    return CoreList(tuple(merged))


def _finding(finding_id: str, severity: str, title: str, detail: str, variable: str, value: str,
             fix: Command) -> Finding:
    return Finding(id=finding_id, category="env-var-misconfig", severity=severity, title=title, detail=detail,
                   evidence={"variable": variable, "value": value}, fix=Fix([fix]))


def _spaced(ctx: RuleContext, variable: str, value: str, kind: str) -> Finding:
    """A value that is right but for blanks around it (a YAML or .env file's quoting): a warning, not an error.
    How the runtime reads the variable is not published; C's own number readers skip leading blanks and stop at
    trailing ones, so the value may well work, and it may not: the fix writes it without the blanks."""
    finding_id = "ND-ENV-001" if variable == "NEURON_RT_VISIBLE_CORES" else "ND-ENV-002"
    return _finding(finding_id, SEVERITY_WARNING, f"{variable}={shown_value(value)!r} has blanks around the {kind}",
                    "How the runtime reads this variable is not published: it may take the number and it may "
                    "refuse the value; without the blanks it is read as meant.", variable, value,
                    export(variable, value.strip()))


def _core_kind(ctx: RuleContext) -> str:
    """`logical ` with the config in effect on Trn2/Trn3, where core indexes are logical ones."""
    lnc = ctx.logical_nc_config()
    return f"logical (NEURON_LOGICAL_NC_CONFIG={lnc}) " if lnc is not None else ""


def visible_cores(ctx: RuleContext) -> list[Finding]:
    """ND-ENV-001: NEURON_RT_VISIBLE_CORES malformed or naming cores this host does not have."""
    value = ctx.facts.environ.get("NEURON_RT_VISIBLE_CORES")
    if value is None:
        return []
    total = ctx.total_cores()
    cores = parse_core_list(value)
    shown = shown_value(value)
    stripped = parse_core_list(value.strip()) if cores is None and value.strip() != value else None
    if stripped is not None and (total is None or stripped.highest < total):
        return [_spaced(ctx, "NEURON_RT_VISIBLE_CORES", value, "core index or range")]
    if cores is None:
        return [_finding("ND-ENV-001", SEVERITY_ERROR, f"NEURON_RT_VISIBLE_CORES={shown!r} is not a core index or "
                         "range", "Use an index (`3`) or an inclusive range (`0-3`).", "NEURON_RT_VISIBLE_CORES",
                         value, export("NEURON_RT_VISIBLE_CORES", f"0-{(total or 1) - 1}"))]
    if total is None:
        return []
    if cores.highest < total:
        return _cores_of_devices_not_given(ctx, value, cores, total)
    first_outside = next(max(first, total) for first, last in cores.ranges if last >= total)
    return [_finding("ND-ENV-001", SEVERITY_ERROR,
                     f"NEURON_RT_VISIBLE_CORES={shown} names core(s) {first_outside}… but this host has {total} "
                     f"{_core_kind(ctx)}NeuronCores (0-{total - 1})",
                     "The runtime fails to initialise when asked for cores that do not exist.",
                     "NEURON_RT_VISIBLE_CORES", value, export("NEURON_RT_VISIBLE_CORES", f"0-{total - 1}"))]


def _given_devices(ctx: RuleContext) -> Optional[tuple[set[int], int]]:
    """(indexes of the devices this container was given, devices of the instance) when a container or pod has some
    but not all of them (ND-DEV-001's info); None elsewhere."""
    snapshot = ctx.facts.host.snapshot
    if not (snapshot.container or snapshot.kubernetes_pod):
        return None
    profiled = ctx.instance_profile().get("devices")
    expected = len(snapshot.pci) or (profiled if isinstance(profiled, int) else 0)
    given = {int(match.group(1)) for node in snapshot.device_nodes if (match := re.search(_DEVICE_NODE, node.path))}
    return (given, expected) if given and len(given) < expected else None


def _cores_of_devices_not_given(ctx: RuleContext, value: str, cores: CoreList, total: int) -> list[Finding]:
    """ND-ENV-001 (warning): cores that exist on the instance but on a device this container was not given. Core
    indexes are the instance's: the device plugin starts a container with `--device=/dev/neuron1 --env
    NEURON_RT_VISIBLE_CORES=2,3` (containers/tutorials/k8s-neuron-scheduler-flow), and the runtime opens the
    device of each core it is given, failing with `Could not open the nd0` for one the container lacks
    (nrt-troubleshoot.rst). A warning, not an error: the share is the scheduler's, and its numbering is read from
    its documentation, not from a device."""
    shared = _given_devices(ctx)
    if shared is None:
        return []
    given, expected = shared
    if total % expected:
        return []
    per_device = total // expected
    # every core named is below `total` here, so the ranges span at most the instance's devices
    missing = sorted({device for first, last in cores.ranges
                      for device in range(first // per_device, last // per_device + 1) if device not in given})
    if not missing:
        return []
    usable = ",".join(f"{device * per_device}-{device * per_device + per_device - 1}" for device in sorted(given))
    devices = ", ".join(f"/dev/neuron{device}" for device in missing[:4]) + ("…" if len(missing) > 4 else "")
    return [_finding("ND-ENV-001", SEVERITY_WARNING,
                     f"NEURON_RT_VISIBLE_CORES={shown_value(value)} names cores of {devices}, which this container was "
                     f"not given (it has {', '.join(f'/dev/neuron{device}' for device in sorted(given))}: cores "
                     f"{usable})",
                     f"Core indexes are the instance's ({per_device} {_core_kind(ctx)}cores per device); the runtime "
                     "opens the device of each core it is given and fails with `Could not open the nd…` for one the "
                     "container lacks. The device plugin sets this variable to the given devices' cores.",
                     "NEURON_RT_VISIBLE_CORES", value, export("NEURON_RT_VISIBLE_CORES", usable))]


def num_cores(ctx: RuleContext) -> list[Finding]:
    """ND-ENV-002: NEURON_RT_NUM_CORES not a count, above this host's cores, or shadowed by VISIBLE_CORES."""
    value = ctx.facts.environ.get("NEURON_RT_NUM_CORES")
    if value is None:
        return []
    total = ctx.total_cores()
    problem = count_problem(value, max_digits=_MAX_DIGITS)
    spaced = problem is not None and value.strip() != value and count_problem(value.strip(), max_digits=_MAX_DIGITS) \
        is None
    if spaced and (total is None or int(value.strip()) <= total):
        return [_spaced(ctx, "NEURON_RT_NUM_CORES", value, "core count")]
    if problem is not None:
        return [_finding("ND-ENV-002", SEVERITY_ERROR,
                         f"NEURON_RT_NUM_CORES={shown_value(value)!r} is not a core count",
                         f"It is a count of cores to claim (0 = all); this value is {problem}.",
                         "NEURON_RT_NUM_CORES", value, unset("NEURON_RT_NUM_CORES"))]
    if total is not None and int(value) > total:
        return [_finding("ND-ENV-002", SEVERITY_ERROR, f"NEURON_RT_NUM_CORES={value} but this host has {total} "
                         "NeuronCores", "The runtime cannot claim more cores than exist.", "NEURON_RT_NUM_CORES",
                         value, export("NEURON_RT_NUM_CORES", str(total)))]
    if "NEURON_RT_VISIBLE_CORES" in ctx.facts.environ:
        return [_finding("ND-ENV-002", SEVERITY_INFO, "NEURON_RT_NUM_CORES is ignored: NEURON_RT_VISIBLE_CORES is "
                         "also set and takes precedence", "Set one of them.", "NEURON_RT_NUM_CORES", value,
                         unset("NEURON_RT_NUM_CORES"))]
    return []


def _logical_core_values(ctx: RuleContext) -> tuple[str, ...]:
    """The values NEURON_LOGICAL_NC_CONFIG takes (env-vars.json; logical-neuroncore-config.rst: 1 or 2), else the
    logical core configs instances.json lists."""
    documented = ctx.catalog.env_var_table.documented("NEURON_LOGICAL_NC_CONFIG")
    if documented is not None and documented.values:
        return documented.values
    return tuple(sorted({str(config) for props in ctx.catalog.instances.values()
                         for config in props.get("logical_nc_configs") or ()}))


def logical_core_config(ctx: RuleContext) -> list[Finding]:
    """ND-ENV-003: NEURON_LOGICAL_NC_CONFIG on a family without logical cores, or not a value the docs give."""
    value = ctx.facts.environ.get("NEURON_LOGICAL_NC_CONFIG")
    if value is None:
        return []
    allowed = _logical_core_values(ctx)
    if allowed and value not in allowed:
        problem = count_problem(value, max_digits=_MAX_DIGITS)
        return [_finding("ND-ENV-003", SEVERITY_ERROR,
                         f"NEURON_LOGICAL_NC_CONFIG={shown_value(value)!r}: it must be {' or '.join(allowed)}",
                         "It must also match the compiler's `-lnc` setting" + (f"; this value is {problem}."
                                                                               if problem else "."),
                         "NEURON_LOGICAL_NC_CONFIG", value, unset("NEURON_LOGICAL_NC_CONFIG"))]
    family = ctx.facts.host.instance_family
    supported = ctx.catalog.logical_nc_families()
    if family is None or not supported or family in supported:
        return []
    return [_finding("ND-ENV-003", SEVERITY_WARNING,
                     f"NEURON_LOGICAL_NC_CONFIG={value} is set on {ctx.facts.host.instance_type}, which has no "
                     "logical NeuronCores", f"Logical NeuronCore configuration applies to {', '.join(supported)} "
                     "only; a leftover setting from a Trn2 job.", "NEURON_LOGICAL_NC_CONFIG", value,
                     unset("NEURON_LOGICAL_NC_CONFIG"))]


def _requested_core_count(ctx: RuleContext) -> tuple[str, int] | None:
    """(variable, cores a process asks for): VISIBLE_CORES wins over NUM_CORES (configuration-guide.rst)."""
    visible = ctx.facts.environ.get("NEURON_RT_VISIBLE_CORES")
    if visible is not None:
        cores = parse_core_list(visible)
        return ("NEURON_RT_VISIBLE_CORES", cores.count) if cores else None
    number = parse_count(ctx.facts.environ.get("NEURON_RT_NUM_CORES", ""), max_digits=_MAX_DIGITS)
    return ("NEURON_RT_NUM_CORES", number) if number else None


def collective_core_count(ctx: RuleContext) -> list[Finding]:
    """ND-ENV-004: a core count the single-instance collectives topology does not support."""
    sets = ctx.catalog.compat.get("collective_rank_sets", {})
    allowed = sets.get(ctx.facts.host.instance_type or "")
    requested = _requested_core_count(ctx)
    if not isinstance(allowed, list) or requested is None or requested[1] in allowed:
        return []
    variable, count = requested
    usable = max(size for size in allowed if size <= count)
    return [_finding("ND-ENV-004", SEVERITY_WARNING,
                     f"{variable} gives each process {count} NeuronCores; collectives on a "
                     f"{ctx.facts.host.instance_type} run in sets of {', '.join(map(str, allowed[1:]))}",
                     f"The single-instance topology supports collective operators across 2, 8 or 32 ranks; a job "
                     f"that runs collectives over {count} ranks is outside it ({sets.get('source', '')}).", variable,
                     ctx.facts.environ[variable], export("NEURON_RT_VISIBLE_CORES", f"0-{usable - 1}"))]


def host_env_summary(ctx: RuleContext) -> str:
    """`NEURON_RT_* unset; compile cache /var/tmp/neuron-compile-cache, 41 GiB free`."""
    variables = [key for key in ctx.facts.environ if key.startswith("NEURON_RT_")]
    parts = [f"{', '.join(variables)} set" if variables else "NEURON_RT_* unset"]
    cache = ctx.facts.host.snapshot.compile_cache
    if cache is not None:
        free = f", {cache.free_bytes / GIB:.0f} GiB free" if cache.free_bytes is not None else ""
        if cache.disk_not_known is not None:
            free = f" (free disk not known: {cache.disk_not_known})"
        parts.append(f"compile cache {cache.path}{free}")
    return "; ".join(parts)


RULE_SET = RuleSet(
    rules=(visible_cores, num_cores, logical_core_config, collective_core_count),
    findings=(
        FindingSpec("ND-ENV-001", "env-var-misconfig", SEVERITY_ERROR,
                    "NEURON_RT_VISIBLE_CORES malformed or naming cores this host does not have (or, in a container "
                    "given some devices, cores of the others)", also=(SEVERITY_WARNING,)),
        FindingSpec("ND-ENV-002", "env-var-misconfig", SEVERITY_ERROR,
                    "NEURON_RT_NUM_CORES not a count, above this host's cores, or shadowed (a warning for blanks "
                    "around a count, an info when NEURON_RT_VISIBLE_CORES takes precedence)",
                    also=(SEVERITY_WARNING, SEVERITY_INFO)),
        FindingSpec("ND-ENV-003", "env-var-misconfig", SEVERITY_ERROR,
                    "NEURON_LOGICAL_NC_CONFIG not 1/2, or on a family without logical cores", also=(SEVERITY_WARNING,)),
        FindingSpec("ND-ENV-004", "env-var-misconfig", SEVERITY_WARNING,
                    "a per-process core count outside the trn1.32xlarge and trn1n.32xlarge collectives sets"),
    ),
)
CHECK = Check("host-env", "Environment",
              (RULE_SET, documented_env_vars.RULE_SET, resources.RULE_SET, compile_cache.RULE_SET,
               operating_system.RULE_SET), host_env_summary,
              needs=("system", "resources"))
