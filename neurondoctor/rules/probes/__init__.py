"""What the probes and `explain` judge: ops that fall back to CPU, the canary, graph compilations per shape, and error
texts matched to their way out."""
