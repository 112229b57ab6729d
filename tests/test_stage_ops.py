"""The Traced operations that `fused=True` compiles: what a form changes for speed keeps the numbers
(the optimizer matrix checks every chain against eager; these pin the forms themselves)."""

from __future__ import annotations

import math
import re

import pytest
import torch

from optreg.stages.ops import Ops, Stacked, Traced, rows_of_ones


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


@pytest.mark.parametrize("form", ["stacked", "factors"])
@pytest.mark.parametrize("shape", [(), (5,), (3, 4), (3, 1, 1)])
def test_a_realized_value_over_stacks_is_the_value(shape, form):
    """`Stacked.realize` and `Traced.realize_factors` (the max of 16 copies along a new last dimension)
    return each value exactly, in its shape, including NaN and -0.0."""
    v = torch.randn(shape, generator=torch.Generator().manual_seed(1))
    if v.dim():
        v.view(-1)[0] = float("nan")
        v.view(-1)[-1] = -0.0
    (out,) = Stacked().realize([v]) if form == "stacked" else Traced().realize_factors([v])
    assert out.shape == v.shape and torch.equal(out.nan_to_num(), v.nan_to_num())
    assert torch.equal(out.isnan(), v.isnan()) and torch.equal(out.signbit(), v.signbit())


def test_an_add_over_matrices_takes_its_alpha_through_their_rows_of_ones():
    """`Traced.add_` with a vector of ones (`rows_of_ones`) multiplies the alpha of a matrix, or of a stack of
    them, by a (…, 1, C) row of ones of its own sizes: the same numbers bit for bit, for a number, a 0-d
    float64 host scalar and a stack's per-member alpha; a vector takes the alpha as it is. (A number other
    than ±1 and powers of 2 gives x + y·alpha, as Inductor computes it, where eager ATen may fuse a
    multiply-add.)"""
    g = torch.Generator().manual_seed(2)
    mats, vec = [torch.randn(3, 6, 5, generator=g), torch.randn(6, 5, generator=g)], torch.randn(7, generator=g)
    ys = [torch.randn(3, 6, 5, generator=g), torch.randn(6, 5, generator=g), torch.randn(7, generator=g)]
    ones = rows_of_ones([*mats, vec])
    assert torch.equal(ones, torch.ones(15)) and rows_of_ones([vec]) is None
    assert Traced(ones)._row_of_ones(mats[0]).shape == (3, 1, 5) and Traced(ones)._row_of_ones(mats[1]).shape == (1, 5)
    member = torch.rand(3, 1, 1, generator=g) + 0.5
    for alpha in (-1.0, 1.0, 0.5, torch.tensor(-0.37, dtype=torch.float64)):
        expected = Ops().add_([t.clone() for t in (*mats, vec)], ys, alpha)
        got = Traced(ones).add_([t.clone() for t in (*mats, vec)], ys, alpha)
        assert all(torch.equal(a, b) for a, b in zip(got, expected))
    got = Traced(ones).add_([t.clone() for t in mats], ys[:2], 0.37)
    assert all(torch.equal(a, x + y * 0.37) for a, x, y in zip(got, mats, ys))
    (got,) = Stacked(ones).add_([mats[0].clone()], [ys[0]], [member])
    assert torch.equal(got, mats[0] + ys[0] * member)
    (got,) = Stacked(ones).add_([member.clone()], [member], 2.0)   # a per-member (3, 1, 1) tensor: its own row
    assert torch.equal(got, member * 3)


def _allocated_buffers(opt) -> list[tuple[str, ...]]:
    """The sizes of every buffer that the code Inductor writes for `opt`'s first step allocates
    (`empty_strided_cpu`), each a tuple of its sizes as written: a symbol (s0) or a number."""
    from unittest import mock
    from torch._inductor.graph import GraphLowering

    codes: list[str] = []
    with mock.patch.object(GraphLowering, "save_output_code", codes.append):
        opt.step()
    assert codes, "the step compiled nothing"
    return [tuple(d.strip() for d in dims.split(",") if d.strip())
            for code in codes for dims in re.findall(r"empty_strided_cpu\(\(([^)]*)\)", code)]


@pytest.mark.parametrize("contiguous", [False, True], ids=["per-tensor", "stacked"])
def test_mindspores_adafactor_compiles_without_a_full_size_buffer(contiguous, monkeypatch):
    """Fused, MindSpore's AdaFactor (with its first moment) writes the new moment and the parameters in the
    loop that reads the factored moment's factors: the compiled step allocates no buffer the size of the
    tensors it steps (without the rows of ones it allocated one per call and copied it)."""
    import optreg
    from optreg.stages import contiguous as contiguous_groups, execute

    monkeypatch.setattr(execute, "_COMPILED", {})   # compile here (Inductor's on-disk cache may still answer)
    monkeypatch.setattr(contiguous_groups, "STACK_ELEMENTS", 1 << 12)
    monkeypatch.setattr(torch, "get_num_threads", lambda: 2)
    g = torch.Generator().manual_seed(3)
    params = [torch.nn.Parameter(torch.randn(16, 24, generator=g)) for _ in range(4)]
    for p in params:
        p.grad = torch.randn(p.shape, generator=g)
    options = {"fused": True, "contiguous_params": True} if contiguous else {"fused": True}
    opt = optreg.configure_optimizer("mindspore.AdaFactor", params, beta1=0.9, **options)
    allocated = _allocated_buffers(opt)
    rank = 3 if contiguous else 2   # a stack of the four matrices, or one matrix a call
    full = [dims for dims in allocated if len(dims) == rank and all(d.startswith("s") for d in dims)]
    assert allocated and not full, f"full-size buffers {full} among {allocated}"


@pytest.mark.parametrize("name", ["oneflow.LAMB", "cerebras.Lamb", "mindspore.Lamb"])
def test_a_fused_lamb_over_large_tensors_computes_its_update_again_rather_than_store_it(name, monkeypatch):
    """Fused per tensor over tensors at or above `recompute_from` on a CPU, a LAMB's update, which its norm and the
    step both read, is computed in both loops (`execute._compile`, recompute) instead of stored in a temporary the
    size of the tensors, which each call paged in anew; smaller tensors keep Inductor's default."""
    import optreg
    from optreg.stages import execute

    def full_size_buffers(sizes):
        monkeypatch.setattr(execute, "_COMPILED", {})   # compile here (Inductor's on-disk cache may still answer)
        g = torch.Generator().manual_seed(4)
        params = [torch.nn.Parameter(torch.randn(s, generator=g)) for s in sizes]
        for p in params:
            p.grad = torch.randn(p.shape, generator=g)
        opt = optreg.configure_optimizer(name, params, lr=1e-3, weight_decay=0.01, fused=True)
        allocated = _allocated_buffers(opt)
        parts = [key[-1] for key in execute._COMPILED]
        return parts, [dims for dims in allocated if dims and all(d.startswith("s") for d in dims)]

    parts, full = full_size_buffers([(300, 120), (40_000,)])   # above 32,768 elements, a LAMB's recompute_from
    assert parts == ["recompute"] and not full, (parts, full)
    parts, full = full_size_buffers([(40, 7), (33,)])
    assert parts == [""] and full, (parts, full)


def test_fused_compiles_ask_for_combo_kernels_for_a_graph_on_a_gpu_only(monkeypatch):
    """A fused compile asks Inductor for combo kernels (`execute.GPU`: a chunk's per-tensor kernels launch together)
    for a graph whose inputs are on a GPU (`direct.on_gpu`), not on a CPU, where Inductor's scheduler would write
    the same code after a pass of its own. Here the graph is on the CPU, taken once for a GPU's."""
    from unittest import mock

    from torch._inductor.graph import GraphLowering
    from torch._inductor.scheduler import Scheduler

    import optreg
    from optreg.stages import direct, execute

    assert execute.GPU == {"combo_kernels": True}
    assert not direct.on_gpu([torch.ones(2), 3, torch.ones((), dtype=torch.int64)])

    def compiled_code(as_on_gpu: bool) -> tuple[list[str], int]:
        monkeypatch.setattr(execute, "_COMPILED", {})
        monkeypatch.setattr(direct, "on_gpu", lambda inputs: as_on_gpu)
        params = [torch.nn.Parameter(torch.ones(s)) for s in [(30, 12), (7,)]]
        for p in params:
            p.grad = torch.full_like(p, 0.5)
        opt = optreg.configure_optimizer("oneflow.AdamW", params, lr=1e-3, fused=True)
        codes: list[str] = []

        def keep(code: str) -> None:   # without its first line, "# AOT ID: ['<the graph's number>_inference']"
            codes.append(code.split("\n", 1)[1])

        grouped = mock.Mock(wraps=Scheduler.create_combo_kernel_nodes)
        with mock.patch.object(GraphLowering, "save_output_code", keep), \
                mock.patch.object(Scheduler, "create_combo_kernel_nodes", lambda *a, **k: grouped(*a, **k)), \
                torch._inductor.config.patch(force_disable_caches=True):   # Inductor writes the code anew
            opt.step()
        assert codes, "the step compiled nothing"
        return codes, grouped.call_count

    as_gpu, asked = compiled_code(True)
    on_cpu, not_asked = compiled_code(False)
    assert asked >= 1 and not_asked == 0
    assert as_gpu == on_cpu


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16])
def test_the_traced_norms_are_as_close_to_the_exact_norm_as_atens(dtype):
    """`Traced.norm` (each tensor's √Σx² in Inductor's loops), eager and compiled, is the tensor's dtype and as
    close to the exact norm (`math.fsum` of the squares) as `torch.linalg.vector_norm` is, or within `rtol`."""
    rtol = {torch.float32: 1e-6, torch.float64: 1e-13, torch.bfloat16: 2 ** -8}[dtype]
    g = torch.Generator().manual_seed(0)
    xs = [torch.randn(n, generator=g).to(dtype) for n in (1, 7, 40_000, 300_000)]
    xs.append(torch.randn((), generator=g).to(dtype))
    exact = [math.sqrt(math.fsum(v * v for v in x.double().reshape(-1).tolist())) for x in xs]
    bound = [max(abs(torch.linalg.vector_norm(x).item() - e), rtol * e) for x, e in zip(xs, exact)]
    eager = Traced().norm(xs)
    compiled = torch.compile(lambda ts: [n * 1 for n in Traced().norm(ts)], fullgraph=True, dynamic=True)(xs)
    for got in (eager, compiled):
        assert [n.dtype for n in got] == [dtype] * len(xs)
        errors = [abs(n.item() - e) for n, e in zip(got, exact)]
        assert all(err <= b for err, b in zip(errors, bound)), (errors, bound)
    assert Traced().norm([]) == []
