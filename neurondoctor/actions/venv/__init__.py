"""`venv create`: the plan (exact pins), the build (uv or pip into a temporary sibling), the guard, the command."""
