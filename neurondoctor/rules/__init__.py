"""Rules: pure functions from facts and release data to findings (ARCHITECTURE.md §6)."""
