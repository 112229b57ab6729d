"""Eager steps a tensor in no more passes over memory than torch's for-loop implementation of the same
algorithm (`foreach=False, fused=False`): the kernels and the allocations of one parameter's step, counted
under a dispatch mode (the structure behind the eager table of benchmarks/bench_optimizers.py)."""

from __future__ import annotations

import math

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import optreg
import optreg.stages.ops as ops_module
from optreg.stages.ops import EAGER, _operand

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


# -------------------------------------------------------------------------------------------------
# a host scalar as a tensor operand (`optreg.stages.ops._operand`)
# -------------------------------------------------------------------------------------------------
# the values cover ordinary ones, float32's rounding, its subnormals and its overflow, and the values that
# stay Python numbers (a zero of either sign, the non-finite ones)
VALUES = [0.9, 1 / 3, -2.5e-3, 0.1 + 0.2, 1e-45, 1e-300, 3.4e38, 1e39, -1e39, 0.0, -0.0, math.inf, -math.inf,
          math.nan]
OPS = {
    "mul_": (lambda ops, x, s: ops.mul_([x], s)[0], lambda x, s: x.mul_(s)),
    "div_": (lambda ops, x, s: ops.div_([x], s)[0], lambda x, s: x.div_(s)),
    "add_": (lambda ops, x, s: ops.add_([x], s)[0], lambda x, s: x.add_(s)),
    "mul": (lambda ops, x, s: ops.mul([x], s)[0], lambda x, s: x * s),
    "div": (lambda ops, x, s: ops.div([x], s)[0], lambda x, s: x / s),
}


@pytest.mark.parametrize("op", OPS)
def test_a_scalar_operand_gives_atens_numbers_bit_for_bit(op):
    ours, atens = OPS[op]
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1000, generator=g) * torch.logspace(-40, 38, 1000)
    x[:4] = torch.tensor([0.0, -0.0, math.inf, math.nan])
    for s in VALUES:
        got, want = ours(EAGER, x.clone(), s), atens(x.clone(), s)
        assert torch.equal(got.view(torch.int32), want.view(torch.int32)), (op, s)  # NaN and -0.0 included
        formed = _operand(x, s)
        assert isinstance(formed, torch.Tensor) == (s != 0.0 and math.isfinite(s)), s


class _Seen(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_only_a_plain_float32_cpu_tensor_takes_a_formed_operand():
    x = torch.ones(3)
    assert isinstance(_operand(x, 0.5), torch.Tensor) and _operand(x, 0.5) is _operand(x, 0.5)
    assert _operand(torch.nn.Parameter(x), 0.5) is _operand(x, 0.5)
    assert _operand(x, 2) == 2 and type(_operand(x, 2)) is int  # an int stays the int ATen gets
    for other in (x.double(), x.bfloat16(), x.half(), torch.ones(3, device="meta"), x.as_subclass(_Sub)):
        assert _operand(other, 0.5) == 0.5 and type(_operand(other, 0.5)) is float, other.dtype
    with _Seen():  # a mode sees Python numbers: a tensor formed outside it would be foreign to it
        assert type(_operand(x, 0.5)) is float


class _Sub(torch.Tensor):
    pass


def test_the_formed_operands_are_bounded():
    x = torch.ones(3)
    for i in range(ops_module._SCALARS_KEPT + 10):
        _operand(x, 1.0 + i / 1024)
    assert 0 < len(ops_module._SCALARS) <= ops_module._SCALARS_KEPT
    assert _operand(x, 0.75).item() == 0.75


@pytest.mark.parametrize("name,torch_cls,kw", CASES, ids=[c[0] for c in CASES])
def test_a_tensor_stepped_alone_gets_the_numbers_of_python_floats(name, torch_cls, kw, monkeypatch):
    """A tensor above eager's batch size steps alone, in a batch of its own: the cached operands give the
    numbers of the Python floats bit for bit there too (the matrix checks every chain's batched tensors)."""
    g = torch.Generator().manual_seed(1)
    start, grads = torch.randn(N, generator=g), [torch.randn(N, generator=g) for _ in range(3)]
    runs = []
    for formed in (True, False):
        if not formed:
            monkeypatch.setattr(ops_module, "_operand", lambda x, s: s)
        p = torch.nn.Parameter(start.clone())
        opt = optreg.configure_optimizer(name, [p], **kw)
        for grad in grads:
            p.grad = grad.clone()
            opt.step()
        runs.append(p.detach())
    assert not torch.equal(runs[0], start)
    assert torch.equal(runs[0].view(torch.int32), runs[1].view(torch.int32))
