"""The commands' libraries, one package per command family: check (run, --fix), venv, probe, bundle, health,
bootstrap, fleet. Each reuses the collectors, rules and reporters and never duplicates them."""
