"""`bootstrap`: the plan of the Neuron set-up for a release (pure), and its run (`--apply`)."""
