"""env-var-misconfig from the docs as data (manifests/env-vars.json): a retired variable that is still set, and a
set variable whose value its page does not allow.

Only what a page states is judged. A retired variable the runtime ignores is a warning: nothing fails, the user's
intent silently does not apply. One that is still honoured (deprecated), or whose effect today no page states, is
an info. A value is judged only for a variable whose page gives the complete set of values; a name the data does
not list, or one whose values are "not stated", is never a finding.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from neurondoctor.neuron_version import release_tuple
from neurondoctor.release_data.schema import NOT_STATED
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_INFO, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Command, Fix, export, unset
from neurondoctor.strict_numbers import parse_count

if TYPE_CHECKING:  # the table's module is imported by the catalog when a rule first asks (catalog.env_var_table)
    from neurondoctor.release_data.env_var_table import DocumentedVariable, RetiredVariable

# Owners whose variables the host's own Neuron packages read: their retirement is judged against the host release.
_HOST_OWNERS = frozenset({"runtime", "collectives", "tools"})
# How people spell a switch they mean to turn on or off; the fix writes the documented 1 or 0 instead.
_ON_WORDS = frozenset({"yes", "y", "on", "enable", "enabled"})
_OFF_WORDS = frozenset({"no", "n", "off", "disable", "disabled"})
# Longer numbers are no size any documented variable takes (strict_numbers: ASCII digits only).
_MAX_DIGITS = 9


def shown_value(value: str) -> str:
    """A variable's value as a title shows it: whole when short, cut when someone set a megabyte."""
    return value if len(value) <= 40 else value[:37] + "..."


def _lists_any_set(ctx: RuleContext) -> bool:
    """Whether any variable set here is one the data lists: when none is, neither rule has anything to judge, and
    the table (its record classes, one record per variable) is not built on this run."""
    return not ctx.catalog.env_var_names.isdisjoint(ctx.facts.environ)


def _retired_status(ctx: RuleContext, retired: RetiredVariable) -> tuple[str, str, bool]:
    """(severity, what happens to it here, whether it is ignored here) from the data and the host's release."""
    if retired.effect == "ignored" and retired.retired_in:
        host = ctx.host_release().release if retired.owner in _HOST_OWNERS else None
        if host is None:
            return (SEVERITY_INFO, f"ignored from Neuron {retired.retired_in}; whether the Neuron software here reads "
                    "it is not known (its release is not known)", False)
        if release_tuple(host) >= release_tuple(retired.retired_in):
            return (SEVERITY_WARNING, f"ignored since Neuron {retired.retired_in} (this host runs {host})", True)
        return (SEVERITY_INFO, f"still read by this host's Neuron {host}, ignored from {retired.retired_in}", False)
    if retired.effect == "honoured":
        warned = ", with a warning" if retired.warns else ""
        return SEVERITY_INFO, f"{retired.deprecated_in}; still honoured{warned}", False
    return (SEVERITY_INFO, f"{retired.deprecated_in or f'retired in Neuron {retired.retired_in}'}; whether today's "
            "Neuron software reads it is not stated", False)


def _carries_over(ctx: RuleContext, equivalent: str, value: str) -> bool:
    """Whether `value` can be given to the equivalent as it is: only a number, to an equivalent that takes one. Any
    other value may be one the report cut or redacted, so it is never carried into a fix."""
    documented = ctx.catalog.env_var_table.documented(equivalent)
    return (documented is not None and documented.kind == "integer"
            and parse_count(value, max_digits=_MAX_DIGITS) is not None)


def _retired_fix(ctx: RuleContext, retired: RetiredVariable, value: str, ignored: bool) -> Fix:
    """Carry the value to a direct equivalent, or unset what is ignored; anything else would change what runs, so
    the detail names the way forward and no line is printed."""
    equivalent = retired.direct_equivalent
    if equivalent is not None and equivalent in ctx.facts.environ:
        return Fix([unset(retired.name)])
    if equivalent is not None and _carries_over(ctx, equivalent, value):
        return Fix([export(equivalent, value), unset(retired.name)])
    return Fix([unset(retired.name)] if ignored else [])


def _retired_finding(ctx: RuleContext, retired: RetiredVariable, value: str) -> Finding:
    severity, status, ignored = _retired_status(ctx, retired)
    return Finding(
        id="ND-ENV-005", category="env-var-misconfig", severity=severity,
        title=f"{retired.name} is set: {status}",
        detail=f"Its replacement: {retired.replacement} ({retired.source}).",
        evidence={"variable": retired.name, "value": value, "retired_in": retired.retired_in,
                  "deprecated_in": retired.deprecated_in or None, "replaced_by": list(retired.replaced_by)},
        fix=_retired_fix(ctx, retired, value, ignored))


def retired_variables(ctx: RuleContext) -> list[Finding]:
    """ND-ENV-005: a variable the docs retired (Runtime 1.x's NEURONCORE_GROUP_SIZES, implicit async mode's
    NEURON_RT_ASYNC_EXEC_MAX_INFLIGHT_REQUESTS) or deprecated, still set."""
    if not _lists_any_set(ctx):
        return []
    retired = ctx.catalog.env_var_table.retired
    return [_retired_finding(ctx, retired[name], ctx.facts.environ[name])
            for name in sorted(ctx.facts.environ) if name in retired]


def _value_fix(variable: DocumentedVariable, value: str) -> Command:
    """The switch the user meant, in the spelling the docs give (`yes` -> 1), else back to the default."""
    if variable.kind == "bool" and variable.values is not None and {"0", "1"} <= set(variable.values):
        word = value.strip().casefold()
        if word in _ON_WORDS:
            return export(variable.name, "1")
        if word in _OFF_WORDS:
            return export(variable.name, "0")
    return unset(variable.name)


def _value_finding(variable: DocumentedVariable, value: str, problem: str) -> Finding:
    fails = variable.invalid != NOT_STATED
    consequence = (f"The docs say: {variable.invalid}." if fails else
                   "What the software does with another value is not documented: the setting may not apply as "
                   "intended.")
    return Finding(
        id="ND-ENV-006", category="env-var-misconfig", severity=SEVERITY_ERROR if fails else SEVERITY_WARNING,
        title=f"{variable.name}={shown_value(value)!r} is {problem}",
        detail=f"{consequence} ({variable.source})",
        evidence={"variable": variable.name, "value": value, "owner": variable.owner, "kind": variable.kind},
        fix=Fix([_value_fix(variable, value)]))


def _problem(variable: Optional[DocumentedVariable], value: str) -> Optional[str]:
    return variable.value_problem(value) if variable is not None else None


def documented_values(ctx: RuleContext) -> list[Finding]:
    """ND-ENV-006: a value the variable's page does not allow (a boolean given `yes`, an unknown level)."""
    if not _lists_any_set(ctx):
        return []
    table = ctx.catalog.env_var_table
    findings: list[Finding] = []
    for name in sorted(ctx.facts.environ):
        variable = table.documented(name)
        value = ctx.facts.environ[name]
        problem = _problem(variable, value)
        if variable is not None and problem is not None:
            findings.append(_value_finding(variable, value, problem))
    return findings


RULE_SET = RuleSet(
    rules=(retired_variables, documented_values),
    findings=(
        FindingSpec("ND-ENV-005", "env-var-misconfig", SEVERITY_WARNING,
                    "a retired variable is set: ignored by this host's release (or, as an info, still honoured, "
                    "deprecated, or of a release not known here)", also=(SEVERITY_INFO,)),
        FindingSpec("ND-ENV-006", "env-var-misconfig", SEVERITY_WARNING,
                    "a variable set to a value its page does not allow (an error where the page says it fails)",
                    also=(SEVERITY_ERROR,)),
    ),
)
