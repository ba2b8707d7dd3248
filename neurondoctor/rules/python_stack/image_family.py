"""An AWS container image on an instance family it is not for (ND-SUP-003).

AWS's Neuron images are published per instance family: the image table of aws-neuron/deep-learning-containers names
the families each image supports (the vLLM Neuron images of 0.21 and later: trn2 and trn3 only), and announcements
end a kind of image on a family (PyTorch/XLA inference on Trn2 and Trn3 from Neuron 2.34). The image carries no
label naming its family, so it is known by what it does carry (host/container_image.py): the files its Dockerfile
copies in, and the line of the package it is built around (the vLLM Neuron checkout's release branch, else the
package as an environment in the image holds it). Which files and line name which image, and its families, is data
(manifests/support-ranges.json `images`).

The severity is the entry's, as for every published support rule (support_ranges.severity_of): AWS documents the
vLLM Neuron image as not running on Trn1 and Inf2 (an error); PyTorch/XLA inference on Trn2 and Trn3 as no longer
supported (a warning). The image is what the container runs, so a finding here is never lowered for an environment
the doctor found. Where the instance family is not known (an unpacked image judged with `--root`, no /sys of an
instance) nothing is judged: the image's identity is in the facts.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any, Optional

from neurondoctor.python_packaging import matches
from neurondoctor.rules.check import FindingSpec, RuleSet
from neurondoctor.rules.context import RuleContext
from neurondoctor.rules.finding import SEVERITY_ERROR, SEVERITY_WARNING, Finding
from neurondoctor.rules.fix import Fix, Note
from neurondoctor.rules.python_stack.end_of_support import release_in_effect
from neurondoctor.rules.python_stack.support_ranges import in_span, severity_of

if TYPE_CHECKING:
    from neurondoctor.facts.container_image import ContainerImage

VLLM_NEURON = "vllm-neuron"  # the package the vLLM images' /opt/vllm checkout installs


def _entries(ctx: RuleContext) -> Iterator[dict[str, Any]]:
    yield from (entry for entry in ctx.catalog.support_ranges.get("images", []) if isinstance(entry, dict))


def _line(ctx: RuleContext, image: ContainerImage, package: str) -> Optional[tuple[str, str, Optional[str]]]:
    """(the version of `package` the image is built around, where it was read, the release of the environment that
    holds it): the vLLM Neuron checkout's branch for vllm-neuron, else the first environment that holds it."""
    if package == VLLM_NEURON and image.vllm_branch and image.vllm_branch_source:
        return image.vllm_branch.removeprefix("release-"), image.vllm_branch_source, None
    for env in ctx.facts.environments:
        dist = env.effective_distributions().get(package)
        if dist is not None and not dist.placeholder:
            release, newer = release_in_effect(ctx, env)
            return dist.version, env.path, None if newer else release
    return None


def _release(ctx: RuleContext, from_environment: Optional[str]) -> Optional[str]:
    """The release the image is judged as: `--release`, else its own Neuron packages' (in a container the package
    database is the image's), else that of the environment holding the package."""
    return ctx.target_release or ctx.host_release().release or from_environment


def _finding(ctx: RuleContext, entry: Mapping[str, Any], version: str, read_from: str, release: str) -> Finding:
    family = ctx.facts.host.instance_family or ""
    families = ", ".join(entry["instances"])
    broken = severity_of(entry) == SEVERITY_ERROR
    way = (entry.get("way_out") or {}).get(family)
    steps = [Note("on the host, run the image AWS publishes for this family: {}", (str(way),)) if way else
             Note("the families each image is for: {}", (str(entry["source"]),))]
    return Finding(
        id="ND-SUP-003", category="instance-unsupported", severity=severity_of(entry),
        title=(f"this container is the {entry['image']} image ({entry['package']} {version}), which "
               + ("runs on " if broken else f"from Neuron {entry['releases']['from']} is supported on ")
               + f"{families} only, not on this {ctx.facts.host.instance_type}"),
        detail=(("AWS documents it as not running here" if broken else
                 "AWS no longer supports it here; it may still run, but problems are not fixed")
                + f" ({entry['source']}). Identified by {', '.join(entry['markers'])} and {entry['package']} "
                f"{version} ({read_from}), as the Dockerfile builds it ({entry['dockerfile']})."
                + (f" {entry['note']}" if entry.get("note") else "")),
        evidence={"image": entry["image"], "markers": list(entry["markers"]), "package": entry["package"],
                  "version": version, "read_from": read_from, "instances": list(entry["instances"]),
                  "instance_type": ctx.facts.host.instance_type, "release": release, "rule": entry["id"],
                  "dockerfile": entry["dockerfile"]},
        fix=Fix(steps),
        docs=[str(entry["source"])],
    )


def image_on_another_family(ctx: RuleContext) -> list[Finding]:
    """ND-SUP-003: the container's image is one AWS publishes for other instance families."""
    snapshot = ctx.facts.host.snapshot
    image, family = snapshot.image, ctx.facts.host.instance_family
    if image is None or family is None:
        return []
    findings = []
    for entry in _entries(ctx):
        if family in entry["instances"] or not set(entry["markers"]) <= set(image.markers):
            continue
        line = _line(ctx, image, str(entry["package"]))
        if line is None:
            continue
        version, read_from, env_release = line
        release = _release(ctx, env_release)
        if release is None or not in_span(release, entry) or matches(version, str(entry["versions"])) is not True:
            continue
        findings.append(_finding(ctx, entry, version, read_from, release))
    return findings


RULE_SET = RuleSet(
    rules=(image_on_another_family,),
    findings=(
        FindingSpec("ND-SUP-003", "instance-unsupported", SEVERITY_ERROR,
                    "an AWS container image on an instance family it is not for (an error where AWS documents it "
                    "as not running there, a warning where it is no longer supported there)",
                    also=(SEVERITY_WARNING,)),
    ),
)
