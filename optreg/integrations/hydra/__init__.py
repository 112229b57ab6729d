"""Hydra: the builders `_target_` names (`support`) and the generated config groups (`configs`).
Nothing is imported here, so `import optreg` does not load Hydra."""
