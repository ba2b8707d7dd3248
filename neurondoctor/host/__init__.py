"""Host collectors: everything read from the tree under `--root` (ARCHITECTURE.md §3)."""
