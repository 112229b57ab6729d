"""A fused plan calls each chunk's compiled graph directly, without Dynamo's per-call work (`optreg.stages.direct`):
the same graph, so the same numbers as through Dynamo; only where the checks that stand in for Dynamo's guards
admit the call (sizes, shape guards, storage, gradients that own their memory, no mode active)."""

from __future__ import annotations

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

import optreg
import optreg.stages.execute as execute
from optreg.stages.direct import Compiled, _place
from optreg.stages.ops import unobserved

OPTIONS = {"cpp.dynamic_threads": True, "size_asserts": False}


def _params(sizes, seed=0):
    g = torch.Generator().manual_seed(seed)
    params = [torch.nn.Parameter(torch.randn(s, generator=g)) for s in sizes]
    for p in params:
        p.grad = torch.randn(p.shape, generator=g)
    return params


def _run(sizes, steps, name="oneflow.AdamW", **options):
    """`steps` fused steps of `name` over fresh parameters, the lr changing every step (as a schedule would)."""
    params = _params(sizes)
    opt = optreg.configure_optimizer(name, params, lr=1e-2, fused=True, **options)
    for step in range(steps):
        for p in params:
            p.grad = torch.randn(p.shape, generator=torch.Generator().manual_seed(100 + step)) * (1 + p.numel() % 3)
        opt.param_groups[0]["lr"] = 1e-2 * 0.9 ** step
        opt.step()
    return opt, params


def _plans(opt):
    return [plan for plan in opt._fused_plans.values() if plan]


def _refuse_dynamo(monkeypatch, opt):
    """Every Dynamo call of the plans' functions fails the test (what a direct call skips)."""
    for plan in _plans(opt):
        for chunk in plan.chunks:
            monkeypatch.setattr(chunk[0], "fn", lambda *args: pytest.fail("a call went through Dynamo"))


SIZES = [(8, 3), (5,), (7, 2), (9,), (3, 3, 2), (), (11,), (6,), (4, 5), (13,)]


def test_a_plan_calls_its_graphs_directly_with_dynamos_numbers(monkeypatch, chunk4):
    opt, direct = _run(SIZES, 2, weight_decay=0.1)
    assert all(graph is not None for plan in _plans(opt) for _, graph in plan.graphs)
    _refuse_dynamo(monkeypatch, opt)
    for step in range(2, 6):
        for p in direct:
            p.grad = torch.randn(p.shape, generator=torch.Generator().manual_seed(100 + step)) * (1 + p.numel() % 3)
        opt.param_groups[0]["lr"] = 1e-2 * 0.9 ** step
        opt.step()
    monkeypatch.undo()
    monkeypatch.setattr(execute, "CHUNK", 4)
    monkeypatch.setattr(execute, "_COMPILED", {})
    monkeypatch.setattr(execute, "unobserved", lambda: False)
    _, through_dynamo = _run(SIZES, 6, weight_decay=0.1)
    assert all(torch.equal(a, b) for a, b in zip(direct, through_dynamo))
    _, initial = _run(SIZES, 0)
    assert not any(torch.equal(a, b) for a, b in zip(direct, initial))   # the steps did move every weight


def test_each_chunk_calls_the_graph_traced_for_its_dtype(monkeypatch, chunk4):
    """One function, two graphs (float32 and float64 parameters): each chunk calls its own."""
    calls = []
    real = execute.FusedPlan._calls
    monkeypatch.setattr(execute.FusedPlan, "_calls", lambda *a: calls.append(list(real(*a))) or iter(calls[-1]))

    def run():
        params = _params([(8,), (9,), (10,), (11,)]) + [p.double() for p in _params([(5,), (6,), (7,), (12,)], 1)]
        params = [torch.nn.Parameter(p.detach()) for p in params]
        opt = optreg.configure_optimizer("oneflow.AdamW", params, lr=1e-2, fused=True)
        for step in range(3):
            for p in params:
                p.grad = torch.randn(p.shape, generator=torch.Generator().manual_seed(step), dtype=p.dtype)
            opt.step()
        return opt, params

    opt, direct = run()
    (plan,) = _plans(opt)
    fn = plan.chunks[0][0]
    assert len(fn.graphs) == 2 and all(chunk[0] is fn for chunk in plan.chunks)
    (_, first), (_, second) = plan.graphs
    assert first is not None and second is not None and first is not second
    single, double = (args for _, args, _ in calls[-1])
    assert first.admits(single) and not first.admits(double) and second.admits(double)
    monkeypatch.setattr(execute, "_COMPILED", {})
    monkeypatch.setattr(execute, "unobserved", lambda: False)
    _, through_dynamo = run()
    assert all(torch.equal(a, b) for a, b in zip(direct, through_dynamo))


def _branches(params, u, states, packed, extra=()):
    """A step that branches on a size, as a chain that factors large matrices does."""
    for p, g in zip(params, u):
        if p.shape[0] > 10:
            p.add_(g * packed[0])
        else:
            p.sub_(g * packed[0])


def test_a_guard_on_the_sizes_holds_before_a_graph_is_called():
    fn = Compiled(_branches, OPTIONS)
    packed = torch.tensor([2.0], dtype=torch.float64)
    large = ([torch.zeros(16)], [torch.ones(16)], [], packed)
    small = ([torch.zeros(4)], [torch.ones(4)], [], packed)
    fn(*large)
    (graph,) = fn.graphs
    assert graph.admits(large) and fn.graph_for(large) is graph
    assert not graph.admits(small) and fn.graph_for(small) is None   # s0 > 10 does not hold for 4
    fn(*small)
    assert len(fn.graphs) == 2 and fn.graph_for(small) is fn.graphs[1]
    again = ([torch.zeros(4)], [torch.ones(4)], [], packed)
    fn.graph_for(again)(again)
    assert torch.equal(again[0][0], torch.full((4,), -2.0))
    bigger = ([torch.zeros(32)], [torch.ones(32)], [], packed)
    fn.graph_for(bigger)(bigger)
    assert torch.equal(bigger[0][0], torch.full((32,), 2.0))


def test_a_tensor_given_twice_or_sharing_storage_is_not_admitted():
    fn = Compiled(_branches, OPTIONS)
    packed = torch.tensor([1.0], dtype=torch.float64)
    fn([torch.zeros(16), torch.zeros(12)], [torch.ones(16), torch.ones(12)], [], packed)
    (graph,) = fn.graphs
    p = torch.zeros(16)
    assert graph.admits(([p, torch.zeros(12)], [torch.ones(16), torch.ones(12)], [], packed))
    assert not graph.admits(([p, torch.zeros(12)], [p, torch.ones(12)], [], packed))   # p twice
    buffer = torch.zeros(28)
    shared = ([buffer[:16], buffer[16:]], [torch.ones(16), torch.ones(12)], [], packed)
    assert not graph.admits(shared)
    assert not graph.admits(([p, torch.zeros(12, dtype=torch.float64)], [torch.ones(16), torch.ones(12)], [],
                             packed))                                                  # another dtype
    assert not graph.admits(([p, torch.zeros(12)], [torch.ones(16), torch.ones(24)[::2]], [], packed))  # strided


def test_gradients_that_are_views_go_through_dynamo(monkeypatch, chunk4):
    opt, params = _run(SIZES[:4], 2)
    calls = []
    for plan in _plans(opt):
        for chunk in plan.chunks:
            real = chunk[0].fn
            monkeypatch.setattr(chunk[0], "fn", lambda *args, real=real: calls.append(1) or real(*args))
    buffer = torch.randn(sum(p.numel() for p in params))
    start = 0
    for p in params:                                 # DDP's gradient_as_bucket_view: views of one bucket
        p.grad = buffer[start:start + p.numel()].view(p.shape)
        start += p.numel()
    opt.step()
    assert len(calls) == 1
    for p in params:
        p.grad = p.grad.clone()
    opt.step()
    assert len(calls) == 1


class _Passthrough(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


def test_a_call_under_a_mode_goes_through_dynamo():
    assert unobserved()
    with _Passthrough():
        assert not unobserved()
    assert unobserved()


@pytest.mark.parametrize("name, place", [
    ("l_params_0_", "params[0]"), ("l_states_1_12_", "states[1][12]"), ("l_packed_", "packed"),
    ("l_extra_0_", "extra[0]"), ("l_layout_0_1_", None), ("s22", None), ("l_params_", "params"),
])
def test_dynamos_argument_names_read_as_places(name, place):
    assert _place(name) == place


def _step_with(opt, params, step):
    for p in params:
        p.grad = torch.randn(p.shape, generator=torch.Generator().manual_seed(100 + step))
    opt.step()


def test_a_plan_is_kept_while_its_tensors_stay_and_made_anew_when_one_changes(chunk4):
    """`FusedPlan.fits`, run every step: the same parameters, storage and state entries keep the plan; a state
    entry replaced, a parameter's storage swapped or a state's entries reordered make a new plan, which steps the
    new tensors as eager does."""
    fused_params, eager_params = _params(SIZES), _params(SIZES)
    fused = optreg.configure_optimizer("oneflow.AdamW", fused_params, lr=1e-2, fused=True)
    eager = optreg.configure_optimizer("oneflow.AdamW", eager_params, lr=1e-2)
    pairs = ((fused, fused_params), (eager, eager_params))
    step = 0

    def both():
        nonlocal step
        for opt, params in pairs:
            _step_with(opt, params, step)
        step += 1
        (plan,) = _plans(fused)
        return plan

    first = both()
    assert both() is first and both() is first
    changes = {
        "a state entry replaced": lambda opt, ps: opt.state[ps[0]].__setitem__("exp_avg", torch.ones_like(ps[0])),
        "a state's entries reordered": lambda opt, ps: opt.state[ps[3]].update(
            [(k, opt.state[ps[3]].pop(k)) for k in list(opt.state[ps[3]])[:1]]),
        "a parameter's storage swapped": lambda opt, ps: setattr(ps[1], "data", ps[1].data.clone()),
    }
    plan = first
    for what, change in changes.items():
        for opt, params in pairs:
            change(opt, params)
        assert both() is not plan, what
        plan = _plans(fused)[0]
        assert both() is plan, what
    for a, b in zip(fused_params, eager_params):
        torch.testing.assert_close(a, b, rtol=1e-6, atol=1e-7)
