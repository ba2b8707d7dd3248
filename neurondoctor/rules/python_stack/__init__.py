"""Python environments and the Neuron stack in them: the areas Python environment, Neuron release, PyTorch stack and
Package index, with the release detection and torch build facts they share."""
