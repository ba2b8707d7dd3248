"""Host collectors: everything read from the tree under `--root` (docs/contracts.md §3)."""
