"""`venv create` planning: the exact package set of a release for a framework, and whether this Python can
have it. Pure: no I/O, so `--dry-run` and the build print the same plan and tests need no disk.

torch-neuronx pins torch to its own X.Y and an exact torch-xla (gh#875); libneuronxla must come from the same
release or fails with `Unknown flags in XLA_FLAGS` (gh#1012); 2.32.0 installs the 2.31 torch-neuronx
(compat.json `carryover`). Pairings the manifest lacks (torch-xla, torchvision) are in compat.json
`venv_torch_pairs`.
"""

from __future__ import annotations

from typing import Optional

from dataclasses import dataclass, field
from neurondoctor.neuron_version import major_minor, release_tuple
from neurondoctor.release_data.catalog import PackageEntry, ReleaseCatalog

FRAMEWORKS = ("pytorch", "pytorch-native")


class PlanError(ValueError):
    """The request cannot be met (unknown release, unsupported Python, no such torch); says what would."""


@dataclass(frozen=True)
class PlannedPackage:
    name: str
    version: str
    why: str

    @property
    def requirement(self) -> str:
        return f"{self.name}=={self.version}"


@dataclass
class VenvPlan:
    release: str
    framework: str
    python: str
    torch: str
    packages: list[PlannedPackage] = field(default_factory=list)
    index_url: Optional[str] = None
    extra_index_urls: list[str] = field(default_factory=list)
    find_links: list[str] = field(default_factory=list)
    chosen_because: Optional[str] = None  # why this release, when the user named none

    @property
    def no_index(self) -> bool:
        """Air-gapped: wheels from --find-links only, no index at all (pip would otherwise retry PyPI)."""
        return bool(self.find_links) and not self.index_url and not self.extra_index_urls

    def constraints_text(self) -> str:
        lines = [f"# neurondoctor venv create --release {self.release}: the pins this environment keeps.",
                 "# pip (via pip.conf) and uv (via UV_CONSTRAINT when activated) refuse to move them."]
        return "\n".join(lines + [package.requirement for package in self.packages]) + "\n"


def _newest(entries: list[PackageEntry]) -> PackageEntry:
    return max(entries, key=lambda entry: release_tuple(entry.version))


def _choose_torch_neuronx(catalog: ReleaseCatalog, release: str, torch: Optional[str],
                          stack: str) -> PackageEntry:
    """The torch-neuronx of `stack` (`xla`: 2.9 on every instance; `native`: TorchNeuron 2.13/2.14 on Trn2/Trn3,
    compat.json torch_frameworks `native`), for `torch` X.Y when given, else the newest."""
    entries = [entry for entry in catalog.entries(release, "torch-neuronx")
               if catalog.framework_stack("torch-neuronx", entry.version) == stack]
    if not entries:
        what = "TorchNeuron (the native torch-neuronx)" if stack == "native" else "PyTorch/XLA torch-neuronx"
        other = ("; it offers --framework " + ("pytorch" if stack == "native" else "pytorch-native")
                 if catalog.entries(release, "torch-neuronx") else "")
        raise PlanError(f"Neuron {release} has no {what}{other} (see `neurondoctor manifests show {release}`)")
    if torch is None:
        return _newest(entries)
    matching = [entry for entry in entries if major_minor(entry.version) == torch]
    if not matching:
        offered = ", ".join(sorted({major_minor(entry.version) or "?" for entry in entries}))
        raise PlanError(f"Neuron {release} has no torch-neuronx for torch {torch} (it offers torch {offered})")
    return _newest(matching)


def _check_python(python: str, entries: list[PackageEntry], release: str) -> None:
    for entry in entries:
        if entry.python and python not in entry.python:
            raise PlanError(f"Python {python} is not supported by {entry.manifest_name} {entry.version} in Neuron "
                            f"{release} (it supports {', '.join(entry.python)}); pass --python with one of those")


def plan_venv(catalog: ReleaseCatalog, release: str, python: str, framework: str = "pytorch",
              torch: Optional[str] = None) -> VenvPlan:
    """The pinned package set; raises PlanError before anything is created."""
    if framework not in FRAMEWORKS:
        raise PlanError(f"--framework {framework}: supported: {', '.join(FRAMEWORKS)}")
    if release not in catalog.releases:
        raise PlanError(f"--release {release}: not a known Neuron release (newest known: {catalog.latest})")
    if release in catalog.partial:  # pins the data does not have are never guessed
        raise PlanError(f"--release {release}: the data knows this release only in part (its compiler and other "
                        "versions are not published in it); run `neurondoctor manifests update` for AWS's whole list, "
                        f"or build the newest release known whole ({catalog.whole_latest})")
    stack = "native" if framework == "pytorch-native" else "xla"
    torch_neuronx = _choose_torch_neuronx(catalog, release, torch, stack)
    torch_version = catalog.framework_torch("torch-neuronx", torch_neuronx.version) or ""
    compilers = catalog.entries(release, "neuronx-cc")
    if not compilers:
        raise PlanError(f"Neuron {release} has no neuronx-cc")
    compiler = _newest(compilers)
    carried = f" (installed from {torch_neuronx.carried_from} by the official {release} instructions)" \
        if torch_neuronx.carried_from else ""
    packages = [PlannedPackage("torch-neuronx", torch_neuronx.version, f"Neuron {release}{carried}"),
                PlannedPackage("neuronx-cc", compiler.version, f"Neuron {release}")]
    if stack == "native":
        return _native_plan(catalog, release, python, torch_neuronx, compiler, torch_version, packages)
    libneuronxla = catalog.framework_entry(release, "libneuronxla")
    if libneuronxla is None:
        line = catalog.compat.get("venv_libneuronxla_line", "2.")
        raise PlanError(f"Neuron {release} lists no libneuronxla {line}x for torch-neuronx")
    _check_python(python, [torch_neuronx, compiler, libneuronxla], release)
    pairs = catalog.compat.get("venv_torch_pairs", {}).get(major_minor(torch_version) or "", {})
    packages += [
        PlannedPackage("libneuronxla", libneuronxla.version, f"Neuron {release}, the line torch-neuronx uses"),
        PlannedPackage("torch", torch_version, f"the torch torch-neuronx {torch_neuronx.version} is built for"),
        PlannedPackage("torch-xla", catalog.torch_xla_for(torch_version),
                       f"the torch-xla of torch {torch_version}"),
    ]
    if pairs.get("torchvision"):
        packages.append(PlannedPackage("torchvision", str(pairs["torchvision"]),
                                       f"the torchvision PyTorch pairs with torch {torch_version}"))
    return VenvPlan(release=release, framework=framework, python=python, torch=torch_version, packages=packages)


def _native_plan(catalog: ReleaseCatalog, release: str, python: str, torch_neuronx: PackageEntry,
                 compiler: PackageEntry, torch_version: str, packages: list[PlannedPackage]) -> VenvPlan:
    """TorchNeuron: torch-neuronx of torch's X.Y, the release's neuronx-cc and nki, and torch itself; no torch-xla
    and no libneuronxla (the native backend is a PrivateUse1 device, setup/pytorch/update-manual.rst 2.33 installs
    `torch-neuronx==2.14.*`, `neuronx-cc==2.*` and nki). It runs on Trn2/Trn3 with Python 3.12-3.14 only."""
    nki = catalog.entries(release, "nki")
    entries = [torch_neuronx, compiler] + ([_newest(nki)] if nki else [])
    _check_python(python, entries, release)
    if nki:
        packages.append(PlannedPackage("nki", _newest(nki).version, f"Neuron {release}"))
    where = ", ".join(torch_neuronx.instances) or "the instances its release lists"
    packages.append(PlannedPackage("torch", torch_version, f"the PyTorch TorchNeuron {torch_neuronx.version} is "
                                   f"built for (runs on {where})"))
    return VenvPlan(release=release, framework="pytorch-native", python=python, torch=torch_version,
                    packages=packages)


def newest_release_plan(catalog: ReleaseCatalog, python: str, framework: str = "pytorch",
                        torch: Optional[str] = None, family: Optional[str] = None) -> VenvPlan:
    """`venv create` without `--release`: the plan of the newest release the data knows whole that has this
    framework for this Python (and, where the host's instance family is known, whose torch-neuronx lists it). A
    release known in part is never chosen: its pins are not all known. The plan says why it was chosen."""
    for release in catalog.release_names:
        if release in catalog.partial:
            continue
        try:
            plan = plan_venv(catalog, release, python, framework=framework, torch=torch)
        except PlanError:
            continue
        entry = next((item for item in catalog.entries(release, "torch-neuronx") if item.name == "torch-neuronx"
                      and any(package.name == "torch-neuronx" and package.version == item.version
                              for package in plan.packages)), None)
        if family and entry is not None and entry.instances and family not in entry.instances:
            continue
        where = f" on {family}" if family else " (this host's instance family is not known)"
        plan.chosen_because = (f"--release not given: the newest release the data knows whole with a {framework} "
                               f"build for Python {python}{where}")
        return plan
    on = f" on {family}" if family else ""
    raise PlanError(f"no release the data knows whole has a {framework} build for Python {python}{on}; name one "
                    "with --release (`neurondoctor manifests list` lists them)")
