"""Names several layers must agree on: which environment variables are Neuron's, which OS packages are, and what
each device family is called. One list each, so `check`, `bundle` and the reporters cannot drift apart."""

from __future__ import annotations

# Variables whose values matter to the Neuron stack: `check` reports them (redacted), `bundle` collects their
# values; every other variable is collected by name only (a user's environment holds secrets).
NEURON_ENV_PREFIXES = ("NEURON_", "XLA_", "PJRT_", "AWS_NEURON_", "PT_XLA_", "FI_EFA_", "NCCL_", "PYTHON",
                       "VIRTUAL_ENV", "CONDA_PREFIX", "LD_LIBRARY_PATH")
# `bundle` adds the command search path and the Hugging Face offline switch, which explain missing tools and
# models in a support case but say nothing about the stack itself.
BUNDLE_ENV_PREFIXES = (*NEURON_ENV_PREFIXES, "PATH", "HF_HUB_OFFLINE")
# OS packages kept from dpkg/rpm databases: the Neuron stack and EFA (a full host has thousands of others).
NEURON_OS_PACKAGE_PREFIXES = ("aws-neuron", "efa")

# PCI device family -> the name a user knows (docs/neuron-facts.md §4).
DEVICE_NAMES = {"trn1": "Trainium1", "trn2": "Trainium2", "trn3": "Trainium3", "inf2": "Inferentia2",
                "inf1": "Inferentia1"}
