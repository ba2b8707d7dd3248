"""The command line: `main` (the entry points), `app` (every command, one typer application), one module per
command or group, and `invocation` (what they all share)."""
