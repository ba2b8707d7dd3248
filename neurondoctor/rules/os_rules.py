"""os-unsupported: an OS or kernel the Neuron runtime and driver are not tested on (compat.json
`supported_os`, `unsupported_os`, `minimum_kernel`; release-notes/components/runtime.rst)."""

from __future__ import annotations

from neurondoctor.neuron_version import release_tuple
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding


def unsupported_os(ctx: RuleContext) -> list[Finding]:
    """ND-OS-001/002: the OS is not a tested one (warning) or one the runtime dropped; the kernel is too old."""
    snapshot = ctx.facts.host.snapshot
    if not snapshot.has_neuron_hardware and not snapshot.packages:
        return []
    os_id, version = snapshot.os.id or "", snapshot.os.version_id or ""
    findings = []
    dropped = ctx.catalog.compat.get("unsupported_os", {}).get(os_id, {}).get(version)
    supported = ctx.catalog.compat.get("supported_os", {})
    name = snapshot.os.pretty_name or f"{os_id} {version}".strip() or "unknown OS"
    if dropped:
        findings.append(Finding(id="ND-OS-001", category="os-unsupported", severity=SEVERITY_ERROR,
                                title=f"{name} is not supported by current Neuron releases", detail=str(dropped),
                                evidence={"os": os_id, "version": version},
                                fix=["# move to Ubuntu 24.04 or Amazon Linux 2023 (Neuron DLAMIs: Ubuntu 24.04)"]))
    elif os_id and version not in supported.get(os_id, []):
        findings.append(Finding(id="ND-OS-001", category="os-unsupported", severity=SEVERITY_WARNING,
                                title=f"{name} is not an OS the Neuron runtime is tested on",
                                detail=str(supported.get("about", "")),
                                evidence={"os": os_id, "version": version}, fix=[]))
    minimum = str(ctx.catalog.compat.get("minimum_kernel", "0"))
    if snapshot.kernel and release_tuple(snapshot.kernel)[:2] < release_tuple(minimum):
        findings.append(Finding(id="ND-OS-002", category="os-unsupported", severity=SEVERITY_ERROR,
                                title=f"kernel {snapshot.kernel} is older than {minimum}, the driver's minimum",
                                detail="The Neuron driver needs kernel 5.10 or newer (announce-no-support-al2.rst).",
                                evidence={"kernel": snapshot.kernel}, fix=[]))
    return findings


RULE_SET = RuleSet(
    rules=(unsupported_os,),
    findings=(
        FindingSpec("ND-OS-001", "os-unsupported", SEVERITY_WARNING,
                    "an OS the Neuron runtime is not tested on, or one it dropped"),
        FindingSpec("ND-OS-002", "os-unsupported", SEVERITY_ERROR, "a kernel older than the driver's minimum"),
    ),
)
