"""`check`: one run of the collectors and rules into a report, and `--fix`, which applies its plans."""
