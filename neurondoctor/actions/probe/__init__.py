"""Probes that need torch: shipped scripts run *in the target environment* as subprocesses (docs/contracts.md §2)."""
