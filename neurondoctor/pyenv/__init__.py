"""Python environments: static (`--venv`) and live (`--python`) inspection (docs/contracts.md §4)."""
