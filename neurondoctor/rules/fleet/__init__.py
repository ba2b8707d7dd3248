"""The cluster preflight's rules: what nodes of one allocation must have in common (`fleet check --slurm`)."""
