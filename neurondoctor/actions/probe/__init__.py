"""Probes that need torch: shipped scripts run *in the target environment* as subprocesses (ARCHITECTURE.md §2)."""
