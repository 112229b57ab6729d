"""Integrations with other tools (Hydra). Nothing is imported here."""
