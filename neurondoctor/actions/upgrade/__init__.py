"""`upgrade`: the plan that moves a host and its environments to another Neuron release, its run, its rollback."""
