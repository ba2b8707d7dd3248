"""The driver of a container node (Bottlerocket, the EKS and ECS optimized AMIs): which release it belongs to, and
how the node moves on when it lags.

Managed images lag the SDK by design: the EKS accelerated AMI of July 2026 ships aws-neuronx-dkms 2.29.0.0
(awslabs/amazon-eks-ami CHANGELOG, v20260714), Bottlerocket's kernel kit builds the driver of an earlier release.
Such a node is not broken: the containers it runs bring their runtime, and the driver is backward compatible with
older runtimes (nrt-ts). So a lagging driver is information that names the release it matches, the documented
limits on which containers run on it (compat.json driver_runtime_breaks), and the way forward — the image's next
release — never an alarm. A driver older than every release the data knows is a warning: which containers run on
it is not known.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from neurondoctor.facts.host import HostSnapshot, NodeRole
from neurondoctor.neuron_version import names_a_release, normalize_neuron_version, release_tuple, release_words
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext, inf1_host
from neurondoctor.rules.finding import SEVERITY_INFO, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Fix, Note, note

if TYPE_CHECKING:
    from neurondoctor.facts.image_pin import ImageInf1Pin

DKMS = "aws-neuronx-dkms"
RUNTIME = "aws-neuronx-runtime-lib"
SYSFS_VERSION = "/sys/module/neuron/version"

# How each kind of node gets a newer driver: the image's next release, not a package install on the node.
_MOVE_ON = {
    "bottlerocket": ("update the node to a newer Bottlerocket release: its kernel kit carries the newer driver "
                     "(replace the node group's nodes, or Bottlerocket's in-place update)"),
    "eks": ("move the node group to a newer EKS optimized accelerated AMI: the amazon-eks-ami CHANGELOG names the "
            "aws-neuronx-dkms each release ships"),
    "ecs": "launch the container instances from a newer ECS optimized Neuron AMI",
    "oci-hook": "install the newer aws-neuronx-dkms on this host, then reload the driver with no container running",
}


def node_driver_version(snapshot: HostSnapshot) -> tuple[Optional[str], Optional[str]]:
    """(the driver version this node runs, where it was read): the loaded module's, else the module file's, else the
    driver package's (a node whose module is not loaded would load that one)."""
    if snapshot.loaded_driver_version:
        return normalize_neuron_version(snapshot.loaded_driver_version), SYSFS_VERSION
    module = snapshot.driver_module
    if module is not None and module.version:
        return normalize_neuron_version(module.version), module.path
    package = snapshot.packages.get(DKMS)
    if package is not None:
        return normalize_neuron_version(package.version), DKMS
    return None, None


def _runtimes(ctx: RuleContext, release: str) -> list[tuple[int, ...]]:
    return [release_tuple(entry.version) for entry in ctx.catalog.entries(release, RUNTIME)]


def _first_release_with_runtime(ctx: RuleContext, at_least: str) -> Optional[str]:
    """The oldest release whose runtime-lib is `at_least` or newer."""
    return next((release for release in reversed(ctx.catalog.release_names)
                 if any(runtime >= release_tuple(at_least) for runtime in _runtimes(ctx, release))), None)


def _last_release_below_runtime(ctx: RuleContext, below: str) -> Optional[str]:
    """The newest release whose runtime-lib is older than `below`."""
    return next((release for release in ctx.catalog.release_names
                 if any(runtime < release_tuple(below) for runtime in _runtimes(ctx, release))), None)


def known_drivers(ctx: RuleContext) -> list[str]:
    """Every aws-neuronx-dkms version the release data lists, oldest first."""
    versions = {entry.version for release in ctx.catalog.release_names for entry in ctx.catalog.entries(release, DKMS)}
    return sorted(versions, key=release_tuple)


def documented_limits(ctx: RuleContext, driver: str) -> list[str]:
    """The containers a documented incompatible pair keeps off this driver, one sentence each."""
    limits = []
    for rule in ctx.catalog.compat.get("driver_runtime_breaks", []):
        if "driver_below" in rule and release_tuple(driver) < release_tuple(rule["driver_below"]):
            first = _first_release_with_runtime(ctx, rule["runtime_at_least"])
            if first:
                limits.append(f"containers of Neuron {first} or newer (runtime-lib {rule['runtime_at_least']} and "
                              f"up) fail on it: {rule['symptom']} ({rule['source']})")
        if "driver_at_least" in rule and release_tuple(driver) >= release_tuple(rule["driver_at_least"]):
            last = _last_release_below_runtime(ctx, rule["runtime_below"])
            if last:
                limits.append(f"containers of Neuron {last} or older (runtime-lib below {rule['runtime_below']}) fail "
                              f"on it: {rule['symptom']} ({rule['source']})")
    return limits


def _newest_driver(ctx: RuleContext) -> tuple[Optional[str], str]:
    """The newest driver this node could move to, and how the title says it: the newest release's, or on Inf1 the
    newest of the line that still supports Inf1 (drivers after 2.24 do not: announce-correction-neuron-driver-
    support-inf1; the EKS and ECS AMIs pin Inf1 nodes to it)."""
    if inf1_host(ctx):
        inf1 = [entry.version for release in ctx.catalog.release_names for entry in ctx.catalog.entries(release, DKMS)
                if "inf1" in entry.instances]
        newest = max(inf1, key=release_tuple, default=None)
        return newest, f"the newest driver for Inf1 is {newest}"
    latest = ctx.catalog.whole_latest  # a release known in part may not list its driver
    newest = max((entry.version for entry in ctx.catalog.entries(latest, DKMS)), key=release_tuple, default=None) \
        if latest else None
    return newest, f"Neuron {latest} ships {newest}"


# The container nodes whose Neuron packages come with a managed image, and where that is written: no package is
# installed on such a node to move it to another release (`upgrade` refuses; its image's next release does it).
MANAGED_IMAGES = {
    "bottlerocket": "bottlerocket-os/bottlerocket SECURITY_FEATURES.md (immutable root, no package manager)",
    "eks": "awslabs/amazon-eks-ami templates/al2023/provisioners/install-neuron-driver.sh",
    "ecs": ("aws/amazon-ecs-ami scripts/enable-ecs-agent-inferentia-support.sh (`disable neuron package upgrades by "
            "deleting the yum repo`)"),
}


def move_on_words(role: NodeRole) -> str:
    """How this kind of node gets another driver, in words: its image's next release, not a package install."""
    return _MOVE_ON[role.platform]


def move_on(role: NodeRole) -> list[Note]:
    return [note(move_on_words(role))]


def image_pins_this_driver(ctx: RuleContext, driver: str) -> Optional[ImageInf1Pin]:
    """The image's Inf1 pin when this Inf1 node runs the driver line it installs (host/node_role.py)."""
    pin = ctx.facts.host.snapshot.inf1_pin
    if pin is None or not inf1_host(ctx) or not pin.installs(driver):
        return None
    return pin


def _pinned_words(pin: ImageInf1Pin) -> str:
    cached = f" ({', '.join(pin.cached)} in {pin.cache_dir})" if pin.cached else ""
    return (f"The image's boot service {pin.unit} ({pin.service}) installs aws-neuronx-dkms {pin.line}.* on every "
            f"Inf1 boot from the package it caches{cached}, as AWS's first notice on Inf1 drivers said "
            "(announce-eos-neuron-driver-support-inf1); AWS's correction (announce-correction-neuron-driver-support-"
            "inf1) names 2.24.* as the last Inf1 driver. ")


def _pinned_way(pin: ImageInf1Pin, newest: Optional[str]) -> list[Note]:
    return [note(f"nothing to do for the containers this driver runs: the image's current scripts pin Inf1 to "
                 f"{pin.line}.* too"),
            note(f"for {newest or 'the newest Inf1 driver'}, build your own image from this one: disable {pin.unit}, "
                 "install aws-neuronx-dkms-2.24.* with a no-op update-pciids first on PATH (its install script "
                 "calls update-pciids, which hangs on a node that cannot reach the PCI id database), as the "
                 "image's own script does")]


def module_only(snapshot: HostSnapshot) -> bool:
    """A container node whose driver is the module file its image built (Bottlerocket's kernel kit), with no driver
    package: a rule about building the driver (DKMS) says nothing of it, and its fixes are the image's."""
    return snapshot.node_role is not None and DKMS not in snapshot.packages and snapshot.driver_module is not None


def driver_release(ctx: RuleContext) -> Optional[str]:
    """The newest release whose driver is the one this node runs, or None when the data names none."""
    driver, _ = node_driver_version(ctx.facts.host.snapshot)
    if driver is None or not names_a_release(driver):
        return None
    return max(ctx.catalog.releases_with(DKMS, driver), key=release_tuple, default=None)


def node_driver_release(ctx: RuleContext) -> list[Finding]:
    """ND-DRV-005 (info): a container node's driver is an older release's; ND-DRV-006 (warning): older than every
    release the data knows."""
    snapshot = ctx.facts.host.snapshot
    role = snapshot.node_role
    driver, source = node_driver_version(snapshot)
    if role is None or driver is None or not names_a_release(driver):
        return []  # a `2.x.<build>.0` build names no release: the driver summary says so
    known = known_drivers(ctx)
    releases = ctx.catalog.releases_with(DKMS, driver)
    evidence: dict[str, object] = {"driver": driver, "read_from": source, "node": role.name,
                                   "node_evidence": role.evidence}
    if not releases:
        if not known or release_tuple(driver) >= release_tuple(known[0]):
            return []  # newer than the data (ND-REL-005's concern) or a build between releases: not judged here
        oldest = ctx.catalog.releases_with(DKMS, known[0])
        return [Finding(
            id="ND-DRV-006", category="unknown-version", severity=SEVERITY_WARNING,
            title=f"this {role.name} runs Neuron driver {driver}, older than any release the data knows",
            detail=(f"The oldest driver the release data lists is {known[0]} (Neuron {release_words(oldest)}). "
                    "Which container releases run on this driver is not known."),
            evidence={**evidence, "oldest_known": known[0]},
            fix=Fix(move_on(role)),
        )]
    newest, newest_words = _newest_driver(ctx)
    if newest is None or release_tuple(driver) >= release_tuple(newest):
        return []
    limits = documented_limits(ctx, driver)
    pin = image_pins_this_driver(ctx, driver)
    runs_on_it = (f"Containers of Neuron {release_words(releases)} run on it, and those of older releases as the "
                  "driver is backward compatible with older runtimes (nrt-ts)"
                  + (", except where AWS documents otherwise: " + "; ".join(limits) if limits else "") + ".")
    return [Finding(
        id="ND-DRV-005", category="driver-runtime-mismatch", severity=SEVERITY_INFO,
        title=(f"this {role.name} runs the driver its image puts on Inf1, {driver} (Neuron "
               f"{release_words(releases)}'s); {newest_words}" if pin else
               f"this {role.name} runs the driver of Neuron {release_words(releases)} ({driver}); {newest_words}"),
        detail=((_pinned_words(pin) + runs_on_it) if pin else
                runs_on_it + " A newer container may need a newer driver: the node gets it with its image's next "
                "release."),
        evidence={**evidence, "releases": list(releases), "latest_release": ctx.catalog.whole_latest,
                  "latest_driver": newest, "documented_limits": limits,
                  **({"image_inf1_pin": {"unit": pin.unit, "script": pin.service, "cached": pin.cached}}
                     if pin else {})},
        fix=Fix(_pinned_way(pin, newest) if pin else move_on(role)),
    )]


RULE_SET = RuleSet(
    rules=(node_driver_release,),
    findings=(
        FindingSpec("ND-DRV-005", "driver-runtime-mismatch", SEVERITY_INFO,
                    "a container node's driver is an older release's: which containers run on it, how to move on"),
        FindingSpec("ND-DRV-006", "unknown-version", SEVERITY_WARNING,
                    "a container node's driver is older than any release the data knows"),
    ),
)
