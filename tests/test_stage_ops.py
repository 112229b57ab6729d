"""The Traced operations that `fused=True` compiles: what a form changes for speed keeps the numbers
(the optimizer matrix checks every chain against eager; these pin the forms themselves)."""

from __future__ import annotations

import pytest
import torch

from optreg.stages.ops import Ops, Stacked, Traced


def _ulps(a: torch.Tensor, b: torch.Tensor) -> float:
    return float(((a - b).abs() / torch.finfo(a.dtype).eps / b.abs()).max())


def test_division_by_a_per_tensor_value_is_a_product_with_its_reciprocal():
    """x / y by a scalar or a stack's (B, 1, 1) per-member value is x·(1/y), within an ulp of the quotient;
    by a full tensor, and by a vector or a number 0, it stays a division (bit for bit)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 6, 5, generator=g)
    full = torch.rand(4, 6, 5, generator=g) + 0.5
    member = torch.rand(4, 1, 1, generator=g) + 0.5
    scalar = torch.tensor(0.37, dtype=torch.float64)
    traced, stacked = Traced(), Stacked()

    for ops, y in ((traced, scalar), (stacked, member), (traced, 3.0)):
        (out,) = ops.div([x], [y])
        assert _ulps(out, x / y) <= 1.0
        assert torch.equal(out, x * (1.0 / y if isinstance(y, float) else torch.reciprocal(y)))
    # a full tensor (also flat: a contiguous group's buffers), a vector, a number 0: divided
    for x_, y in ((x, full), (x.flatten(), full.flatten()), (x, full[0, 0]), (x, 0.0)):
        expected = x_ / y
        assert torch.equal(traced.div([x_], [y])[0], expected)
        assert torch.equal(traced.div_([x_.clone()], [y])[0], expected)
    (inplace,) = stacked.div_([x.clone()], [member])
    assert torch.equal(inplace, x * torch.reciprocal(member))
    assert torch.equal(Ops().div([x], [member])[0], x / member)   # eager divides


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_low_precision_per_member_reciprocal_is_taken_in_float32(dtype):
    """A stack's per-member divisor of 1e-5 in float16 has a reciprocal float16 cannot hold (1e5): it is
    taken in float32, and the quotient is x / y as float32 computes it."""
    x = torch.tensor([[[1e-3, -2.0]], [[0.5, 3.0]]], dtype=dtype)
    y = torch.tensor([[[1e-5]], [[3.0]]], dtype=dtype)
    (out,) = Stacked().div([x], [y])
    expected = x.float() / y.float()
    assert torch.isfinite(out).all() and _ulps(out.float(), expected) <= 1.0
    x0, y0 = torch.tensor([1e-4, -3e-4], dtype=dtype), torch.tensor(1e-5, dtype=dtype)   # a 0-d divisor likewise
    (out,) = Traced().div([x0], [y0])
    torch.testing.assert_close(out, (x0.float() / y0.float()).to(dtype), rtol=torch.finfo(dtype).eps, atol=0)


@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (3, 1, 1)])
def test_a_realized_value_over_stacks_is_the_value(shape):
    """`Stacked.realize` (the max of 16 copies along a new last dimension) returns each value exactly,
    in its shape, including NaN and -0.0."""
    v = torch.randn(shape, generator=torch.Generator().manual_seed(1))
    if v.dim():
        v.view(-1)[0] = float("nan")
        v.view(-1)[-1] = -0.0
    (out,) = Stacked().realize([v])
    assert out.shape == v.shape and torch.equal(out.nan_to_num(), v.nan_to_num())
    assert torch.equal(out.isnan(), v.isnan()) and torch.equal(out.signbit(), v.signbit())
