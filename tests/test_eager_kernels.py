"""Eager steps a tensor in no more passes over memory than torch's for-loop implementation of the same
algorithm (`foreach=False, fused=False`): the kernels and the allocations of one parameter's step, counted
under a dispatch mode (the structure behind the eager table of benchmarks/bench_optimizers.py)."""

from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import optreg

N = 100_000  # elements: one tensor alone in eager's loop, above ATen's single-thread grain


class Kernels(TorchDispatchMode):
    """The operations that touch a tensor of N elements, and how many of them allocate one."""

    def __init__(self) -> None:
        super().__init__()
        self.ops: list[str] = []
        self.allocations = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        tensors = [a for a in (*args, *(kwargs or {}).values()) if isinstance(a, torch.Tensor)]
        if any(t.numel() == N for t in tensors):
            self.ops.append(func.__name__)
            inputs = {t.untyped_storage().data_ptr() for t in tensors}
            if isinstance(out, torch.Tensor) and out.untyped_storage().data_ptr() not in inputs:
                self.allocations += 1
        return out


CASES = [
    ("oneflow.AdamW", torch.optim.AdamW, {"lr": 1e-3, "weight_decay": 0.01}),
    ("oneflow.Adam", torch.optim.Adam, {"lr": 1e-3}),
    ("oneflow.SGD", torch.optim.SGD, {"lr": 1e-3, "momentum": 0.9}),
    ("oneflow.Adagrad", torch.optim.Adagrad, {"lr": 1e-3}),
]


def _counted(opt, p):
    for _ in range(2):  # past the first step's state initialisation
        p.grad = torch.randn_like(p)
        opt.step()
    p.grad = torch.randn_like(p)
    with Kernels() as k:
        opt.step()
    return k


@pytest.mark.parametrize("name,torch_cls,kw", CASES, ids=[c[0] for c in CASES])
def test_eager_runs_no_more_kernels_than_torchs_for_loop(name, torch_cls, kw):
    p, q = torch.nn.Parameter(torch.randn(N)), torch.nn.Parameter(torch.randn(N))
    ours = _counted(optreg.configure_optimizer(name, [p], **kw), p)
    theirs = _counted(torch_cls([q], foreach=False, fused=False, **kw), q)
    assert ours.ops and theirs.ops
    assert len(ours.ops) <= len(theirs.ops), (ours.ops, theirs.ops)
    assert ours.allocations <= theirs.allocations, (ours.ops, theirs.ops)
