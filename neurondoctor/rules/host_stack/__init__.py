"""Below Python: the areas Neuron hardware, Driver, Runtime & tools, Devices & cores and Environment, with the OS
package commands their fixes share (`os_commands`) and the host's own release (`host_release`)."""
