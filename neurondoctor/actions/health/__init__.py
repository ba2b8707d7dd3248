"""`health`: the scheduler-facing check (Slurm drain and resume, health.conf, status files, textfiles)."""
