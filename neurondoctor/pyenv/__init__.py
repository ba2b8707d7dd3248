"""Python environments: static (`--venv`) and live (`--python`) inspection (ARCHITECTURE.md §4)."""
