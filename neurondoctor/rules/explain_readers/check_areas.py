"""Which areas of `check` can tell the cause of an explained failure on this host (pure): a category → the check
ids whose findings answer it (rules/registry.py CHECKS). A category with no area (a compile failure, an operator)
is about the model, not the host: `explain` then runs no check.
"""

from __future__ import annotations

_DEVICES = ("hardware", "driver", "devices")
_DRIVER = ("driver",)
_RUNTIME = ("driver", "runtime")
_FRAMEWORK = ("python-env", "neuron-release", "pytorch-stack")

AREAS: dict[str, tuple[str, ...]] = {
    "device-missing": _DEVICES, "device-permission": _DEVICES, "cores-busy": _DEVICES,
    "driver-missing": _DRIVER, "driver-not-loaded": _DRIVER, "dkms-build": _DRIVER, "driver-stale": _DRIVER,
    "driver-runtime-mismatch": _RUNTIME, "tools-missing": _RUNTIME,
    "runtime-compiler-mismatch": ("runtime", "neuron-release"), "mixed-sdk-release": ("runtime", "neuron-release"),
    "framework-pin-mismatch": _FRAMEWORK, "stock-torch-conflict": _FRAMEWORK, "framework-missing": _FRAMEWORK,
    "unknown-version": _FRAMEWORK, "end-of-support": _FRAMEWORK, "instance-unsupported": _FRAMEWORK,
    "wrong-pip-index": ("pip-index", "pytorch-stack"),
    "python-unsupported": ("python-env", "neuron-release"), "broken-venv": ("python-env",),
    "shadowing": ("python-env",),
    "env-var-misconfig": ("host-env",), "resource": ("host-env",), "compile-cache": ("host-env",),
    "os-unsupported": ("host-env",),
    "hardware-error": ("hardware",),
    # causes of explain's own (explain_causes.py) that an area still helps with: who holds the devices, the driver
    "device-reset": _DEVICES, "package-repo-key": ("driver", "runtime"),
    "package-held": ("driver", "runtime"),
    "python-dependency-missing": ("python-env",), "framework-api-change": _FRAMEWORK,
}


# The area whose findings name a package version's known bug (manifests/package-fixes.json: runtime 2.35.30.0's DMA
# race, fixed in 2.35.33.0, "can hang the TPB AXI fabric"), and the categories whose texts can be such a bug's
# symptom: the runtime's hang and timeout messages are read as hardware errors (nrt-troubleshoot's table).
KNOWN_BUG_AREA = "neuron-release"
_KNOWN_BUG_SYMPTOMS = frozenset({"hardware-error"})


def known_bugs_answer(category: str) -> bool:
    return category in _KNOWN_BUG_SYMPTOMS


def areas_for(category: str) -> tuple[str, ...]:
    return AREAS.get(category, ())
