"""Hydra SearchPathPlugin: puts optreg's config groups (and those of optreg plugins) on Hydra's search path."""
