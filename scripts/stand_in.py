"""The stand-in model the config-format fixtures are recorded on (record_deepspeed.py, record_hf.py) and replayed
on (tests/test_format_deepspeed.py, tests/test_format_hf.py): a small module with the parameter names and module
types the frameworks' grouping rules look at (a LayerNorm module, a `norm` module of another type, biases,
an embedding), and the helpers both sides share: seeded gradients, the steps whose lr a fixture records.
"""

from __future__ import annotations

import zlib

import numpy as np
import torch
from torch import nn

WEIGHT_STEPS = 3   # optimizer steps whose weights a fixture records


class Scale(nn.Module):
    """An RMSNorm-like module of its own type: caught by name (`norm`), not by type."""

    def __init__(self, width: int):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(width))


class StandIn(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.embeddings = nn.Embedding(6, 4)
        self.dense = nn.Linear(4, 4)
        self.LayerNorm = nn.LayerNorm(4)
        self.norm = Scale(4)
        self.classifier = nn.Linear(4, 2)


def model() -> StandIn:
    return StandIn()


def grads(case: str, net: nn.Module, steps: int = WEIGHT_STEPS) -> list[dict[str, torch.Tensor]]:
    """Seeded float32 gradients for every parameter at each of `steps` steps (by the case's name)."""
    rng = np.random.default_rng(zlib.crc32(case.encode()))
    return [{n: torch.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)) for n, p in
             net.named_parameters()} for _ in range(steps)]


def recorded_steps(total: int, boundaries: list[int]) -> list[int]:
    """The steps whose lrs a fixture records: the first 20, every k-th (k = total // 40), each boundary ± 1, the
    last step."""
    k = max(1, total // 40)
    steps = set(range(min(20, total))) | set(range(0, total, k)) | {total - 1}
    for b in boundaries:
        steps |= {s for s in (b - 1, b, b + 1) if 0 <= s < total}
    return sorted(steps)


def run(name: str, net: nn.Module, optimizer, scheduler, steps: int, wanted: set, clip: float | None,
        betas: bool = False, zero_rows: dict[str, list[int]] | None = None) -> dict:
    """Step a framework's optimizer and scheduler as its training loop does: the lr of every (non-empty) group read
    before each optimizer step in `wanted` (and, with `betas` and an optimizer that has them, each group's betas); for the first WEIGHT_STEPS steps the seeded gradients (clipped to the
    global norm `clip` when > 0), the step, and the weights after it; the scheduler stepped after every step.
    `zero_rows`: parameter -> the rows whose gradient is zero at every step (an embedding row no batch uses).
    The fixture's init, grads, lrs and weights."""
    from fixture_io import flat

    groups = [g for g in optimizer.param_groups if g["params"]]
    grads_ = grads(name, net)
    for n, rows in (zero_rows or {}).items():
        for g in grads_:
            g[n][rows] = 0.0
    out = {"init": {n: flat(p.detach()) for n, p in net.named_parameters()}}
    out["grads"] = {n: [flat(g[n]) for g in grads_] for n in out["init"]}
    lrs, weights, moments = [], {n: [] for n in out["init"]}, []
    betas = betas and all("betas" in g for g in groups)
    for step in range(steps):
        if step in wanted:
            lrs.append([step, [float(g["lr"]) for g in groups]])
            if betas:
                moments.append([step, [[float(b) for b in g["betas"]] for g in groups]])
        if step < WEIGHT_STEPS:
            for n, p in net.named_parameters():
                p.grad = grads_[step][n].clone()
            if clip is not None and clip > 0:
                torch.nn.utils.clip_grad_norm_(net.parameters(), clip)
            optimizer.step()
            for n, p in net.named_parameters():
                weights[n].append(flat(p.detach()))
        if scheduler is not None:
            scheduler.step()
    return {**out, "lrs": lrs, "weights": weights, **({"betas": moments} if betas else {})}
