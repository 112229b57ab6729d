"""The stand-in model of the NeMo corpus (NeMo's ModelPT puts every parameter in one group, so only its size matters)
and the gradients of each recorded step; shared by scripts/record_nemo.py and tests/test_nemo_format.py."""

from __future__ import annotations

import torch


def model(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(4, 5), torch.nn.LayerNorm(5), torch.nn.Linear(5, 3))


def set_grads(m: torch.nn.Module, step: int) -> None:
    g = torch.Generator().manual_seed(2000 + step)
    for p in m.parameters():
        p.grad = torch.randn(p.shape, generator=g)
