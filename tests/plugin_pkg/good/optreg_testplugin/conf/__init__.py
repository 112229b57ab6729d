"""Hydra config groups of optreg-testplugin (found through the `optreg.hydra_conf` entry point)."""
