"""neurondoctor: checks that the layers of an AWS Neuron host agree, and says the exact fix."""

__version__ = "0.1.0"
