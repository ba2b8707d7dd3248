"""Actions that change something because the user asked: `venv create` (and later bootstrap, bundle)."""
