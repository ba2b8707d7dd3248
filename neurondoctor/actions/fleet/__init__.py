"""`fleet summarize`: per-node reports merged into drift and failing findings."""
