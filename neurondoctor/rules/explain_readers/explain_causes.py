"""The causes `explain` names that are not finding categories (pure data).

A finding's category is a closed list (docs/contracts.md §6): each names an area of `check` that can find it on a host.
Some texts users paste have a cause no area of a host can find, and forcing one of those categories on them would be a
wrong answer: a deprecation warning printed beside the real failure, a rank that lost its peer because the peer failed
first, a model given inputs it cannot take, devices an earlier run left running, the package repository's signing key.
`explain` names these with a cause of its own: its JSON carries `"category": null` and `"cause": NAME`, and its answer
still gives the ways out. A cause that some area can still help with names that area (check_areas.py AREAS).
"""

from __future__ import annotations

# name → what it means; docs/report.md ("What `explain` answers") describes each, docs/contracts.md §7 the JSON.
EXPLAIN_CAUSES: dict[str, str] = {
    "not-the-failure": "a warning or notice that is documented as harmless; the failure, if any, is elsewhere",
    "peer-failed-first": "this process lost its connection to another rank or node, which failed or exited first",
    "peer-late": "this process is waiting for another rank that has not come up yet (still compiling, still "
                 "starting); the wait is retried, not fatal",
    "model-input": "the model (or a kernel) was run with inputs or indices outside what it was built for: the "
                   "model's or the caller's bug, not the host's",
    "device-reset": "an earlier run left the Neuron devices running or in a bad state; reloading the driver resets "
                    "them",
    "numerical-error": "the device reported a numerical error (NaN, infinity) while executing the model",
    "package-repo-key": "the Neuron OS package repository's signing key on this host is missing or expired",
    "python-dependency-missing": "a Python package the job needs, not part of the Neuron SDK, is not installed in "
                                 "the environment that ran it",
    "framework-api-change": "the script calls a framework API the installed release does not have (removed, "
                            "renamed or not yet added)",
    "missing-import": "the script loads a compiled Neuron model without importing the package that registers its "
                      "operators",
    "unsupported-config": "a code path or option the library does not support on this device (a GPU-only path, a "
                          "feature it refuses on XLA devices)",
    "k8s-scheduling": "Kubernetes cannot place the pod because of its placement rules (affinity, selector, taints), "
                      "not for lack of Neuron devices",
    "network-config": "the host's network setup stops the collectives' bootstrap (no interface reaches the peer)",
    "package-held": "the OS package manager holds the packages (apt-mark hold, yum versionlock) and will not change "
                    "them",
}


def is_explain_cause(name: str) -> bool:
    return name in EXPLAIN_CAUSES
