"""Update stages: first-party optimizers as chains of small per-tensor transformations, and the three
executions of a chain (eager, foreach, fused). See chain.py for the contract a stage keeps."""
