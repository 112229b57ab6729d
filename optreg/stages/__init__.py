"""Update stages: first-party optimizers as chains of small per-tensor transformations, the three
executions of a chain (eager, foreach, fused), and contiguous groups (one flat buffer per group).
See chain.py for the contract a stage keeps."""
