"""Pure judgments: facts and release data in, findings out.

The framework sits here (a `Finding` and its `Fix` value, the plan that merges fixes, the `Check` each area
declares, the `RuleContext` every rule receives, the registry of checks); the rules are grouped by the report areas
they serve: `host_stack` (hardware, driver, runtime, devices, the host environment), `python_stack` (environments,
release, the PyTorch stack, the package index) and `probes` (ops, canary, shapes, explain).
"""
